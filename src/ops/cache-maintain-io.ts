// `kiwi cache verify|prune|clean`: verify every entry, prune what no known lockfile references
// (the projects cache/projects-io.ts registered), clean everything kiwi put there.
import { type Dirent, existsSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseDigest } from "../integrity/digest.ts";
import { LOCKFILE_NAME, parseLockfile } from "../lockfile/parse.ts";
import { writeFileAtomic } from "../cache/atomic-io.ts";
import { CACHEDIR_TAG, CACHE_ENTRIES, digestOfFanout, projectKey, projectRelPath, runDirName, tempOwner } from "../cache/cache-layout.ts";
import { type Eviction, type Store, checkBlob, checkIndexEntry, corruptError, openStore, readTreeEntry } from "../cache/store-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { removeTree } from "../cache/remove-io.ts";
import { isAlive } from "../cache/projects-io.ts";

export interface CacheVerifyReport {
  blobs: number;
  index: number;
  /** Of the index entries, those that list an installed package tree rather than a tool. */
  trees: number;
  evicted: Eviction[];
  tempsRemoved: number;
}

/** Re-hashes every blob and index entry; corrupt ones are evicted and listed. */
export function verifyCache(store: Store, onProgress?: (done: number, total: number) => void): CacheVerifyReport {
  const report: CacheVerifyReport = { blobs: 0, index: 0, trees: 0, evicted: [], tempsRemoved: 0 };
  const entries = [...listFanout(store, "blobs", ""), ...listFanout(store, "index", ".json")];
  entries.forEach((e, i) => {
    onProgress?.(i, entries.length);
    if (e.temp) {
      if (removeIfDead(e.path, e.temp)) report.tempsRemoved++;
      return;
    }
    if (!e.hex) return;
    if (e.kind === "index" && isTreeEntry(e.path)) report.trees++;
    const verdict = e.kind === "blobs" ? checkBlob(store, e.hex) : checkIndexEntry(store, e.hex);
    if (e.kind === "blobs") report.blobs++;
    else report.index++;
    if (typeof verdict === "object") report.evicted.push(verdict);
  });
  onProgress?.(entries.length, entries.length);
  return report;
}

/** An index entry that lists an installed package tree (deps/: kind npm-tree or pypi-tree); false for a tool entry or unreadable bytes. */
function isTreeEntry(path: string): boolean {
  try {
    const kind = (JSON.parse(readFileSync(path, "utf8")) as { kind?: unknown }).kind;
    return kind === "npm-tree" || kind === "pypi-tree";
  } catch {
    return false;
  }
}

export interface PruneOptions {
  /** Entries used or written more recently than this are kept (an install may be running). */
  graceMs: number;
  now: number;
}

export interface PruneReport {
  projects: string[];
  /** Lockfiles that could not be read; what they reference is unknown (the tree can restore it). */
  skipped: { root: string; reason: string }[];
  removedBlobs: number;
  removedIndex: number;
  /** Of the removed index entries, those that listed an installed package tree rather than a tool. */
  removedTrees: number;
  removedOther: number;
  bytesFreed: number;
  keptRecent: number;
}

/**
 * Removes blobs and index entries that no registered project's tool.lock.json references,
 * except those touched within the grace period; drops registrations of vanished projects, their
 * stat caches, quarantined entries and exec memos past the grace period and temp files of dead writers.
 */
