import { describe, expect, it } from '@jest/globals';
import { PgConnectionError } from '../errors.js';
import { isPostgresUnreachable } from './unreachable-error.js';

/** An error as node-postgres builds one from the server's ErrorResponse. */
const serverError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });

describe('isPostgresUnreachable', () => {
  it.each([
    ['a fast stop (57P01)', serverError('57P01', 'terminating connection due to administrator command')],
    [
      'an immediate stop (57P02)',
      serverError('57P02', 'terminating connection because of crash of another server process'),
    ],
    ['a server starting up (57P03)', serverError('57P03', 'the database system is starting up')],
    ['a connection exception (08006)', serverError('08006', 'connection failure')],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a reset connection', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['the connection ended under a statement', new Error('Connection terminated unexpectedly')],
    ['a client whose connection failed', new Error('Client has encountered a connection error and is not queryable')],
    ['no connection within connectionTimeoutMillis', new Error('timeout exceeded when trying to connect')],
    ['a start-up check', new PgConnectionError('cannot reach PostgreSQL')],
    ['the cause of a wrapping error', new Error('insert failed', { cause: serverError('57P01', 'terminating') })],
    [
      'one of an AggregateError (a dual-stack connect)',
      new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]),
    ],
  ])('%s: yes', (_what, error) => {
    expect(isPostgresUnreachable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', serverError('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error', serverError('42601', 'syntax error at or near')],
    ['a serialization failure', serverError('40001', 'could not serialize access')],
    ['a plain error', new Error('boom')],
    ['not an error', 'ECONNREFUSED'],
    ['undefined', undefined],
  ])('%s: no', (_what, error) => {
    expect(isPostgresUnreachable(error)).toBe(false);
  });

  it('a cycle of causes ends', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(isPostgresUnreachable(a)).toBe(false);
  });
});
