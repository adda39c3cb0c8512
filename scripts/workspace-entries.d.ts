// Types for workspace-entries.js (plain ESM JavaScript, read by jest.config.js too).
export declare const root: string;
export declare const PATHS_FILE: string;
export declare function workspaceEntries(base?: string): Array<{ specifier: string; source: string }>;
export declare function jestModuleNameMapper(base?: string): Record<string, string>;
export declare function tsconfigPaths(base?: string): Record<string, string[]>;
export declare function pathsFileText(base?: string): string;
