// Types for server-provider.js (plain ESM JavaScript, shared with Jest's globalSetup and the bench).
export function freePort(): Promise<number>;
export function dockerAnswers(): Promise<boolean>;
export function provideServers(options?: { only?: string[] }): Promise<{ report: string[]; stop: () => Promise<void> }>;
export function startPostgresCluster(options?: {
  settings?: Record<string, string | number>;
}): Promise<{ url: string; source: string; stop: () => Promise<void> }>;
