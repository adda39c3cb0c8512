import type { mongo } from 'mongoose';

// The servers of the drivers check, passed in by the test (see packaging.spec.ts).
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set for the drivers check`);
  return value;
}

/** A name no other run uses: the drivers check cleans up what it creates under it. */
export const RUN_ID = `pkg${process.pid}${Date.now().toString(36)}`;

/**
 * Removes what a check wrote under its own database (by deleting documents: the MongoDB-wire
 * emulator the tests may run on has neither dropDatabase nor drop).
 */
export async function clearCollections(db: mongo.Db, names: string[]): Promise<void> {
  for (const name of names) await db.collection(name).deleteMany({});
}
