import type { Connection, ConnectOptions } from 'mongoose';

/** The MongoDB part of RepositoryModule's options (the backend of MongooseRepository). */
export interface MongooseBackendOptions {
  /**
   * A MongoDB URI: the module opens a Mongoose connection for MongooseRepository subclasses
   * and closes it on shutdown.
   */
  uri?: string;
  /** Options for the connection opened from `uri`. */
  connectionOptions?: ConnectOptions;
  /**
   * Or an open Mongoose connection (from @nestjs/mongoose, say: inject `getConnectionToken()`
   * in forRootAsync). The module uses it and leaves closing it to its owner.
   */
  connection?: Connection;
}

/** Throws (through `fail`) for MongoDB options that cannot work. */
export function validateMongooseBackendOptions(options: MongooseBackendOptions, fail: (what: string) => never): void {
  const { uri, connection, connectionOptions } = options;
  if (uri !== undefined && connection !== undefined)
    fail('pass either uri (the module opens and closes a connection) or connection (yours), not both');
  if (uri !== undefined && (typeof uri !== 'string' || !/^mongodb(\+srv)?:\/\//.test(uri)))
    fail(`uri must be a mongodb:// or mongodb+srv:// URI, got ${JSON.stringify(uri)}`);
  if (connection !== undefined && (connection === null || typeof (connection as Connection).asPromise !== 'function')) {
    fail(
      "connection must be a Mongoose Connection (mongoose.createConnection(...), or @nestjs/mongoose's getConnectionToken())",
    );
  }
  if (connectionOptions !== undefined && (connectionOptions === null || typeof connectionOptions !== 'object'))
    fail('connectionOptions must be an object');
  if (uri === undefined && connectionOptions !== undefined) fail('connectionOptions needs uri');
}
