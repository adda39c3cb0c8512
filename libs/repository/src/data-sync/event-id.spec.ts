import { describe, expect, it } from '@jest/globals';
import { newEventId } from './event-id.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newEventId', () => {
  it('gives UUIDs of version 7 whose first 48 bits are the time in ms', () => {
    const before = Date.now();
    const id = newEventId();
    const after = Date.now();
    expect(id).toMatch(UUID_V7);
    const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
  });

  it('never repeats within a process, and orders the ids of one process as they were made', () => {
    const ids = Array.from({ length: 200_000 }, () => newEventId());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
