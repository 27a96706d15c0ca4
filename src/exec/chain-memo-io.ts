// exec's index of one tool's chain, in the spirit of git's index: what a warm `kiwi exec <tool>`
// needs from the project-wide files, kept small and per tool, so a call costs the same in a project
// of 100 tools as in one of 10,000. It holds
//   - the lockfile's entries for the chain's links, valid while tool.lock.json keeps the stat
//     identity (size, mtime, ctime, inode) it had when they were read: parsing a 5 MB lockfile
//     for three entries cost a 10,000-tool project ~15 ms per call;
//   - the stat-cache rows and integrity memos of the chain's files only, instead of the
//     project's whole stat cache (another ~20 ms there).
// It is a memo, never a source of truth: every chain file is still stat-compared (and re-hashed
// when its stat changed) and every integrity still compared with the locked one. A lockfile written
// within the racy margin (its timestamp could hide a second write) is never remembered.
import { statSync } from "node:fs";
import { join } from "node:path";
import { RACY_MARGIN_MS, type StatCache, type StatSubset, statCacheOf } from "../cache/stat-cache-io.ts";
import { LOCKFILE_NAME } from "../lockfile/parse.ts";
import type { Lockfile, LockedTool } from "../schema/lockfile.ts";
import { memoKey, readMemo, writeMemo } from "./memo-io.ts";

type StatId = [size: number, mtimeMs: number, ctimeMs: number, ino: number];

interface ChainMemoFile {
  /** tool.lock.json's stat identity when `tools` was read from it. */
  lockStat: StatId;
  lockfileVersion: number;
  /** The chain's locked entries (and remote entries), by tool id. */
  tools: Record<string, LockedTool>;
  remote?: NonNullable<Lockfile["remote"]>;
  /** The chain's locked packages, by tool id. */
  dependencies?: NonNullable<Lockfile["dependencies"]>;
  stats: StatSubset;
}

export interface ChainIndex {
  /** The lockfile's stat identity, taken before it is read (undefined when there is none). */
  lockStat?: StatId;
  /** The remembered chain, when the lockfile is unchanged since it was recorded. */
  hit?: { lock: Lockfile; statCache: StatCache };
}

function key(root: string, toolId: string): string {
  return memoKey("chains", root, toolId);
}

/** Looks up the chain of `toolId`: a hit only while tool.lock.json has the remembered stat identity. */
export function readChainIndex(cacheDir: string, root: string, toolId: string, now: number): ChainIndex {
  let lockStat: StatId;
  try {
    const st = statSync(join(root, LOCKFILE_NAME));
    lockStat = [st.size, st.mtimeMs, st.ctimeMs, st.ino];
  } catch {
    return {};
  }
  const text = readMemo(cacheDir, "chains", key(root, toolId));
  if (text === undefined) return { lockStat };
  let memo: ChainMemoFile;
  try {
    memo = JSON.parse(text) as ChainMemoFile;
  } catch {
    return { lockStat };
  }
  const same = Array.isArray(memo.lockStat) && memo.lockStat.length === 4 && memo.lockStat.every((n, i) => n === lockStat[i]);
  if (!same || typeof memo.tools !== "object" || memo.tools === null || !memo.tools[toolId] || typeof memo.stats !== "object") return { lockStat };
  const lock: Lockfile = {
    lockfileVersion: memo.lockfileVersion,
    tools: memo.tools,
    ...(memo.remote ? { remote: memo.remote } : {}),
    ...(memo.dependencies ? { dependencies: memo.dependencies } : {}),
    mcp_servers: {},
  };
  return { lockStat, hit: { lock, statCache: statCacheOf(root, memo.stats, now) } };
}

/**
 * Remembers a verified chain: its lockfile entries under the lockfile's stat identity (taken before
 * the lockfile was read) and the stat rows its hashing saw. Best effort, like every memo.
 */
export function writeChainIndex(cacheDir: string, root: string, toolId: string, entry: { lockStat: StatId; lock: Lockfile; ids: readonly string[]; seen: StatSubset }, now: number): void {
  // A lockfile this fresh may be rewritten within the same timestamp tick: remember nothing.
  if (Math.max(entry.lockStat[1], entry.lockStat[2]) >= now - RACY_MARGIN_MS) return;
  const tools = Object.fromEntries(entry.ids.map((id) => [id, entry.lock.tools[id]!]));
  const remote = Object.fromEntries(entry.ids.flatMap((id) => (entry.lock.remote?.[id] ? [[id, entry.lock.remote[id]!]] : [])));
  const dependencies = Object.fromEntries(entry.ids.flatMap((id) => (entry.lock.dependencies?.[id] ? [[id, entry.lock.dependencies[id]!]] : [])));
  const memo: ChainMemoFile = {
    lockStat: entry.lockStat,
    lockfileVersion: entry.lock.lockfileVersion,
    tools,
    ...(Object.keys(remote).length > 0 ? { remote } : {}),
    ...(Object.keys(dependencies).length > 0 ? { dependencies } : {}),
    stats: entry.seen,
  };
  writeMemo(cacheDir, "chains", key(root, toolId), JSON.stringify(memo));
}
