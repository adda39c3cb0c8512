import { hostname } from 'node:os';

let issued = 0;

/**
 * Host name and PID: distinct for every process, cluster workers included. A second module
 * in the same process (tests, several applications) gets a suffix, so no two holders in one
 * process ever share an instance ID (and so a machine ID).
 */
export function nextDefaultInstanceId(): string {
  const base = `${hostname()}:${process.pid}`;
  return issued++ === 0 ? base : `${base}#${issued - 1}`;
}
