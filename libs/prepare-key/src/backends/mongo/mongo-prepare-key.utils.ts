import type { Connection } from 'mongoose';
import { DUPLICATE_KEY_CODE } from './mongo-prepare-key.constants.js';

const PLAIN = /^[A-Za-z0-9_-]*$/;

/**
 * A PrepareKey name as part of a collection name: letters, digits, `_` and `-` stay as they
 * are, everything else is percent-encoded (`$` and NUL are not allowed in collection names,
 * and distinct names must give distinct collections).
 */
export function encodeCollectionPart(name: string): string {
  return PLAIN.test(name)
    ? name
    : encodeURIComponent(name).replace(/[.!~'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function isDuplicateKeyError(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === DUPLICATE_KEY_CODE;
}

/** Mongoose's readyState of an open connection. */
const CONNECTED = 1;

/**
 * The `ping` command, answered by the server. A connection that is not open fails at once
 * (mongoose would otherwise wait for it to reconnect).
 */
export async function pingMongo(connection: Connection): Promise<void> {
  const db = connection.db;
  if (connection.readyState !== CONNECTED || db === undefined) {
    throw new Error(`the MongoDB connection is not open (mongoose readyState ${connection.readyState})`);
  }
  await db.command({ ping: 1 });
}
