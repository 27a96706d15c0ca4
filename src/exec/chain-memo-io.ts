// exec's index of one tool's chain, in the spirit of git's index: what a warm `kiwi exec <tool>`
// needs from the project-wide files, kept small and per tool, so a call costs the same in a project
// of 100 tools as in one of 10,000. It holds
//   - the lockfile's entries for the chain's links, valid while tool.lock.json keeps the stat
//     identity (size, mtime, ctime, inode) it had when they were read: parsing a 5 MB lockfile
//     for three entries cost a 10,000-tool project ~15 ms per call;
//   - the stat-cache rows and integrity memos of the chain's files only, instead of the
//     project's whole stat cache (another ~20 ms there).
//   - the verified chain itself (each link's tool as read, its hashed files and integrity), valid
//     while every input it was read and hashed from keeps its stat identity: the manifest, every
//     file and every folder of a directory tool (a folder's mtime changes when an entry is added,
//     removed or renamed). A warm call then stats those paths and reads nothing else: no manifest
//     bytes, no parse, no canonical JSON, no digest (~1 ms, and the modules that do them stay
//     unloaded). Only what the slow path proved by hashing and comparing with the lockfile is
//     recorded, and only inputs older than the racy margin (git's racy-clean rule).
// It is a memo, never a source of truth: every chain file is still stat-compared (and re-hashed
// when its stat changed) and every integrity still compared with the locked one. A lockfile written
// within the racy margin (its timestamp could hide a second write) is never remembered.
import { type Stats, lstatSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { RACY_MARGIN_MS, type StatCache, type StatSubset, statCacheOf } from "../cache/stat-cache-io.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { type CanonicalValue, survivesJsonParse } from "../integrity/value.ts";
import { LOCKFILE_NAME } from "../lockfile/name.ts";
import { IGNORED_NAMES } from "../integrity/tool-path.ts";
import type { Tool } from "../manifest/model.ts";
import type { Lockfile, LockedTool, ToolDependencies } from "../schema/lockfile.ts";
import { isCompiled } from "../self.ts";
import { memoKey, readMemo, writeMemo } from "./memo-io.ts";

import { type StatId, type WatchedPath, allUnchanged, sameIdentity } from "./stat-proof-io.ts";

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
  /** The chain as verified, tool first (absent when an input could not be watched by stat). */
  verified?: VerifiedRecord;
}

/** Bumped whenever what a verified record holds changes. */
const RECORD_FORMAT = 1;

/** One verified link as recorded: the tool as read (without its `locate`), its hashed files, its integrity. */
interface LinkRecord {
  tool: Omit<Tool, "locate">;
  files: FileEntry[];
  /** `sha256:<hex>`, equal to the locked integrity when recorded. */
  integrity: string;
  /** The bare hex digests of the integrity and the manifest (the hashed tool's own fields). */
  integrityHex: string;
  manifestDigest: string;
}

interface VerifiedRecord {
  format: typeof RECORD_FORMAT;
  links: LinkRecord[];
  /** Every manifest and folder the links were read from, by absolute path, with its stat identity. */
  watch: WatchedPath[];
}

/** A link replayed from the record: what chain-verify-io's VerifiedLink holds. */
export interface ReplayedLink {
  tool: Tool;
  hashed: { tool: Tool; files: FileEntry[]; integrity: string; manifestDigest: string };
  integrity: string;
  locked: LockedTool;
  packages?: ToolDependencies;
}

export type { VerifiedRecord };

export interface ChainIndex {
  /** The lockfile's stat identity, taken before it is read (undefined when there is none). */
  lockStat?: StatId;
  /** The remembered chain, when the lockfile is unchanged since it was recorded. */
  hit?: { lock: Lockfile; statCache: StatCache; verified?: VerifiedRecord };
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
  // The stat rows are checked and indexed only when the chain is not replayed (they serve the slow path).
  let statCache: StatCache | undefined;
  const stats = memo.stats;
  const hit = { lock, get statCache() { return (statCache ??= statCacheOf(root, stats, now)); }, ...(isVerifiedRecord(memo.verified) ? { verified: memo.verified } : {}) };
  return { lockStat, hit };
}

/**
 * The recorded chain, when every input it was verified from still has the stat identity it had:
 * each link's manifest, each folder of a directory tool and each file. Undefined when anything
 * differs (the caller then reads and hashes the chain the slow way).
 */
export function replayVerifiedChain(hit: NonNullable<ChainIndex["hit"]>, ids: readonly string[], sourceOf: (id: string) => string = builtinSource): ReplayedLink[] | undefined {
  const record = hit.verified;
  if (!record || record.links.length !== ids.length) return undefined;
  if (!allUnchanged(record.watch)) return undefined;
  const links: ReplayedLink[] = [];
  for (let i = 0; i < ids.length; i++) {
    const r = record.links[i]!;
    const locked = hit.lock.tools[ids[i]!];
    if (r.tool.id !== ids[i] || !locked || locked.integrity !== r.integrity) return undefined;
    // A built-in is the running kiwi's own: the record holds the binary that verified it, and only
    // that binary, unchanged, may replay it (another build of the same version may ship another one).
    if (r.tool.form === "builtin" && !record.watch.some(([path]) => path === sourceOf(r.tool.id))) return undefined;
    for (const f of r.tool.files) if (!sameIdentity(f.abs, [f.size, f.mtimeMs, f.ctimeMs, f.ino])) return undefined;
    // Read from memo text, never shown a source position (as the manifest memo's documents).
    const tool = { ...r.tool, locate: () => undefined } as Tool;
    const packages = hit.lock.dependencies?.[ids[i]!];
    links.push({ tool, hashed: { tool, files: r.files, integrity: r.integrityHex, manifestDigest: r.manifestDigest }, integrity: r.integrity, locked, ...(packages ? { packages } : {}) });
  }
  return links;
}

