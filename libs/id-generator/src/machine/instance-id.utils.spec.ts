import { hostname } from 'node:os';
import { describe, expect, it } from '@jest/globals';
import { nextDefaultInstanceId } from './instance-id.utils.js';

describe('MachineIdHolder', () => {
  it('default instance IDs: host name and PID for the logs, and a random part, so replicas sharing both never collide', () => {
    const many = Array.from({ length: 1_000 }, () => nextDefaultInstanceId());
    expect(new Set(many).size).toBe(many.length);
    expect(many[0].startsWith(`${hostname()}:${process.pid}:`)).toBe(true);
    expect(many[0]).toMatch(/:[0-9a-f]{12}$/);
  });
});
