// The incremental `kiwi lock`: answers from the lock index (lockfile/lock-index-io.ts) when the
// tree changed only inside tools it can pin, re-reading, re-hashing and re-entering only those.
// Everything else (a folder gained or lost an entry, a file no tool owns, a tool whose model
// changed, a tool with discovery findings or pinned by remote records or packages) returns
// undefined and the full lock runs, so its result is always exactly what a full lock writes.
import { statSync } from "node:fs";
import { join } from "node:path";
import type { Faults } from "../cache/faults-io.ts";
import { hashFileHex } from "../cache/hash-io.ts";
import { RACY_MARGIN_MS, saveTreeMemo } from "../cache/stat-cache-io.ts";
import { sha256Hex } from "../integrity/digest.ts";
import type { LockedTool, Lockfile } from "../schema/lockfile.ts";
import { TOOLS_DIR } from "../manifest/project-io.ts";
import { utcDay } from "../manifest/model.ts";
import { type HashedTool, hashTool, lockedToolOf } from "../lockfile/build.ts";
import { type LockDiff, diffLockfiles } from "../lockfile/lock-diff.ts";
import { lockfilePath, readLockfileText, withProjectLock, writeLockfileText } from "../lockfile/fs.ts";
import { type IndexScan, type LockIndex, loadLockIndex, lockfileMatches, modelKey, pathAt, sameIgnoreFile, saveLockIndex, scanLockIndexFast, unpinnedServers } from "../lockfile/lock-index-io.ts";
import { ROW_WIDTH } from "../cache/stat-row.ts";
import { findToolEntry, replaceToolEntry } from "../lockfile/render.ts";
import { LOCKFILE_VERSION } from "../schema/vocabulary.ts";

/** What lock-io.ts needs back from an incremental lock. */
export interface IndexedLock {
  written: boolean;
  diff: LockDiff;
  mcpServers: string[];
  /** Those the lockfile does not pin (lock-index-io.ts unpinnedServers); undefined when the index does not know. */
  mcpUnpinned?: string[];
  stats: { tools: number; files: number; hashed: number; reused: number; memo: boolean };
  /** Text written, when written (the chain memo is told about it). */
  text?: string;
}

/** The lock answered from the index, or undefined when the full lock must run. */
export async function lockFromIndex(cacheDir: string, root: string, strict: boolean, startedAt: number, faults: Faults, onWait?: (holder: string, lockFile: string) => void): Promise<IndexedLock | undefined> {
  const index = loadLockIndex(cacheDir, root, strict);
  if (!index) return undefined;
  const scan = await scanLockIndexFast(index);
  // The ignore file changes verdicts, not entries: only the full lock judges the tree again.
  if (scan.structural || !sameIgnoreFile(index, utcDay(startedAt))) return undefined;
  const base = { mcpServers: index.mcpServers, mcpUnpinned: unpinnedServers(index), diff: { added: [], removed: [], changed: [] } };
  if (scan.tools.size === 0) {
    const lock = lockfileMatches(index, () => readLockfileText(root));
    if (!lock.ok) return undefined;
    // Folders whose stat changed but whose names did not (a file saved by rename): remember their new stat.
    // Likewise a lockfile whose stat was racy when recorded and no longer is (never while it still is).
    const next = refreshed(index, scan, startedAt, lock.text);
    if (scan.fresh.size > 0 || (lock.text !== undefined && next.lockfile.stat !== null)) saveLockIndex(cacheDir, next, faults);
    return { ...base, written: false, stats: { tools: index.toolCount, files: index.files, hashed: 0, reused: index.files, memo: true } };
  }
  for (const t of scan.tools.keys()) if (!index.tools[t]!.alone) return undefined;
  return withProjectLock(root, () => relock(cacheDir, index, scan, startedAt, faults), onWait);
}

