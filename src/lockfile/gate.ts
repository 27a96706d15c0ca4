// The check that runs before anything is locked or installed: a project with validation errors
// is never hashed into a lockfile. Pure: a project in, a verdict out; callers decide what is fatal.
import { KiwiError } from "../errors.ts";
import type { Verdict } from "../findings/verdict.ts";
import type { Project } from "../manifest/discover-io.ts";
import { checkProject } from "../validate/check-project.ts";
import type { ChildSchemaMemo } from "../validate/layer.ts";

export interface GateOptions {
  strict?: boolean;
  /** Remembered child_schemas verdicts (validate/child-schema-memo-io.ts), shared with kiwi check. */
  childSchemaMemo?: ChildSchemaMemo;
  /** Remote tools the lockfile records that this checkout has not installed (their absence is named as such). */
  notInstalled?: ReadonlySet<string>;
}

/**
 * Every pure layer of `kiwi check` (discovery, universal, per type, security, chains, parameters,
 * child_schemas). Interpreter syntax checks are left to `kiwi check`: they spawn a process per
 * script, which a lock of a thousand tools cannot afford on every run.
 */
export function checkBeforeLock(project: Project, options: GateOptions = {}): Verdict {
  const result = checkProject(project, { strict: options.strict, childSchemaMemo: options.childSchemaMemo, notInstalled: options.notInstalled });
  return { ok: result.ok, findings: result.findings };
}

/**
 * The check for a tree that changed since one that passed: only the tools whose integrity
 * changed, plus every tool whose executor chain passes through a changed or removed tool (their
 * chain and child_schemas verdicts depend on it), are checked; chain rules still see the whole
 * tree. Every rule of validate/ that looks at another tool does so through executor links, so
 * the unchanged rest cannot have gained an error. `passed` maps tool id -> integrity.
 */
export function checkChangedSince(project: Project, passed: Readonly<Record<string, string>>, integrity: ReadonlyMap<string, string>, options: GateOptions = {}): Verdict {
  const touched = new Set<string>();
  for (const [id, digest] of integrity) if (passed[id] !== digest) touched.add(id);
  for (const id of Object.keys(passed)) if (!integrity.has(id)) touched.add(id);
  if (touched.size === 0) return { ok: true, findings: [] };
  const dependents = new Map<string, string[]>();
  for (const tool of project.tools) {
    if (!tool.executor) continue;
    const list = dependents.get(tool.executor.id) ?? [];
    list.push(tool.id);
    dependents.set(tool.executor.id, list);
  }
  const queue = [...touched];
  while (queue.length > 0) {
    for (const dep of dependents.get(queue.pop()!) ?? []) {
      if (!touched.has(dep)) {
        touched.add(dep);
        queue.push(dep);
      }
    }
  }
  const only = [...touched].filter((id) => integrity.has(id));
  if (only.length === 0) return { ok: true, findings: [] };
  const result = checkProject(project, { strict: options.strict, only, childSchemaMemo: options.childSchemaMemo, notInstalled: options.notInstalled });
  return { ok: result.ok, findings: result.findings };
}

/** Throws E_CHECK_FAILED (with the findings as details) when the verdict has errors. */
export function assertGatePassed(verdict: Verdict, action: string): void {
  if (verdict.ok) return;
  const errors = verdict.findings.filter((f) => f.severity === "error");
  throw new KiwiError("E_CHECK_FAILED", `${action} stopped: validation found ${errors.length} error${errors.length === 1 ? "" : "s"}`, {
    // Said so with --json too, where the findings are the error's details and nothing is printed above it.
    hint: `fix ${errors.length === 1 ? "it" : "them"} (run "kiwi check" for the full report), then run the command again`,
    details: { findings: verdict.findings },
  });
}
