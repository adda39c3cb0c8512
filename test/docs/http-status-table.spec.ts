// The HTTP status table is written once, in libs/repository/docs/http.md, and must say what the
// filter does: every code of the filter's map with its status (plus OPTIMISTIC_LOCK, whose status
// the caller picks), no code the filter does not map, and each error class named beside the code
// it really has.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DddKitError } from '@ddd-kit/core';
import * as core from '@ddd-kit/core';
import * as corePostgres from '@ddd-kit/core/postgres';
import * as idGenerator from '@ddd-kit/id-generator';
import * as idempotency from '@ddd-kit/idempotency';
import * as prepareKey from '@ddd-kit/prepare-key';
import * as repository from '@ddd-kit/repository';
import { dddKitHttpStatus } from '@ddd-kit/repository/http';
import { STATUS_BY_CODE } from '../../libs/repository/src/http/ddd-kit-exception.filter.js';
import { root } from './markdown-files.js';

const PAGE = 'libs/repository/docs/http.md';

export interface StatusRow {
  code: string;
  error: string; // the error class named in the row
  status: number; // the first status the row gives
}

/** The rows of the page's `| code | error | status |` table that name a code. */
export function statusRows(text: string): StatusRow[] {
  const lines = text.split('\n');
  const header = lines.findIndex((line) => /^\|\s*code\s*\|\s*error\s*\|\s*status\s*\|$/.test(line.trim()));
  if (header < 0) throw new Error(`${PAGE} has no | code | error | status | table`);
  const rows: StatusRow[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [code, error, status] = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim());
    const named = /^`([A-Z][A-Z0-9_]*)`$/.exec(code ?? '')?.[1];
    if (named === undefined) continue; // a row of errors without a code (driver errors, the rest)
    rows.push({
      code: named,
      error: /`(\w+Error)`/.exec(error ?? '')?.[1] ?? '',
      status: Number(/\b([1-5]\d\d)\b/.exec(status ?? '')?.[1]),
    });
  }
  return rows;
}

/** Every class the packages export, by name. */
const exported = new Map<string, unknown>(
  [core, corePostgres, idGenerator, idempotency, prepareKey, repository].flatMap((entry) => Object.entries(entry)),
);

/** The `code` an error class gives its instances (read from an instance built without arguments). */
function codeOf(name: string): string | undefined {
  const ErrorClass = exported.get(name);
  if (typeof ErrorClass !== 'function') return undefined;
  try {
    return (new (ErrorClass as new () => DddKitError)() as { code?: string }).code;
  } catch {
    return Reflect.construct(ErrorClass, [{}]).code as string | undefined;
  }
}

describe(`the HTTP status table (${PAGE})`, () => {
  const rows = statusRows(readFileSync(join(root, PAGE), 'utf8'));

  it('reads a table row as a reader does', () => {
    const text = [
      '| code | error | status |',
      '|---|---|---|',
      '| `A_CODE` | `SomeError` (when) | 409, or 412 |',
      '| — | anything else | 500 |',
      '',
      '| `NOT_IN_IT` | `X` | 400 |',
    ].join('\n');
    expect(statusRows(text)).toEqual([{ code: 'A_CODE', error: 'SomeError', status: 409 }]);
  });

  it("lists exactly the codes of the filter's map, each with its status", () => {
    const documented = Object.fromEntries(rows.map((row) => [row.code, row.status]));
    expect(documented).toEqual({ ...STATUS_BY_CODE, OPTIMISTIC_LOCK: 409 });
    expect(rows.length).toBe(Object.keys(documented).length); // no code twice
  });

  it('gives the status the filter answers for each code', () => {
    for (const { code, status } of rows) {
      const error = Object.assign(new DddKitError('a test error'), { code });
      expect({ code, status: dddKitHttpStatus(error) }).toEqual({ code, status });
    }
    expect(dddKitHttpStatus(Object.assign(new DddKitError('stale'), { code: 'OPTIMISTIC_LOCK' }), 412)).toBe(412);
  });

  it('names beside each code an exported error class that has that code', () => {
    expect(rows.map(({ code, error }) => ({ code, error, hasCode: codeOf(error) }))).toEqual(
      rows.map(({ code, error }) => ({ code, error, hasCode: code })),
    );
  });
});
