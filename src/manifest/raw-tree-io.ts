// The raw tree of .ai/tools: every entry by path, with the stat identity (size, mtime, ctime,
// inode, mode) of every file and folder, read with one readdir per folder and one lstat per
// entry and nothing else: no manifest is opened, parsed or normalised. It covers a superset of
// what discovery reads (all of .ai/tools). Its digest keys `kiwi check --staged`'s memo; its rows
// are what the lock index (lock-index-io.ts) records, so the next run can check the tree with one
// lstat per entry and no readdir at all (git's index answers the same question the same way).
// Discovery reads it too, as folder listings (TreeListing), when a caller walked it first. The walk
// of each entry of .ai/tools is cache/walk-io.ts's, shared with the cold lock's hashing worker.
// A tree with a symbolic link gives nothing (a link's own stat says nothing of its target), and
// an entry changed within the racy margin makes it racy, as in the stat cache.
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { RACY_MARGIN_MS } from "../cache/stat-cache-io.ts";
import { ROW_WIDTH, isFolder, isRegularFile } from "../cache/stat-row.ts";
import { type EntryStat, type FolderEntry, type Listing, TOOLS_DIR } from "./project-io.ts";
import { type TopListing, type WalkFs, type WalkRows, listFolder, walkTopEntry } from "../cache/walk-io.ts";

/** Every entry below .ai/tools in walk order (a folder before what it holds). */
export interface RawTree {
  /** Paths relative to .ai/tools, `/`-separated. */
  paths: string[];
  /** Index of each entry's folder in `paths`, -1 for entries directly in .ai/tools. */
  parents: number[];
  /** size, mtimeMs, ctimeMs, ino, mode per entry (ROW_WIDTH numbers each); the mode tells folders from files. */
  stats: number[];
  /** The stat of .ai/tools itself (its entries added or removed change it). */
  top: number[];
  /** Something changed within the racy margin of `startedAt`. */
  racy: boolean;
}

export interface RawFingerprint {
  digest: string;
  /** Something changed within the racy margin of `startedAt`: compare, but never remember. */
  racy: boolean;
  tree: RawTree;
}

/** .ai/tools's own stat and entries (cache/walk-io.ts), or undefined when the walk cannot vouch for the tree. */
export function listTop(root: string): TopListing | undefined {
  return listFolder(join(root, TOOLS_DIR));
}

/** The raw tree from the walks of each of .ai/tools's entries (`blocks`, in `listing`'s order), as one walk of it gives. */
export function joinRawTree(listing: TopListing, blocks: readonly WalkRows[], startedAt: number): RawTree {
  const limit = startedAt - RACY_MARGIN_MS;
  let racy = listing.top[1]! >= limit || listing.top[2]! >= limit;
  for (const { stats } of blocks) for (let o = 0; o < stats.length && !racy; o += ROW_WIDTH) if (stats[o + 1]! >= limit || stats[o + 2]! >= limit) racy = true;
  // One walk of the whole tree (walkRawTree): its rows are the tree's as they are.
  if (blocks.length === 1) {
    const { paths, parents, stats } = blocks[0]!;
    return { paths, parents, stats, top: listing.top, racy };
  }
  const paths: string[] = [];
  const parents: number[] = [];
  const stats: number[] = [];
  for (const block of blocks) {
    const base = paths.length;
    for (let i = 0; i < block.paths.length; i++) {
      paths.push(block.paths[i]!);
      const parent = block.parents[i]!;
      parents.push(parent === -1 ? -1 : parent + base);
    }
    for (const n of block.stats) stats.push(n);
  }
  return { paths, parents, stats, top: listing.top, racy };
}

/** The raw tree of `root`, or undefined when it cannot vouch for it (a symbolic link, an unreadable entry). */
export function walkRawTree(root: string, startedAt: number): RawTree | undefined {
  const listing = listTop(root);
  if (!listing) return undefined;
  const rows: WalkRows = { paths: [], parents: [], stats: [] };
  const fs = { lstatSync, readdirSync } as WalkFs;
  for (const name of listing.names) if (!walkTopEntry(fs, listing.toolsDir, name, rows)) return undefined;
  return joinRawTree(listing, [rows], startedAt);
}

