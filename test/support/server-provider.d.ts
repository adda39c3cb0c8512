// Types for server-provider.js (plain ESM JavaScript, shared with Jest's globalSetup and the bench).
export function freePort(): Promise<number>;
export function dockerAnswers(): Promise<boolean>;
export function provideServers(options?: { only?: string[] }): Promise<{ report: string[]; stop: () => Promise<void> }>;
export type PostgresStopMode = 'smart' | 'fast' | 'immediate';
export function startPostgresCluster(options?: { settings?: Record<string, string | number> }): Promise<{
  url: string;
  source: string;
  port: number;
  restart(options?: { mode?: PostgresStopMode }): Promise<void>;
  halt(options?: { mode?: PostgresStopMode }): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}>;
export function startRedisServer(options?: { extra?: string[] }): Promise<{
  url: string;
  port: number;
  readonly pid: number | undefined;
  kill(): Promise<void>;
  start(): Promise<void>;
  restart(): Promise<void>;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}>;
export function startRedisCluster(): Promise<{
  url: string;
  nodes: Array<{ host: string; port: number }>;
  source: string;
  flush(i: number): Promise<void>;
  stop(): Promise<void>;
}>;
/** A PostgreSQL with wal_level = logical: DATABASE_URL or the local server when it runs with it, else a throwaway cluster (see server-provider.js). */
export function provideLogicalPostgres(): Promise<{ url: string; source: string; stop(): Promise<void> }>;