export function pruneCache(store: Store, options: PruneOptions): PruneReport {
  assertOwnCache(store, "kiwi cache prune");
  const report: PruneReport = { projects: [], skipped: [], removedBlobs: 0, removedIndex: 0, removedTrees: 0, removedOther: 0, bytesFreed: 0, keptRecent: 0 };
  const keepBlobs = new Set<string>();
  const keepIndex = new Set<string>();
  // Run directories a lock references: each tool's, with its installed trees' keys when it has packages.
  const keepRuns = new Set<string>();
  const liveKeys = new Set<string>();
  for (const reg of readRegistrations(store)) {
    const lockPath = join(reg.root, LOCKFILE_NAME);
    let text: string;
    try {
      text = readFileSync(lockPath, "utf8");
    } catch {
      rmSync(reg.path, { force: true });
      continue;
    }
    liveKeys.add(projectKey(reg.root));
    try {
      const lock = parseLockfile(text, lockPath);
      report.projects.push(reg.root);
      for (const [id, tool] of Object.entries(lock.tools)) {
        const hex = parseDigest(tool.integrity, `${lockPath}: tool "${id}" integrity`);
        keepIndex.add(hex);
        keepRuns.add(hex);
        const deps = lock.dependencies?.[id];
        const trees = [deps?.npm?.tree, deps?.pypi?.tree].filter((t) => t !== undefined).map((t) => t.slice("sha256:".length));
        if (trees.length > 0) keepRuns.add(runDirName(hex, trees));
        for (const f of tool.files) keepBlobs.add(f.sha256);
      }
      // A remote tool's manifest file (not one of its files) and its signature: install places
      // and verifies both from the cache, offline.
      for (const [id, entry] of Object.entries(lock.remote ?? {})) {
        keepBlobs.add(entry.manifest_sha256);
        if (entry.signature) keepBlobs.add(parseDigest(entry.signature.digest, `${lockPath}: remote tool "${id}" signature digest`));
      }
      // Installed package trees: their index entry and every file of them.
      for (const tree of Object.values(lock.dependencies ?? {}).flatMap((d) => [d.npm?.tree, d.pypi?.tree])) {
        if (!tree) continue;
        const hex = tree.slice("sha256:".length);
        keepIndex.add(hex);
        try {
          for (const f of readTreeEntry(store, hex) ?? []) keepBlobs.add(f.sha256);
        } catch {
          // A corrupt tree entry was evicted: its blobs go unless another lock keeps them.
        }
      }
    } catch (error) {
      report.skipped.push({ root: reg.root, reason: (error as Error).message });
    }
  }
  const cutoff = options.now - options.graceMs;
  // `kept` counts what stays for the grace period; a memo is not one of the entries it reports.
  const remove = (path: string, counter: "removedBlobs" | "removedIndex" | "removedOther", kept: "keptRecent" | "none" = "keptRecent") => {
    try {
      const st = statSync(path);
      if (st.mtimeMs > cutoff) {
        if (kept === "keptRecent") report.keptRecent++;
        return;
      }
      if (counter === "removedIndex" && isTreeEntry(path)) report.removedTrees++;
      removeTree(path);
      report[counter]++;
      report.bytesFreed += st.isFile() ? st.size : 0;
    } catch {
      // Already gone (another prune or clean): nothing to do.
    }
  };
  for (const e of [...listFanout(store, "blobs", ""), ...listFanout(store, "index", ".json")]) {
    if (e.temp) {
      if (removeIfDead(e.path, e.temp)) report.removedOther++;
    } else if (e.hex && !(e.kind === "blobs" ? keepBlobs : keepIndex).has(e.hex)) {
      remove(e.path, e.kind === "blobs" ? "removedBlobs" : "removedIndex");
    }
  }
  for (const dir of ["stat", "manifests"]) {
    for (const name of safeReaddir(join(store.dir, dir))) {
      // <key>.stat, <key>.tree.json and <key>.index (and an older kiwi's <key>.json): the key is the first 32 hex digits.
      if ((name.endsWith(".json") || name.endsWith(".stat") || name.endsWith(".index")) && !liveKeys.has(name.slice(0, 32))) remove(join(store.dir, dir, name), "removedOther");
    }
  }
  for (const name of safeReaddir(join(store.dir, "runs"))) {
    if (!keepRuns.has(name)) remove(join(store.dir, "runs", name), "removedOther");
  }
  for (const name of safeReaddir(join(store.dir, "quarantine"))) remove(join(store.dir, "quarantine", name), "removedOther");
  // exec's memos (exec/<kind>/<2 hex>/<rest>) are rewritten whenever a call derives them again,
  // and one not written within the grace period only costs its next call the long way. Launch
  // memos are keyed by the whole environment, so an agent whose environment changes from call to
  // call leaves one per call until a prune.
  for (const kind of safeReaddir(join(store.dir, "exec"))) {
    for (const prefix of safeReaddir(join(store.dir, "exec", kind))) {
      for (const name of safeReaddir(join(store.dir, "exec", kind, prefix))) remove(join(store.dir, "exec", kind, prefix, name), "removedOther", "none");
    }
  }
  return report;
}

/** Removes every entry kiwi creates in the cache folder (and nothing else found there). */
export function cleanCache(store: Store): string[] {
  assertOwnCache(store, "kiwi cache clean");
  const removed: string[] = [];
  for (const name of Object.keys(CACHE_ENTRIES)) {
    const path = join(store.dir, name);
    if (!existsSync(path)) continue;
    removeTree(path);
    removed.push(name);
  }
  return removed;
}

