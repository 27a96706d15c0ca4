// `kiwi remove <tool>...`: takes remote tools (those `kiwi add` placed from a registry) out of the
// project, as npm uninstall and uv remove do: their records, lock entries, MCP pins and packages
// leave tool.lock.json, their folders leave .ai/tools/.remote/. Nothing is changed while another
// tool runs on one of them; on any failure the folders and the lockfile are put back as they were.
// The cached blobs stay for `kiwi cache prune`.
import { existsSync, renameSync } from "node:fs";
import { join } from "node:path";
import { removeTree } from "../cache/remove-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings/verdict.ts";
import { LOCKFILE_NAME } from "../lockfile/parse.ts";
import type { LockDiff } from "../lockfile/lock-diff.ts";
import { readLockfileOrFail, withProjectLock, writeLockfile, writeLockfileText } from "../lockfile/fs.ts";
import { readProject } from "../manifest/discover-io.ts";
import { REMOTE_TOOLS_DIR, type Tool } from "../manifest/model.ts";
import { findProjectRoot } from "../manifest/project-io.ts";
import { executorIds } from "../resolve/chain.ts";
import { suggest } from "../resolve/suggest.ts";
import type { Lockfile } from "../schema/lockfile.ts";
import { lockProject } from "./lock-io.ts";
import { releaseTemps, tempPathFor } from "../registry/place-io.ts";
import { sourceDigest } from "../registry/reference.ts";

export interface RemovedTool {
  tool: string;
  version: string;
  source: string;
  /** The manifest digest `source` names. */
  digest: string;
  reference: string;
  /** Whether its folder was there to remove (a checkout that never ran kiwi install has none). */
  placed: boolean;
}

export interface RemoveResult {
  removed: RemovedTool[];
  lockfile: string;
  diff: LockDiff;
  /** The warnings and infos of the lock's check. */
  findings: Finding[];
  warnings: string[];
}

/** `kiwi remove`: every id must be a remote tool of the lockfile that no other tool runs on. */
export async function removeRemoteTools(ctx: Context, ids: readonly string[]): Promise<RemoveResult> {
  const root = findProjectRoot(ctx.cwd);
  const { lock, text } = readLockfileOrFail(root);
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const wanted = [...new Set(ids)];
  for (const id of wanted) assertRemovable(id, lock, project.tools);
  assertNothingRunsOn(wanted, lock, project.tools);
  const removed = wanted.map((id) => {
    const entry = lock.remote![id]!;
    return { tool: id, version: lock.tools[id]?.version ?? "", source: entry.source, digest: sourceDigest(entry.source), reference: entry.reference, placed: existsSync(join(root, REMOTE_TOOLS_DIR, id)) };
  });
  // The records go first, so the lock takes each tool whose folder is gone for a removed one (not
  // for one this checkout has not installed, whose entry it keeps).
  const without: Lockfile = { ...lock, remote: Object.fromEntries(Object.entries(lock.remote ?? {}).filter(([id]) => !wanted.includes(id))) };
  if (Object.keys(without.remote!).length === 0) delete without.remote;
  const moved: [string, string][] = [];
  try {
    for (const r of removed) {
      if (!r.placed) continue;
      // The folder waits in .ai/.kiwi-tmp/ until the lock is written.
      const aside = tempPathFor(root, r.tool);
      renameSync(join(root, REMOTE_TOOLS_DIR, r.tool), aside);
      moved.push([join(root, REMOTE_TOOLS_DIR, r.tool), aside]);
    }
    await withProjectLock(root, () => writeLockfile(root, without, text));
    const locked = await lockProject(ctx, {});
    for (const [, aside] of moved) removeTree(aside);
    releaseTemps(root);
    return { removed, lockfile: LOCKFILE_NAME, diff: locked.diff, findings: locked.findings, warnings: locked.warnings };
  } catch (error) {
    // Nothing half-removed: the folders come back, and the lockfile as it was.
    for (const [home, aside] of moved) renameSync(aside, home);
    releaseTemps(root);
    await writeLockfileText(root, text, undefined)?.catch(() => undefined);
    throw error;
  }
}

/** A remote tool of the lockfile, or E_USAGE (the project's own, a built-in) / E_TOOL_NOT_FOUND. */
function assertRemovable(id: string, lock: Lockfile, tools: readonly Tool[]): void {
  if (lock.remote?.[id]) return;
  const tool = tools.find((t) => t.id === id);
  if (tool?.form === "builtin") throw new KiwiError("E_USAGE", `"${id}" is built into kiwi; there is nothing to remove`, { hint: "kiwi remove takes tools added from a registry with kiwi add" });
  if (tool) {
    const files = tool.form === "directory" ? tool.root : tool.manifestFile;
    throw new KiwiError("E_USAGE", `"${id}" is the project's own tool (${tool.manifestFile}), not one added from a registry`, {
      hint: `kiwi remove takes tools added with kiwi add; to drop your own, delete its files (git rm -r ${files}) and run "kiwi lock"`,
    });
  }
  const remote = Object.keys(lock.remote ?? {});
  const near = suggest(id, remote);
  throw new KiwiError("E_TOOL_NOT_FOUND", `"${id}" is not a remote tool in ${LOCKFILE_NAME}`, {
    hint: near ? `did you mean "${near}"?` : remote.length > 0 ? `the remote tools are ${remote.join(", ")}` : "the project has no remote tools (kiwi add places them)",
  });
}

/** E_CHAIN when a tool that stays runs on one being removed (directly or further down its chain). */
function assertNothingRunsOn(ids: readonly string[], lock: Lockfile, tools: readonly Tool[]): void {
  const removing = new Set(ids);
  const executorOf = executorIds(lock.tools, tools);
  const broken: string[] = [];
  for (const id of executorOf.keys()) {
    if (removing.has(id)) continue;
    const seen = new Set<string>();
    for (let at = executorOf.get(id); at != null && !seen.has(at); at = executorOf.get(at)) {
      seen.add(at);
      if (removing.has(at)) {
        broken.push(`${id} (runs on ${at})`);
        break;
      }
    }
  }
  if (broken.length === 0) return;
  throw new KiwiError("E_CHAIN", `removing ${ids.join(", ")} would break the chain of ${broken.sort().join(", ")}; nothing was removed`, {
    hint: "remove those tools too (kiwi remove takes several ids), or point them at another executor first",
    details: { dependents: broken },
  });
}
