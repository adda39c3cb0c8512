// `@ddd-kit/repository/http`: ddd-kit's errors as HTTP answers (a Nest exception filter).
export { DddKitExceptionFilter, dddKitHttpStatus } from './ddd-kit-exception.filter.js';
