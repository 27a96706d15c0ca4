// Resource limits for a tool run: kiwi's documented defaults and the merge with what the manifest
// declares (tool.yaml `limits`, magray `runtime_config`). Pure; the one table of defaults.
import type { Limits } from "./model.ts";

/** The limits every run gets when its manifest says nothing; the README's "Sandbox" table lists these. */
export const DEFAULT_LIMITS = {
  /** Private writable memory (RLIMIT_DATA): heap and anonymous mappings, not reserved address space. */
  memoryMb: 2048,
  /** CPU time (RLIMIT_CPU); wall-clock time is `timeoutMs`. */
  cpuSeconds: 300,
  /** Open file descriptors (RLIMIT_NOFILE). */
  openFiles: 1024,
  /** Processes and threads inside one sandbox (RLIMIT_NPROC counted in the sandbox's own namespaces). */
  processes: 128,
  /** stdout plus stderr kept from one run. */
  outputBytes: 16 * 1024 * 1024,
  /** Wall-clock time before the run is killed. */
  timeoutMs: 60_000,
} as const satisfies Required<Omit<Limits, "fuel">>;

export type LimitName = keyof typeof DEFAULT_LIMITS;

/** One limit with where its value came from. */
export interface ResolvedLimit {
  value: number;
  source: "declared" | "default";
}

export type ResolvedLimits = Record<LimitName, ResolvedLimit>;

/** Fills undeclared limits with kiwi's defaults, remembering which were declared. */
export function resolveLimits(declared: Limits): ResolvedLimits {
  const out = {} as ResolvedLimits;
  for (const name of Object.keys(DEFAULT_LIMITS) as LimitName[]) {
    const v = declared[name];
    out[name] = typeof v === "number" && Number.isFinite(v) && v > 0 ? { value: v, source: "declared" } : { value: DEFAULT_LIMITS[name], source: "default" };
  }
  return out;
}

/** Merges limits down a chain, primitive first: a later (child) link overrides each field it sets. */
export function mergeLimits(chain: readonly Limits[]): Limits {
  const out: Limits = {};
  for (const limits of chain) {
    for (const [k, v] of Object.entries(limits) as [keyof Limits, number | undefined][]) if (v !== undefined) out[k] = v;
  }
  return out;
}

/** The limits of a run: declared along the chain (a child overrides its parent) or kiwi's defaults (DEFAULT_LIMITS above). */
export interface PlanLimits {
  timeoutMs: number;
  /** SIGTERM to SIGKILL (subprocess only; 0 for http_client). */
  killGraceMs: number;
  /** subprocess: stdout + stderr bytes; http_client: response body bytes. */
  outputBytes: number;
  /** Resource limits of a subprocess, applied by the launcher (sandbox-plan.ts: prlimit). */
  memoryMb?: number;
  cpuSeconds?: number;
  openFiles?: number;
  processes?: number;
  /** Which limits the chain declared; the others are kiwi's defaults. */
  declared: string[];
  /** Where the timeout is written when not as limits.timeout_ms: a magray tool's runtime_config.max_execution_time_ms. */
  timeoutField?: string;
}