/** The fingerprint of `root`'s tool tree and `extra` (kiwi's version, options), or undefined when it cannot vouch for the tree. */
export function rawTreeFingerprint(root: string, extra: unknown, startedAt: number): RawFingerprint | undefined {
  const tree = walkRawTree(root, startedAt);
  if (!tree) return undefined;
  const hasher = new Bun.CryptoHasher("sha256");
  // A folder's own stat is left out (as before the index kept it): its entries' paths say what it holds.
  const names: string[] = [JSON.stringify(extra), root];
  const numbers: number[] = [];
  for (let i = 0; i < tree.paths.length; i++) {
    const o = i * ROW_WIDTH;
    if (isFolder(tree.stats[o + 4]!)) {
      names.push(`${tree.paths[i]}/`);
      continue;
    }
    names.push(tree.paths[i]!);
    for (let k = 0; k < ROW_WIDTH; k++) numbers.push(tree.stats[o + k]!);
  }
  hasher.update(names.join("\0"));
  hasher.update(new Uint8Array(Float64Array.from(numbers).buffer));
  return { digest: hasher.digest("hex"), racy: tree.racy, tree };
}

class ListedEntry implements FolderEntry {
  constructor(
    readonly name: string,
    private readonly mode: number,
    /** The entry's index in the raw tree, so its stat needs no lookup by path. */
    readonly at: number,
  ) {}
  isDirectory(): boolean {
    return isFolder(this.mode);
  }
  isFile(): boolean {
    return isRegularFile(this.mode);
  }
  isSymbolicLink(): boolean {
    return false; // a raw tree never holds one (walkRawTree gives up on the first)
  }
}

/**
 * A raw tree as folder listings and stats by absolute path, so discovery reads the walk a caller
 * has just taken (the staged check's memo key, the full lock's index) instead of a second readdir
 * and lstat of every entry: half of discovery's system calls on a large tree. Covers exactly the
 * tree's entries; anything else (a path outside .ai/tools) reads as unknown, and the disk answers.
 * Only folders are indexed by path: a file is found among its folder's entries (a few each), as
 * keying every entry's absolute path cost a cold 1,000-tool lock ~5 ms of its main thread.
 */
export class TreeListing implements Listing {
  private readonly folders = new Map<string, number>();
  private readonly children = new Map<number, number[]>();

  constructor(
    private readonly tree: RawTree,
    private readonly toolsDir: string,
  ) {
    const { paths, parents, stats } = tree;
    for (let i = 0; i < paths.length; i++) {
      if (isFolder(stats[i * ROW_WIDTH + 4]!)) this.folders.set(`${toolsDir}/${paths[i]}`, i);
      const list = this.children.get(parents[i]!);
      if (list) list.push(i);
      else this.children.set(parents[i]!, [i]);
    }
  }

  /** The entries of folder `abs` (unsorted, as readdir), or undefined when the tree does not hold that folder. */
  entries(abs: string): FolderEntry[] | undefined {
    const at = abs === this.toolsDir ? -1 : this.folders.get(abs);
    if (at === undefined) return undefined;
    const { paths, stats } = this.tree;
    return (this.children.get(at) ?? []).map((i) => {
      const path = paths[i]!;
      return new ListedEntry(path.slice(path.lastIndexOf("/") + 1), stats[i * ROW_WIDTH + 4]!, i);
    });
  }

  /** The recorded stat of `abs`, or undefined when the tree does not hold it. */
  stat(abs: string): EntryStat | undefined {
    const i = this.folders.get(abs) ?? this.fileAt(abs);
    return i === undefined ? undefined : this.statAt(i);
  }

  /** The recorded stat of an entry entries() gave, or undefined for any other entry. */
  entryStat(entry: FolderEntry): EntryStat | undefined {
    return entry instanceof ListedEntry ? this.statAt(entry.at) : undefined;
  }

  private statAt(i: number): EntryStat {
    const o = i * ROW_WIDTH;
    const s = this.tree.stats;
    return { size: s[o]!, mtimeMs: s[o + 1]!, ctimeMs: s[o + 2]!, ino: s[o + 3]!, mode: s[o + 4]! };
  }

  /** The index of the entry at `abs` among its folder's entries, or undefined. */
  private fileAt(abs: string): number | undefined {
    const slash = abs.lastIndexOf("/");
    const folder = abs.slice(0, slash);
    const parent = folder === this.toolsDir ? -1 : this.folders.get(folder);
    if (parent === undefined) return undefined;
    const name = abs.slice(slash + 1);
    const { paths } = this.tree;
    for (const i of this.children.get(parent) ?? []) {
      const path = paths[i]!;
      // The entry's own name is the path's last segment.
      if (path.endsWith(name) && (path.length === name.length || path.charCodeAt(path.length - name.length - 1) === 47)) return i;
    }
    return undefined;
  }
}
