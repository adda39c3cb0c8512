import type { DataSyncEvent } from '../data-sync/data-sync-event.js';

/** An event as an error message names it (`UPSERT counter c-1 v2`): whatever a caller passed, without its snapshot. */
export function describeEvent(event: unknown): string {
  if (event === null || typeof event !== 'object') return String(event);
  const { aggregate, id, version, type } = event as Partial<DataSyncEvent>;
  return `${String(type)} ${String(aggregate)} ${String(id)} v${String(version)}`;
}
