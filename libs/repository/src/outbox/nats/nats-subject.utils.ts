/** The prefix of the default subject `<prefix>.<aggregate>.<type>`. */
export const DEFAULT_NATS_SUBJECT_PREFIX = 'ddd-kit';

/**
 * True for a subject a message can be published to: dot-separated non-empty tokens without
 * whitespace and without the wildcards `*` and `>` (those only make sense in subscriptions).
 */
export function isPublishableSubject(subject: string): boolean {
  if (subject.length === 0 || subject.length > 1024) return false;
  return subject.split('.').every((token) => token.length > 0 && !/[\s*>]/u.test(token));
}
