/** Types for scripts/build-if-stale.js (plain CommonJS, so npm scripts run it without a build). */
export declare const INPUTS: readonly string[];
export declare const STAMP: string;
export declare const LOCK: string;
export declare function newestInput(root?: string, inputs?: readonly string[]): { file: string | undefined; mtimeMs: number };
export declare function staleness(root?: string, inputs?: readonly string[]): { stale: boolean; reason: string };
export declare function acquireLock(root: string, options?: { pollMs?: number; timeoutMs?: number }): Promise<() => void>;
export declare function buildIfStale(options?: {
  root?: string;
  inputs?: readonly string[];
  build?: (root: string) => Promise<void>;
  log?: (line: string) => void;
}): Promise<{ built: boolean; reason: string }>;
