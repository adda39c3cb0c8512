import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Host name, PID and 48 random bits: readable in logs, and distinct for every holder even where
 * host name and PID repeat (replicas in containers are all PID 1 on hosts that may share a name;
 * several modules in one process).
 */
export function nextDefaultInstanceId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
}
