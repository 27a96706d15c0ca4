// `kiwi check` end to end: read the project, start the interpreters on script entry points, run
// the pure layers meanwhile, then merge the syntax verdicts. The I/O wrapper around validate/check-project.ts.
import { existsSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { KiwiError } from "../errors.ts";
import { type Project, readProject } from "../manifest/discover-io.ts";
import { IGNORE_FILE, isRemoteTool } from "../manifest/model.ts";
import { suggest } from "../resolve/suggest.ts";
import { type CheckResult, checkProject, planSyntaxChecks, resolveScope, syntaxFindings, withFindings } from "../validate/check-project.ts";
import { readLockfile } from "../lockfile/fs.ts";
import type { Lockfile } from "../schema/lockfile.ts";
import type { RemoteRecords } from "../validate/layer.ts";
import { checkMcpToolNames, pinnedToolNames } from "../validate/mcp-names.ts";
import { runSyntaxChecks } from "../validate/syntax-io.ts";
import { withFileSecrets } from "../validate/file-secrets-io.ts";
import { openChildSchemaMemo } from "../validate/child-schema-memo-io.ts";
import { remoteToolsNotInstalled } from "./remote-installed-io.ts";

export interface CheckTreeOptions {
  cwd: string;
  /** kiwi's cache directory: script syntax verdicts are remembered there by content digest. */
  cacheDir?: string;
  env?: Readonly<Record<string, string | undefined>>;
  strict?: boolean;
  /** As typed on the command line: paths (relative to cwd) or tool ids. */
  targets?: readonly string[];
  /** Skip the interpreter checks (the library default is to run them). */
  syntax?: boolean;
  /** The time (ms) of this run: the ignore file's `expires` dates are judged against its day. */
  now?: number;
}

export interface CheckTreeResult {
  project: Project;
  result: CheckResult;
}

/** Reads and checks the project around `cwd`; unknown targets are E_TOOL_NOT_FOUND. */
export async function checkTree(options: CheckTreeOptions): Promise<CheckTreeResult> {
  const project = readProject(options.cwd, { cacheDir: options.cacheDir, now: options.now });
  const targets = (options.targets ?? []).map((t) => toProjectTarget(project.root, options.cwd, t));
  // The ignore file as a target: what it lets through may be anywhere, so the whole project is checked.
  const only = targets.includes(IGNORE_FILE) ? [] : targets;
  const scope = resolveScope(project, only);
  if (scope.unmatched.length > 0) {
    const ids = project.tools.map((t) => t.id);
    const first = scope.unmatched[0]!;
    const near = suggest(first, ids);
    throw new KiwiError("E_TOOL_NOT_FOUND", `no tool or manifest matches ${scope.unmatched.map((u) => `"${u}"`).join(", ")}`, {
      hint: near ? `did you mean "${near}"?` : 'pass tool ids or paths under .ai/tools/; run "kiwi check" with no arguments to check everything',
      details: { unmatched: scope.unmatched },
    });
  }
  const requests = options.syntax === false ? [] : planSyntaxChecks(scope.tools);
  // The interpreters run while the pure layers use the CPU.
  const pending = requests.length > 0 ? runSyntaxChecks(requests, { env: options.env, cacheDir: options.cacheDir }) : undefined;
  const childSchemaMemo = openChildSchemaMemo(options.cacheDir);
  const lock = readLock(project.root);
  const remoteRecords = lockedRemotes(project, lock);
  // Every layer judges the scope here: an ignore entry about it that lets nothing through is said.
  const notInstalled = lockedRemotesMissing(project, lock);
  const checked = checkProject(project, { strict: options.strict, only, childSchemaMemo, complete: only.length === 0 ? "all" : scope.tools, ...(remoteRecords ? { remoteRecords } : {}), ...(notInstalled ? { notInstalled } : {}) });
  childSchemaMemo?.save();
  const named = withFindings(checked, checkMcpToolNames(scope.tools, pinnedToolNames(lock === "unreadable" ? {} : (lock?.mcp_servers ?? {}))), { strict: options.strict });
  // The tools' files are read while the interpreters parse.
  const base = withFileSecrets(named, scope.tools, { ...options, ...(remoteRecords ? { remoteRecords } : {}) });
  if (!pending) return { project, result: base };
  const verdicts = await pending;
  return { project, result: withFindings(base, syntaxFindings(requests, verdicts), { strict: options.strict }) };
}

/** tool.lock.json, if the project has one; "unreadable" when it cannot be parsed (kiwi lock and verify say why). */
function readLock(root: string): Lockfile | "unreadable" | undefined {
  try {
    return readLockfile(root)?.lock;
  } catch {
    return "unreadable";
  }
}

/** The remote tools the lockfile records that this checkout has not installed (remote-installed-io.ts). */
function lockedRemotesMissing(project: Project, lock: Lockfile | "unreadable" | undefined): ReadonlySet<string> | undefined {
  if (lock === undefined || lock === "unreadable" || !lock.remote) return undefined;
  const missing = remoteToolsNotInstalled(project.root, Object.keys(lock.remote), new Set(project.tools.map((t) => t.id)));
  return missing.length > 0 ? new Set(missing) : undefined;
}

/**
 * What the lockfile records of the project's remote tools, when it has any in .ai/tools/.remote/;
 * without one there is nothing to tell apart.
 */
function lockedRemotes(project: Project, lock: Lockfile | "unreadable" | undefined): RemoteRecords | undefined {
  if (!project.tools.some(isRemoteTool)) return undefined;
  if (lock === "unreadable") return { ids: new Set(), lockfile: "unreadable" };
  return { ids: new Set(Object.keys(lock?.remote ?? {})), lockfile: lock ? "read" : "absent" };
}

/** A command-line target as `only` reads it: an existing path becomes project-relative; else an id. */
function toProjectTarget(root: string, cwd: string, target: string): string {
  const abs = isAbsolute(target) ? target : resolve(cwd, target);
  if (!existsSync(abs) && !target.includes("/") && !target.includes(sep)) return target;
  const rel = relative(root, abs).split(sep).join("/");
  if (rel.startsWith("..") || isAbsolute(rel)) {
    throw new KiwiError("E_USAGE", `${target} is outside the project at ${root}`, { hint: "pass paths inside the project, or use --cwd" });
  }
  return rel;
}
