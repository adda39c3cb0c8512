import { describe, expect, it } from '@jest/globals';
import { DddKitError, OperationTimeoutError } from '../errors.js';
import { isOperationTimeout, operationTimeoutProblem, withDeadline } from './with-deadline.js';

describe('withDeadline', () => {
  it('rejects with OperationTimeoutError, naming the operation and the deadline, when the work does not settle', async () => {
    const never = new Promise<never>(() => undefined);
    const error = await withDeadline(never, 20, 'redis prepare').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OperationTimeoutError);
    expect(error).toBeInstanceOf(DddKitError);
    expect(error).toMatchObject({
      code: 'OPERATION_TIMEOUT',
      operation: 'redis prepare',
      timeoutMs: 20,
      message: 'redis prepare: no answer within 20 ms',
    });
    expect(isOperationTimeout(error)).toBe(true);
    expect(isOperationTimeout(new Error('no answer within 20 ms'))).toBe(false);
  });

  it('passes on the answer or the failure of work that settles in time', async () => {
    await expect(withDeadline(Promise.resolve(7), 60_000)).resolves.toBe(7);
    const failure = new Error('refused');
    await expect(withDeadline(Promise.reject(failure), 60_000)).rejects.toBe(failure);
  });

  it('hands the work back as it is with Infinity', () => {
    const work = Promise.resolve(1);
    expect(withDeadline(work, Number.POSITIVE_INFINITY)).toBe(work);
  });

  it('accepts a positive integer or Infinity as operationTimeoutMs, nothing else', () => {
    expect(operationTimeoutProblem(2_000)).toBeUndefined();
    expect(operationTimeoutProblem(Number.POSITIVE_INFINITY)).toBeUndefined();
    for (const bad of [0, -1, 1.5, Number.NaN, '2000', null])
      expect(operationTimeoutProblem(bad)).toMatch(/^operationTimeoutMs must be a positive integer/);
  });
});
