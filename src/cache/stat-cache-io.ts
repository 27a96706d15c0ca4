// The stat cache: (size, mtime, ctime, inode) -> sha256 per file of one project, so a warm
// `kiwi lock` reads no unchanged file; plus per-tool integrity memos and the digest of the tree
// that last passed the pre-lock check, so an unchanged tree is neither re-rendered nor re-checked. It is a hint, never a source of truth: `kiwi verify` and
// installs re-read bytes, and an unreadable or foreign stat cache is simply ignored. Its bytes
// are stat-cache-format.ts's binary layout.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "./atomic-io.ts";
import type { Faults } from "./faults-io.ts";
import { statCacheRelPath, statRelPath } from "./cache-layout.ts";
import { type StatRow, type ToolMemoRow, decodeStatCache, encodeStatCache } from "./stat-cache-format.ts";

/**
 * A file whose mtime or ctime is this close to the start of hashing is "racy": a second write in
 * the same timestamp tick would leave its stat unchanged, so it is hashed again next time rather
 * than remembered (git's racy-clean rule, with a margin that covers 1-2 s file systems).
 */
export const RACY_MARGIN_MS = 2000;

/** What the stat cache compares to decide a file is unchanged (discovery's ToolFile carries it). */
export interface FileIdentity {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

export type Row = StatRow;

/** A tool's integrity memo: the digest of everything integrity is computed from, and the result. */
export type ToolMemo = ToolMemoRow;

/** The rows and tool memos one run looked up or recorded: a subset a caller may keep on its own. */
export interface StatSubset {
  entries: Record<string, Row>;
  tools: Record<string, ToolMemo>;
}

/** A tree that passed the pre-lock check: the digest of its context (kiwi version, options, discovery findings) and each tool's integrity. */
export interface CheckedTree {
  context: string;
  tools: Record<string, string>;
}

/** The stat cache of one project for one run: lookups, records, and a save at the end. */
export class StatCache {
  private readonly next = new Map<string, Row>();
  private readonly nextTools = new Map<string, ToolMemo>();
  private dirty = false;
  /** The tree that last passed the pre-lock check. */
  checked: CheckedTree | null;
  hits = 0;
  misses = 0;

  constructor(
    readonly file: string,
    private readonly root: string,
    private readonly previous: ReadonlyMap<string, Row>,
    /** Start of this run's hashing (ms since epoch), for the racy rule. */
    private readonly startedAt: number,
    private readonly previousTools: ReadonlyMap<string, ToolMemo> = new Map(),
    previousChecked: CheckedTree | null = null,
  ) {
    this.checked = previousChecked;
  }

  /** The integrity and manifest digest remembered for a tool whose inputs hash to `inputDigest`. */
  lookupTool(key: string, inputDigest: string): { integrity: string; manifestDigest: string } | undefined {
    const memo = this.previousTools.get(key);
    if (memo && memo[0] === inputDigest) {
      this.nextTools.set(key, memo);
      return { integrity: memo[1], manifestDigest: memo[2] };
    }
    return undefined;
  }

  /** Remembers a tool's integrity and manifest digest for its inputs' digest. */
  recordTool(key: string, inputDigest: string, integrity: string, manifestDigest: string): void {
    this.nextTools.set(key, [inputDigest, integrity, manifestDigest]);
    this.dirty = true;
  }

  /** Remembers that this tree passed the pre-lock check. */
  recordChecked(checked: CheckedTree): void {
    const before = this.checked;
    const same = before?.context === checked.context && Object.keys(before.tools).length === Object.keys(checked.tools).length && Object.entries(checked.tools).every(([id, d]) => before.tools[id] === d);
    if (same) return;
    this.checked = checked;
    this.dirty = true;
  }

  /** The remembered digest of a file whose stat is unchanged, else undefined. */
  lookup(key: string, file: FileIdentity): string | undefined {
    // An empty cache (a cold run) is asked once per file: no key to hash for a sure miss.
    const row = this.previous.size === 0 ? undefined : this.previous.get(key);
    if (row && row[0] === file.size && row[1] === file.mtimeMs && row[2] === file.ctimeMs && row[3] === file.ino) {
      this.next.set(key, row);
      this.hits++;
      return row[4];
    }
    this.misses++;
    return undefined;
  }

