// Fault injection FOR TESTS ONLY: KIWI_TEST_FAULT makes a named write point fail with an errno
// (ENOSPC, EIO, EROFS, EACCES) or pause forever, so tests can prove "full disk" and "kill -9
// mid-write" leave nothing half-written. Unset (the normal case), every hook is a no-op.
import { writeFileSync } from "node:fs";

/** The write points a fault can target; README "Fault behaviour" lists them. */
export const FAULT_POINTS = [
  "blob-write", // after the first chunk of a blob's temp file
  "blob-rename", // a blob's temp file is complete, before its rename
  "index-write",
  "stat-write",
  "lockfile-write", // while writing the lockfile's temp file
  "lockfile-rename", // the lockfile's temp file is complete, before its rename
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

const ERRNOS = ["ENOSPC", "EIO", "EROFS", "EACCES"] as const;

interface Rule {
  action: (typeof ERRNOS)[number] | "pause";
  /** Fire on the n-th time the point is reached (1-based). */
  at: number;
  seen: number;
}

/** Fault hooks parsed from the environment. */
export interface Faults {
  hit(point: FaultPoint, path: string): void;
}

export const NO_FAULTS: Faults = { hit() {} };

/**
 * Parses `KIWI_TEST_FAULT=point=action[@n][,point=action…]`; `pause` touches
 * `KIWI_TEST_FAULT_MARKER` (if set) and blocks the process until it is killed.
 */
export function faultsFromEnv(env: Readonly<Record<string, string | undefined>>): Faults {
  const spec = env.KIWI_TEST_FAULT;
  if (!spec) return NO_FAULTS;
  const rules = new Map<string, Rule>();
  for (const part of spec.split(",")) {
    const m = /^([a-z-]+)=([A-Za-z]+)(?:@(\d+))?$/.exec(part.trim());
    if (!m) continue;
    rules.set(m[1]!, { action: m[2] as Rule["action"], at: Number(m[3] ?? 1), seen: 0 });
  }
  const marker = env.KIWI_TEST_FAULT_MARKER;
  return {
    hit(point, path) {
      const rule = rules.get(point);
      if (!rule || ++rule.seen !== rule.at) return;
      if (rule.action === "pause") {
        if (marker) writeFileSync(marker, `${point} ${path}\n`);
        // Block without spinning until the test kills the process.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
        return;
      }
      if ((ERRNOS as readonly string[]).includes(rule.action)) {
        const error = new Error(`${rule.action}: injected fault at ${point}, write '${path}'`) as NodeJS.ErrnoException;
        error.code = rule.action;
        error.syscall = "write";
        error.path = path;
        throw error;
      }
    },
  };
}
