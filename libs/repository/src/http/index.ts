// `@ddd-kit/repository/http`: the HTTP edge of an application — ddd-kit's errors as HTTP answers
// (a Nest exception filter), versions as ETag and If-Match, and the drain of the HTTP server on
// shutdown.
export { DddKitExceptionFilter, dddKitHttpException, dddKitHttpStatus } from './ddd-kit-exception.filter.js';
export { etagOf, IfMatch, parseIfMatch, type IfMatchOptions } from './if-match.js';
export { ETag, ETagInterceptor, type ETagVersionOf } from './etag.interceptor.js';
export {
  DEFAULT_HTTP_DRAIN_GRACE_MS,
  DEFAULT_HTTP_DRAIN_IDLE_GRACE_MS,
  HttpDrain,
  type HttpDrainOptions,
} from './http-drain.js';
export { HttpDrainModule } from './http-drain.module.js';
