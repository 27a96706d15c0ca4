// `kiwi lock` as a core operation: validate, hash every tool (stat cache), compare with the
// current lockfile and write it only if its bytes change, all under the project's lockfile lock.
import { loadStatCache } from "../cache/stat-cache-io.ts";
import { faultsFromEnv } from "../cache/faults-io.ts";
import type { Context } from "../context.ts";
import type { Finding } from "../findings.ts";
import { type Project, readProject } from "../manifest/discover-io.ts";
import type { Lockfile } from "../schema/lockfile.ts";
import { buildLockfile } from "./build.ts";
import { compareTreeToLock } from "./compare.ts";
import { type LockDiff, diffLockfiles } from "./diff.ts";
import { lockfilePath, readLockfile, withProjectLock, writeLockfile } from "./fs.ts";
import { assertGatePassed, checkBeforeLock } from "./gate.ts";
import { type TreeTool, hashProjectTools } from "./tree-io.ts";

export interface LockOptions {
  strict?: boolean;
  onProgress?: (done: number, total: number) => void;
}

export interface LockResult {
  root: string;
  lockfile: string;
  written: boolean;
  diff: LockDiff;
  lock: Lockfile;
  tree: TreeTool[];
  /** Warnings from validation that did not stop the lock. */
  findings: Finding[];
  /** Non-fatal problems (stat cache not saved, hand-edited entries rewritten). */
  warnings: string[];
  stats: { tools: number; files: number; hashed: number; reused: number };
}

/** Validates the project, hashes it and writes tool.lock.json if anything changed. */
export async function lockProject(ctx: Context, options: LockOptions = {}): Promise<LockResult> {
  const project = readProject(ctx.cwd);
  const verdict = checkBeforeLock(project, { strict: options.strict });
  assertGatePassed(verdict, "kiwi lock");
  return withProjectLock(project.root, () => lockLocked(ctx, project, verdict.findings, options));
}

function lockLocked(ctx: Context, project: Project, findings: Finding[], options: LockOptions): LockResult {
  const faults = faultsFromEnv(ctx.env);
  // Read before hashing: a lockfile from a newer kiwi or an unreadable one stops us before any work.
  const previous = readLockfile(project.root);
  const statCache = loadStatCache(ctx.cacheDir, project.root, ctx.now());
  const tree = hashProjectTools(project, { statCache, onProgress: options.onProgress });
  const lock = buildLockfile(tree, previous?.lock.mcp_servers ?? {});
  const warnings: string[] = [];
  if (previous) {
    for (const edit of compareTreeToLock(previous.lock, tree).handEdited) warnings.push(`${edit.message}; rewritten from the tool tree`);
  }
  const written = writeLockfile(project.root, lock, previous?.text, faults);
  const saveWarning = statCache.save(faults);
  if (saveWarning) warnings.push(saveWarning);
  return {
    root: project.root,
    lockfile: lockfilePath(project.root),
    written,
    diff: diffLockfiles(previous?.lock, lock),
    lock,
    tree,
    findings,
    warnings,
    stats: { tools: tree.length, files: statCache.hits + statCache.misses, hashed: statCache.misses, reused: statCache.hits },
  };
}