  /** Remembers a digest read from disk with the stat taken before reading (racy files are skipped). */
  record(key: string, file: FileIdentity, hex: string): void {
    this.dirty = true;
    if (Math.max(file.mtimeMs, file.ctimeMs) >= this.startedAt - RACY_MARGIN_MS) return;
    this.next.set(key, [file.size, file.mtimeMs, file.ctimeMs, file.ino, hex]);
  }

  /** What this run looked up with success or recorded (racy files excluded), and the tool memos it used. */
  seen(): StatSubset {
    return { entries: Object.fromEntries(this.next), tools: Object.fromEntries(this.nextTools) };
  }

  /** Writes the cache when it changed (files seen this run only). Returns a warning instead of throwing. */
  save(faults?: Faults): string | undefined {
    if (!this.dirty && this.next.size === this.previous.size && this.nextTools.size === this.previousTools.size) return undefined;
    try {
      writeFileAtomic(this.file, encodeStatCache({ root: this.root, entries: this.next, tools: this.nextTools, checked: this.checked }), { faults, writePoint: "stat-write" });
      // The JSON stat cache this file replaced (same key, .json) is never read again: ~2 MB per 10,000 files.
      rmSync(this.file.replace(/\.stat$/, ".json"), { force: true });
      return undefined;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      return `could not save the stat cache ${this.file} (${code}); the next run hashes every file again`;
    }
  }
}

/** The stat cache file of a project. */
export function statCachePath(cacheDir: string, root: string): string {
  return join(cacheDir, statCacheRelPath(root));
}

/** Loads a project's stat cache; a missing, unreadable, damaged or foreign file gives an empty cache. */
export function loadStatCache(cacheDir: string, root: string, startedAt: number): StatCache {
  const file = statCachePath(cacheDir, root);
  let data;
  try {
    data = decodeStatCache(readFileSync(file));
  } catch {
    // No stat cache yet, or an unreadable one: every file is hashed, which is always correct.
  }
  if (!data || data.root !== root) return new StatCache(file, root, new Map(), startedAt);
  return new StatCache(file, root, data.entries, startedAt, data.tools, data.checked);
}

/**
 * A read-only stat cache over a subset kept elsewhere (exec's chain memo), its rows and memos
 * checked like the project file's. It is never saved (its file name is empty).
 */
export function statCacheOf(root: string, subset: StatSubset, startedAt: number): StatCache {
  const entries = new Map(Object.entries(subset.entries ?? {}).filter(([, row]) => isRow(row)));
  const tools = new Map(Object.entries(subset.tools ?? {}).filter(([, m]) => isMemo(m)));
  return new StatCache("", root, entries, startedAt, tools);
}

function isMemo(memo: unknown): memo is ToolMemo {
  return Array.isArray(memo) && memo.length === 3 && memo.every((d) => typeof d === "string" && /^[0-9a-f]{64}$/.test(d));
}

function isRow(row: unknown): row is Row {
  return Array.isArray(row) && row.length === 5 && row.slice(0, 4).every((n) => typeof n === "number") && typeof row[4] === "string" && /^[0-9a-f]{64}$/.test(row[4]);
}

/**
 * The tree memo: the stat fingerprint of a whole project (every manifest and tool file) and the
 * sha256 of the lockfile kiwi wrote or confirmed for it. When both still match, `kiwi lock` has
 * nothing to do. A small file of its own, so checking it costs no parse of the stat cache.
 */
export interface TreeMemo {
  fingerprint: string;
  lockfile: string;
}

function treeMemoPath(cacheDir: string, root: string): string {
  return join(cacheDir, statRelPath(root).replace(/\.json$/, ".tree.json"));
}

/** The project's tree memo, or undefined when absent or unreadable. */
export function loadTreeMemo(cacheDir: string, root: string): TreeMemo | undefined {
  try {
    const memo = JSON.parse(readFileSync(treeMemoPath(cacheDir, root), "utf8")) as TreeMemo & { root?: string };
    return memo.root === root && typeof memo.fingerprint === "string" && typeof memo.lockfile === "string" ? memo : undefined;
  } catch {
    return undefined;
  }
}

/** Saves the tree memo; a cache that cannot be written only costs speed. */
export function saveTreeMemo(cacheDir: string, root: string, memo: TreeMemo, faults?: Faults): void {
  try {
    writeFileAtomic(treeMemoPath(cacheDir, root), JSON.stringify({ root, ...memo }), { faults, writePoint: "stat-write" });
  } catch {
    // Same as the stat cache: the warning for an unwritable cache is given once, by StatCache.save.
  }
}