/**
 * Prune and clean remove whole folders by name (runs/, exec/, check/…): they run only in a folder
 * that is kiwi's cache, one with kiwi's CACHEDIR.TAG or holding nothing but kiwi's entries (a
 * cache only kiwi lock wrote has no tag yet). A KIWI_CACHE_DIR pointed at a home, a project or
 * ~/.cache holds other things, and its own check/ or index/ folder is not kiwi's to remove.
 */
function assertOwnCache(store: Store, command: string): void {
  let tag: string | undefined;
  try {
    tag = readFileSync(join(store.dir, "CACHEDIR.TAG"), "utf8");
  } catch {
    tag = undefined;
  }
  // The standard's signature line, then kiwi's own words (any kiwi's: the comment may change).
  if (tag !== undefined && tag.startsWith(CACHEDIR_TAG.split("\n")[0]!) && tag.includes("kiwi")) return;
  const foreign = safeReaddir(store.dir).filter((name) => !Object.hasOwn(CACHE_ENTRIES, name) && tempOwner(name) === undefined).sort();
  if (foreign.length === 0) return;
  const shown = foreign.length > 3 ? `${foreign.slice(0, 3).join(", ")} and ${foreign.length - 3} more` : foreign.join(", ");
  throw new KiwiError("E_IO", `${store.dir} does not look like kiwi's cache (no CACHEDIR.TAG written by kiwi, and it holds ${shown}): ${command} removed nothing`, {
    hint: 'check KIWI_CACHE_DIR and XDG_CACHE_HOME ("kiwi cache dir" prints the folder kiwi uses); kiwi\'s cache is a folder of its own',
    details: { cache: store.dir, foreign },
  });
}

interface FanoutEntry {
  kind: "blobs" | "index";
  path: string;
  hex?: string;
  /** Owner pid when the entry is an atomic-write temp file. */
  temp?: number;
}

function listFanout(store: Store, kind: "blobs" | "index", suffix: string): FanoutEntry[] {
  const out: FanoutEntry[] = [];
  const base = join(store.dir, kind);
  for (const prefix of safeReaddir(base)) {
    if (!/^[0-9a-f]{2}$/.test(prefix)) continue;
    let names: Dirent[];
    try {
      names = readdirSync(join(base, prefix), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const d of names) {
      const path = join(base, prefix, d.name);
      const owner = tempOwner(d.name);
      if (owner !== undefined) out.push({ kind, path, temp: owner });
      else if (d.isFile()) out.push({ kind, path, hex: digestOfFanout(prefix, d.name, suffix) });
    }
  }
  return out;
}

function readRegistrations(store: Store): { root: string; path: string }[] {
  const dir = join(store.dir, "projects");
  const out: { root: string; path: string }[] = [];
  for (const name of safeReaddir(dir)) {
    if (!name.endsWith(".json")) continue;
    const path = join(dir, name);
    try {
      const { root } = JSON.parse(readFileSync(path, "utf8")) as { root?: unknown };
      if (typeof root === "string" && projectKey(root) === name.slice(0, -5)) out.push({ root, path });
      else rmSync(path, { force: true });
    } catch {
      rmSync(path, { force: true });
    }
  }
  return out;
}

function removeIfDead(path: string, pid: number): boolean {
  if (pid === process.pid || isAlive(pid)) return false;
  rmSync(path, { force: true });
  return true;
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** `kiwi cache verify` over the context's cache: the report, one message per evicted entry, and the error to raise when any failed. */
export function verifyCacheDir(ctx: Pick<Context, "cacheDir" | "env">, onProgress?: (done: number, total: number) => void): { report: CacheVerifyReport; evictions: string[]; error?: KiwiError } {
  const report = verifyCache(openStore(ctx.cacheDir, ctx.env), onProgress);
  const evictions = report.evicted.map((e) => corruptError(e).message);
  if (evictions.length === 0) return { report, evictions };
  const error = new KiwiError("E_CACHE_CORRUPT", `${report.evicted.length} of ${report.blobs + report.index} cache entries failed verification and were evicted (first: ${evictions[0]})`, {
    hint: 'run "kiwi install" in the affected projects to restore them, and check what is writing to the cache',
    details: { ...report },
  });
  return { report, evictions, error };
}

/** `kiwi cache prune` over the context's cache. */
export function pruneCacheDir(ctx: Pick<Context, "cacheDir" | "env">, options: PruneOptions): PruneReport {
  return pruneCache(openStore(ctx.cacheDir, ctx.env), options);
}

/** `kiwi cache clean` over the context's cache: the top-level entries removed. */
export function cleanCacheDir(ctx: Pick<Context, "cacheDir" | "env">): string[] {
  return cleanCache(openStore(ctx.cacheDir, ctx.env));
}
