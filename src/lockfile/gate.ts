// The check that runs before anything is locked or installed: a project with validation errors
// is never hashed into a lockfile. Pure: a project in, a verdict out; callers decide what is fatal.
import { KiwiError } from "../errors.ts";
import type { Verdict } from "../findings.ts";
import type { Project } from "../manifest/discover-io.ts";
import { checkProject } from "../validate/index.ts";

export interface GateOptions {
  strict?: boolean;
}

/**
 * Every pure layer of `kiwi check` (discovery, universal, per type, security, chains, parameters,
 * child_schemas). Interpreter syntax checks are left to `kiwi check`: they spawn a process per
 * script, which a lock of a thousand tools cannot afford on every run.
 */
export function checkBeforeLock(project: Project, options: GateOptions = {}): Verdict {
  const result = checkProject(project, { strict: options.strict });
  return { ok: result.ok, findings: result.findings };
}

/** Throws E_CHECK_FAILED (with the findings as details) when the verdict has errors. */
export function assertGatePassed(verdict: Verdict, action: string): void {
  if (verdict.ok) return;
  const errors = verdict.findings.filter((f) => f.severity === "error");
  throw new KiwiError("E_CHECK_FAILED", `${action} stopped: validation found ${errors.length} error${errors.length === 1 ? "" : "s"}`, {
    hint: 'fix the errors above (run "kiwi check" for the full report), then run the command again',
    details: { findings: verdict.findings },
  });
}