async function relock(cacheDir: string, index: LockIndex, scan: IndexScan, startedAt: number, faults: Faults): Promise<IndexedLock | undefined> {
  const root = index.root;
  // Read for the splice, then vouched for by its stat (taken after the read: any write since the
  // index was recorded shows there) or else by its digest.
  const previous = readLockfileText(root);
  if (previous === undefined || !lockfileMatches(index, () => previous).ok) return undefined;
  const unchanged = index.lockfile.sha256;
  // Loaded only now: an unchanged tree never pays for the manifest parsers.
  const { readToolAlone } = await import("../manifest/discover-io.ts");
  const toolsPrefix = `${join(root, TOOLS_DIR)}/`;
  let text = previous;
  let hashed = 0;
  const before: Record<string, LockedTool> = {};
  const after: Record<string, LockedTool> = {};
  for (const [t, entries] of scan.tools) {
    const known = index.tools[t]!;
    let read;
    try {
      read = readToolAlone(root, known.source);
    } catch {
      return undefined;
    }
    const tool = read.tool;
    // Discovery findings (parse warnings, unreadable files) are the full lock's to report, and a
    // tool whose model changed may change verdicts and entries beyond its own: the full lock decides.
    if (!tool || read.findings.length > 0 || tool.id !== known.id) return undefined;
    const changed = new Set(entries.map((i) => pathAt(index, i)));
    const old = findToolEntry(text, tool.id);
    if (!old) return undefined;
    const shaOf = new Map(old.entry.files.map((f) => [f.path, f.sha256]));
    const files = [];
    for (const f of tool.files) {
      const rel = f.abs.startsWith(toolsPrefix) ? f.abs.slice(toolsPrefix.length) : undefined;
      let sha = rel !== undefined && !changed.has(rel) ? shaOf.get(f.path) : undefined;
      if (sha === undefined) {
        try {
          sha = hashFileHex(f.abs);
        } catch {
          return undefined;
        }
        hashed++;
      }
      files.push({ path: f.path, sha256: sha, is_executable: f.isExecutable });
    }
    const h: HashedTool = hashTool(tool, files);
    if (modelKey(tool, h.manifestDigest) !== known.model) return undefined;
    const entry = lockedToolOf(h, old.entry.executor);
    const next = replaceToolEntry(text, tool.id, entry);
    if (!next) return undefined;
    text = next.text;
    before[tool.id] = old.entry;
    after[tool.id] = entry;
  }
  const pending = writeLockfileText(root, text, previous, faults);
  const written = pending !== undefined;
  // While the lockfile is flushed: the index and memo (a crash before the rename leaves an index
  // naming bytes that are not there, which only sends the next run down the full lock).
  const next = refreshed(index, scan, startedAt, written ? undefined : text, unchanged);
  // Only tool entries were spliced: the pins are those of the lockfile the index vouched for.
  if (written) next.lockfile = { ...next.lockfile, sha256: sha256Hex(text), stat: null };
  saveLockIndex(cacheDir, next, faults);
  // The full lock's memo of the bytes it wrote itself now names these bytes (see lock-full-io.ts `wroteItself`).
  if (written) saveTreeMemo(cacheDir, root, { fingerprint: "", lockfile: next.lockfile.sha256 }, faults);
  try {
    await pending;
  } catch (error) {
    // Not written: the index must not name bytes that are not there.
    saveLockIndex(cacheDir, { ...next, lockfile: { sha256: "", stat: null } }, faults);
    throw error;
  }
  const lockOf = (tools: Record<string, LockedTool>): Lockfile => ({ lockfileVersion: LOCKFILE_VERSION, tools, mcp_servers: {} });
  return {
    written,
    diff: diffLockfiles(lockOf(before), lockOf(after)),
    mcpServers: index.mcpServers,
    mcpUnpinned: unpinnedServers(index),
    stats: { tools: index.toolCount, files: index.files, hashed, reused: index.files - hashed, memo: false },
    ...(written ? { text } : {}),
  };
}

/** The index with the scan's new stats (racy ones unknown) and, when given, the lockfile now on disk (updated in place). */
function refreshed(index: LockIndex, scan: IndexScan, startedAt: number, text?: string, textSha?: string): LockIndex {
  const limit = startedAt - RACY_MARGIN_MS;
  const { stats, top } = index;
  for (const [i, row] of scan.fresh) {
    if (i === -1) {
      top.splice(0, ROW_WIDTH, ...row);
      if (row[1]! >= limit || row[2]! >= limit) top[1] = Number.NaN;
      continue;
    }
    for (let k = 0; k < ROW_WIDTH; k++) stats[i * ROW_WIDTH + k] = row[k]!;
    if (row[1]! >= limit || row[2]! >= limit) stats[i * ROW_WIDTH + 1] = Number.NaN;
  }
  let lockfile = index.lockfile;
  if (text !== undefined) {
    let stat: number[] | null = null;
    try {
      const st = statSync(lockfilePath(index.root));
      if (st.mtimeMs < limit && st.ctimeMs < limit) stat = [st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode];
    } catch {
      stat = null;
    }
    // The same bytes the index vouched for (or those bytes with tool entries spliced): the same pins.
    lockfile = { ...lockfile, sha256: textSha ?? sha256Hex(text), stat };
  }
  index.lockfile = lockfile;
  return index;
}