/**
 * Every path a remembered chain stands on, with its stat identity: the lockfile, each manifest and
 * folder of the record and each file of each link. While all of them keep it, replayVerifiedChain
 * would replay the same chain (exec's launch memo proves a chain with this list alone). Undefined
 * when the lockfile is too fresh to be remembered (writeChainIndex's racy rule).
 */
export function chainProof(root: string, lockStat: StatId, record: VerifiedRecord, now: number): WatchedPath[] | undefined {
  if (Math.max(lockStat[1], lockStat[2]) >= now - RACY_MARGIN_MS) return undefined;
  const files = record.links.flatMap((l) => l.tool.files.map((f): WatchedPath => [f.abs, f.size, f.mtimeMs, f.ctimeMs, f.ino]));
  return [[join(root, LOCKFILE_NAME), ...lockStat], ...record.watch, ...files];
}


/**
 * The record of a chain that was just read, hashed and found equal to the lockfile, or undefined
 * when one of its inputs cannot be watched by stat alone: a source that is not one plain manifest
 * (an Agent Plugin's mcp.json entry, a skill), a symbolic link in a tool folder, a document that
 * JSON.parse would not read back exactly, or an input changed within the racy margin of `now`.
 */
export function recordVerifiedChain(links: readonly { tool: Tool; hashed: { files: FileEntry[]; integrity: string; manifestDigest: string }; integrity: string }[], now: number): VerifiedRecord | undefined {
  const limit = now - RACY_MARGIN_MS;
  const watch: VerifiedRecord["watch"] = [];
  const watched = new Set<string>();
  const watchPath = (path: string, st: Stats): boolean => {
    if (st.mtimeMs >= limit || st.ctimeMs >= limit) return false;
    if (!watched.has(path)) watch.push([path, st.size, st.mtimeMs, st.ctimeMs, st.ino]);
    watched.add(path);
    return true;
  };
  const records: LinkRecord[] = [];
  for (const { tool, hashed, integrity } of links) {
    const { locate: _, ...plain } = tool;
    if (!survivesJsonParse(plain as unknown as CanonicalValue)) return undefined;
    records.push({ tool: plain, files: hashed.files, integrity, integrityHex: hashed.integrity, manifestDigest: hashed.manifestDigest });
    if (tool.form === "builtin") {
      // A built-in comes from kiwi itself: another build of the same version may ship another one.
      const source = builtinSource(tool.id);
      try {
        if (!watchPath(source, lstatSync(source))) return undefined;
      } catch {
        return undefined;
      }
      continue;
    }
    if (!["directory", "file", "script", "markdown"].includes(tool.form) || tool.manifestFile.includes("#") || basename(tool.manifestFile) === "SKILL.md") return undefined;
    for (const f of tool.files) if (f.mtimeMs >= limit || f.ctimeMs >= limit) return undefined;
    try {
      const manifest = join(tool.rootAbs, basename(tool.manifestFile));
      const st = lstatSync(manifest);
      if (!st.isFile() || !watchPath(manifest, st)) return undefined;
      if (tool.form === "directory" && !watchFolders(tool.rootAbs, watchPath)) return undefined;
    } catch {
      return undefined;
    }
  }
  return { format: RECORD_FORMAT, links: records, watch };
}

/** Where a built-in manifest comes from: the compiled kiwi itself, or its YAML file in a checkout. */
function builtinSource(id: string): string {
  return isCompiled() ? process.execPath : Bun.fileURLToPath(new URL(`../manifest/builtin/${id}.yaml`, import.meta.url));
}

/**
 * Watches `dir` and every folder below it that listing a tool's files descends into; false on a
 * symbolic link, the tool folder's own included (a link's stat says nothing of what it points at).
 */
function watchFolders(dir: string, watchPath: (path: string, st: Stats) => boolean): boolean {
  const st = lstatSync(dir);
  if (!st.isDirectory() || !watchPath(dir, st)) return false;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (IGNORED_NAMES.has(entry.name)) continue;
    if (entry.isSymbolicLink()) return false;
    if (entry.isDirectory() && !watchFolders(join(dir, entry.name), watchPath)) return false;
  }
  return true;
}

function isVerifiedRecord(value: unknown): value is VerifiedRecord {
  const v = value as VerifiedRecord | undefined;
  return typeof v === "object" && v !== null && v.format === RECORD_FORMAT && Array.isArray(v.links) && Array.isArray(v.watch) && v.watch.every((w) => Array.isArray(w) && w.length === 5 && typeof w[0] === "string");
}

/**
 * Remembers a verified chain: its lockfile entries under the lockfile's stat identity (taken before
 * the lockfile was read) and the stat rows its hashing saw. Best effort, like every memo.
 */
export function writeChainIndex(cacheDir: string, root: string, toolId: string, entry: { lockStat: StatId; lock: Lockfile; ids: readonly string[]; seen: StatSubset; verified?: VerifiedRecord }, now: number): void {
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
    ...(entry.verified ? { verified: entry.verified } : {}),
  };
  writeMemo(cacheDir, "chains", key(root, toolId), JSON.stringify(memo));
}
