import { BadRequestException } from '@nestjs/common';

/**
 * The version a client last saw, from `If-Match`: `3`, `"3"` or `W/"3"` (the ETag this API
 * sends is `"<version>"`). Absent or malformed is bad input; a mismatch is the caller's 412.
 */
export function parseIfMatch(header: string | undefined, required: boolean): number | undefined {
  if (header === undefined || header.trim() === '') {
    if (required)
      throw new BadRequestException(
        'If-Match header with the user\'s current version is required (e.g. If-Match: "1")',
      );
    return undefined;
  }
  const match = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(header);
  if (!match) throw new BadRequestException(`If-Match must be a version number such as "1", got '${header}'`);
  return Number(match[1]);
}

export const etagOf = (version: number): string => `"${version}"`;
