/** A response as a store keeps it: JSON, with the secret fields of its body sealed. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string | string[]>;
  /** The body, without its secret fields. */
  body: unknown;
  /** The secret fields, encrypted (see sealed-fields.ts). */
  sealed?: string;
}

/** Splits the named top-level fields off a body (only a plain object has fields to split). */
export function splitSecretFields(
  body: unknown,
  fields: readonly string[],
): { clear: unknown; secret: Record<string, unknown> | undefined } {
  if (fields.length === 0 || body === null || typeof body !== 'object' || Array.isArray(body))
    return { clear: body, secret: undefined };
  const clear: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  const secret: Record<string, unknown> = {};
  for (const field of fields) {
    if (Object.hasOwn(clear, field)) {
      secret[field] = clear[field];
      delete clear[field];
    }
  }
  return { clear, secret: Object.keys(secret).length > 0 ? secret : undefined };
}
