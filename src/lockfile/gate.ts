// The check that runs before anything is locked or installed: a project with validation errors
// is never hashed into a lockfile. Pure: a project in, a verdict out; callers decide what is fatal.
import { KiwiError } from "../errors.ts";
import { type Finding, type Verdict, verdictOf } from "../findings.ts";
import type { Project } from "../manifest/discover-io.ts";
import { indexTools, resolveChain } from "../resolve/chain.ts";

export interface GateOptions {
  strict?: boolean;
}

/**
 * Discovery problems plus every tool's executor chain (missing executor, version range, cycle).
 * Replaced by validate/checkProject once it lands, which covers these and every other rule.
 */
export function checkBeforeLock(project: Project, _options: GateOptions = {}): Verdict {
  const findings: Finding[] = [...project.findings];
  const index = indexTools(project.tools);
  const seen = new Map<string, string>();
  for (const tool of project.tools) {
    const first = seen.get(tool.id);
    if (first !== undefined) {
      findings.push({ rule: "universal/duplicate-id", severity: "error", file: tool.manifestFile, tool: tool.id, message: `the tool id "${tool.id}" is already used by ${first}`, hint: "rename one of them" });
      continue;
    }
    seen.set(tool.id, tool.manifestFile);
    if (tool.form !== "builtin") findings.push(...resolveChain(index, tool).findings);
  }
  return verdictOf(findings);
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
