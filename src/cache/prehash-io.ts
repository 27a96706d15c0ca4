// Cold-run hashing on a second core: while the main thread discovers and parses manifests (the
// bulk of a cold lock), a worker walks .ai/tools/ and hashes every regular file. Each result
// carries the stat taken before reading, re-checked with fstat after, and the main thread uses it
// only for a file whose discovery stat is identical, exactly like a stat cache entry. Given the
// listing of .ai/tools, the worker first takes a share of the main thread's raw walk (walk()): the
// two threads claim its entries in turn, so the walk that discovery waits for takes about half as
// long, and the worker reads each file of its share against the stat that walk took, which is
// then one lstat per file for both threads instead of two (a cold 1,000-tool lock's main thread
// reached discovery ~35 ms sooner). When the main thread runs out of its own work first, it
// hashes the files the worker has not reached yet (help), reading them against the walk's stats
// too: the two claim files from opposite ends of one list through shared memory, so each file is
// hashed once and both finish together. The worker hands its results back as three values
// (paths NUL-joined, stats as one Float64Array, digests as one hex string), not one small array per
// file: ~10,000 structured-cloned arrays and a Map of as many objects cost the main thread ~5 ms
// at the point where it has nothing else to do.
import { lstatSync, readdirSync } from "node:fs";
import { ROW_WIDTH, isRegularFile } from "./stat-row.ts";
import type { FileIdentity } from "./stat-cache-io.ts";
import { IGNORED_NAMES } from "../integrity/tool-path.ts";
import { type TopListing, type WalkFs, type WalkRows, walkTopEntry } from "./walk-io.ts";

/** A walk of the folder (manifest/raw-tree-io.ts's RawTree): each entry's path, folder and stat row, in readdir order. */
export interface WalkedTree {
  paths: readonly string[];
  parents: readonly number[];
  stats: readonly number[];
}

/** One file hashed by the worker, with the identity it had while being read. */
export interface Prehashed {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  sha256: string;
}

/** Every file hashed, by absolute path: the identity it had while being read and its digest. */
export class PrehashedFiles {
  private readonly index = new Map<string, number>();

  /** `stats` holds size, mtimeMs, ctimeMs and ino of file k at 4k; `hex` its digest at 64k. */
  constructor(
    paths: readonly string[],
    private readonly stats: Float64Array,
    private readonly hex: string,
  ) {
    for (let k = 0; k < paths.length; k++) this.index.set(paths[k]!, k);
  }

  get size(): number {
    return this.index.size;
  }

  paths(): IterableIterator<string> {
    return this.index.keys();
  }

  get(abs: string): Prehashed | undefined {
    const k = this.index.get(abs);
    if (k === undefined) return undefined;
    const s = this.stats;
    return { size: s[k * 4]!, mtimeMs: s[k * 4 + 1]!, ctimeMs: s[k * 4 + 2]!, ino: s[k * 4 + 3]!, sha256: this.hex.slice(k * 64, k * 64 + 64) };
  }

  /** The digest of `abs` when `file` is the identity it had while being read, else undefined. */
  digestIf(abs: string, file: FileIdentity): string | undefined {
    const k = this.index.get(abs);
    if (k === undefined) return undefined;
    const s = this.stats;
    if (s[k * 4] !== file.size || s[k * 4 + 1] !== file.mtimeMs || s[k * 4 + 2] !== file.ctimeMs || s[k * 4 + 3] !== file.ino) return undefined;
    return this.hex.slice(k * 64, k * 64 + 64);
  }
}

/** A running pre-hash; `results()` waits for the worker and never rejects (a failure means "none"). */
export interface PrehashRun {
  /** Every file hashed, by the worker or by help(). */
  results(): Promise<PrehashedFiles>;
  /**
   * Hashes on the calling thread the files of `tree` (a raw walk of the same folder) that the
   * worker has not reached, from the last one down, until the two meet. For a thread that has
   * nothing else to do until the results.
   */
  help(tree: WalkedTree): void;
  /**
   * With a listing of .ai/tools given to startPrehash: the walk of each of its entries (the raw
   * walk's rows, in the listing's order), this thread and the worker each walking the entries it
   * claims first; undefined when the tree cannot be vouched for (see walkTopEntry). Call once.
   */
  walk(): Promise<WalkRows[] | undefined>;
  cancel(): void;
}

type FsLike = typeof import("node:fs");
type PostMessage = (data: unknown, transfer: ArrayBuffer[]) => void;
/** Files hashed by one thread: path k, its size, mtimeMs, ctimeMs and ino at 4k of `stats`, its digest at k of `hexes`. */
interface Rows {
  paths: string[];
  stats: number[];
  hexes: string[];
}
/** What the worker posts: Rows joined (paths by NUL, digests end to end) with the stats as float64. */
interface Posted {
  paths: string;
  stats: Float64Array;
  hex: string;
}
/** What the worker posts of its share of the walk first: entry k of the listing's walk for each k it claimed (paths joined by NUL), or gave up. */
interface PostedWalk {
  walked: { k: number; paths: string; parents: number[]; stats: Float64Array }[];
  gaveUp: boolean;
}

/** Files the two threads can share; past it the worker hashes alone. 4 MB of address space, touched only as used. */
const SHARED_FILES = 1 << 20;

/**
 * Hashes one file into `out`; nothing when it changed while being read or cannot be read (the main
 * thread then reads it itself, and reports it if it is a tool file). `known` is the file's stat
 * row when a walk of this run took it (size, mtimeMs, ctimeMs, ino): the fstat after reading must
 * give it, as it must give the lstat taken here otherwise. Opened non-blocking, so a file replaced
 * by a FIFO since its stat never stalls the thread (its fstat differs, and it is left out).
 * Serialised into the worker with toString(), so it uses only its parameters and globals (Bun).
 */
function hashRow(fs: FsLike, abs: string, buffer: Buffer, out: Rows, known?: ArrayLike<number>, at = 0): void {
  let fd = -1;
  try {
    let size: number, mtimeMs: number, ctimeMs: number, ino: number;
    if (known) {
      size = known[at]!;
      mtimeMs = known[at + 1]!;
      ctimeMs = known[at + 2]!;
      ino = known[at + 3]!;
    } else ({ size, mtimeMs, ctimeMs, ino } = fs.lstatSync(abs));
    fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    // Up to the size the stat gave, and no read past it to see the end (a third of the calls for
    // a small file): a file that grew or changed meanwhile fails the fstat below. A file that fits
    // the buffer is read whole into it and digested in one native call (no hasher object per file).
    let hex: string;
    if (size <= buffer.length) {
      let total = 0;
      while (total < size) {
        const n = fs.readSync(fd, buffer, total, buffer.length - total, null);
        if (n <= 0) break;
        total += n;
      }
      hex = Bun.SHA256.hash(buffer.subarray(0, total), "hex") as string;
    } else {
      const hasher = new Bun.CryptoHasher("sha256");
      for (let total = 0; total < size; ) {
        const n = fs.readSync(fd, buffer, 0, buffer.length, null);
        if (n <= 0) break;
        hasher.update(buffer.subarray(0, n));
        total += n;
      }
      hex = hasher.digest("hex");
    }
    const after = fs.fstatSync(fd);
    if (after.size !== size || after.mtimeMs !== mtimeMs || after.ctimeMs !== ctimeMs || after.ino !== ino) return;
    // All three or none: row k of each is the same file.
    out.paths.push(abs);
    out.stats.push(size, mtimeMs, ctimeMs, ino);
    out.hexes.push(hex);
  } catch {
    // Unreadable: left to the main thread, as above.
  } finally {
    if (fd !== -1) fs.closeSync(fd);
  }
}

/** `control` of the two threads: the worker has hashed its part, and a walk gave up (the tree is not vouched for); entry k of the listing is claimed at CLAIMED + k (1 the worker's, 2 the main thread's). */
const HASHED = 0;
const GAVE_UP = 1;
const CLAIMED = 2;

/**
 * The worker's whole program. It is serialised with toString() into a Blob URL, so it must stay
 * self-contained: only its parameters, hashRow, walkTopEntry and globals (Bun, Buffer, Atomics).
 * Given the listing of `dir` (names and kinds), it first walks the entries it claims in `control`
 * (the main thread walks the others) and posts those walks. Then it hashes: file k of the walk
 * order is hashed only once claimed in `claims` (1 = the worker's, 2 = help()'s); help() claims
 * from the end down, so the first file it finds claimed ends the worker's part. A file of an entry
 * it walked itself is read against the stat that walk took (no second lstat).
 */
function workerMain(fs: FsLike, post: PostMessage, dir: string, ignored: string[], claims: Int32Array, control: Int32Array, names: string[] | undefined, kinds: number[] | undefined, walkEntry: typeof walkTopEntry): void {
  const skip = new Set(ignored);
  const out: Rows = { paths: [], stats: [], hexes: [] };
  const buffer = Buffer.allocUnsafe(1 << 20);
  // The worker's share of the walk: entry k's rows, for each k it claimed and walked whole.
  const own = new Map<number, WalkRows>();
  if (names) {
    const walked: PostedWalk["walked"] = [];
    let gaveUp = false;
    for (let k = 0; k < names.length && !gaveUp; k++) {
      if (Atomics.load(control, 1) !== 0) break;
      if (Atomics.compareExchange(control, 2 + k, 0, 1) !== 0) continue;
      const rows: WalkRows = { paths: [], parents: [], stats: [] };
      if (!walkEntry(fs, dir, names[k]!, rows)) {
        gaveUp = true;
        Atomics.store(control, 1, 1);
        break;
      }
      own.set(k, rows);
      walked.push({ k, paths: rows.paths.join("\0"), parents: rows.parents, stats: Float64Array.from(rows.stats) });
    }
    post({ walked, gaveUp } satisfies PostedWalk, []);
  }
  let k = 0;
  let met = false;
  const claim = (): boolean => {
    const mine = k >= claims.length || Atomics.compareExchange(claims, k, 0, 1) === 0;
    k++;
    if (!mine) met = true;
    return mine;
  };
  const walk = (path: string): void => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = fs.readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (met) return;
      if (skip.has(entry.name)) continue;
      const abs = `${path}/${entry.name}`;
      if (entry.isDirectory()) walk(abs);
      else if (entry.isFile() && claim()) hashRow(fs, abs, buffer, out);
    }
  };
  // An entry the worker walked: its regular files in walk order, as prehashOrder lists them.
  const hashWalked = (rows: WalkRows): void => {
    const skipped = new Uint8Array(rows.paths.length);
    for (let i = 0; i < rows.paths.length && !met; i++) {
      const path = rows.paths[i]!;
      const parent = rows.parents[i]!;
      if ((parent !== -1 && skipped[parent]) || skip.has(path.slice(path.lastIndexOf("/") + 1))) {
        skipped[i] = 1;
        continue;
      }
      if ((rows.stats[i * 5 + 4]! & 0o170000) === 0o100000 && claim()) hashRow(fs, `${dir}/${path}`, buffer, out, rows.stats, i * 5);
    }
  };
  if (names && kinds) {
    for (let e = 0; e < names.length && !met; e++) {
      const rows = own.get(e);
      if (rows) hashWalked(rows);
      else if (skip.has(names[e]!)) continue;
      else if (kinds[e] === 1) walk(`${dir}/${names[e]}`);
      else if (kinds[e] === 2 && claim()) hashRow(fs, `${dir}/${names[e]}`, buffer, out);
    }
  } else walk(dir);
  Atomics.store(control, 0, 1);
  const stats = Float64Array.from(out.stats);
  post({ paths: out.paths.join("\0"), stats, hex: out.hexes.join("") }, [stats.buffer]);
}

/**
 * Starts hashing every regular file under `dir` on a worker thread. With `listing` (what listTop
 * read of `dir`), the worker first takes its share of the raw walk (see walk()).
 */
export function startPrehash(dir: string, listing?: TopListing): PrehashRun {
  const source = `import * as fs from "node:fs";\n${hashRow.toString()}\nconst walkEntry = ${walkTopEntry.toString()};\nself.onmessage = (e) => (${workerMain.toString()})(fs, (d, t) => postMessage(d, t), e.data.dir, e.data.ignored, new Int32Array(e.data.claims), new Int32Array(e.data.control), e.data.names, e.data.kinds, walkEntry);\n`;
  const url = URL.createObjectURL(new Blob([source], { type: "application/javascript" }));
  const claims = new Int32Array(new SharedArrayBuffer(4 * SHARED_FILES));
  const names = listing?.names;
  const control = new Int32Array(new SharedArrayBuffer(4 * (CLAIMED + (names?.length ?? 0))));
  const helped: Rows = { paths: [], stats: [], hexes: [] };
  let worker: Worker | undefined;
  let walked: (posted: TheirWalk | undefined) => void = () => {};
  const theirWalk = new Promise<TheirWalk | undefined>((resolve) => (walked = resolve));
  const done = new Promise<PrehashedFiles>((resolve) => {
    // help() has returned by the time the worker's message is handled (both run on this thread).
    const settle = (posted?: { paths: string[]; stats: Float64Array; hex: string }) => {
      walked(undefined); // a worker that failed before posting its walk posts none
      const paths = posted?.paths ?? [];
      const count = paths.length;
      const stats = new Float64Array((count + helped.paths.length) * 4);
      if (posted) stats.set(posted.stats);
      stats.set(helped.stats, count * 4);
      resolve(new PrehashedFiles([...paths, ...helped.paths], stats, (posted?.hex ?? "") + helped.hexes.join("")));
    };
    try {
      worker = new Worker(url);
    } catch {
      settle();
      return;
    }
    worker.onmessage = (event: MessageEvent) => {
      const walk = wellFormedWalk(event.data);
      if (walk !== false) {
        walked(walk);
        return;
      }
      settle(wellFormed(event.data));
      worker?.terminate();
    };
    worker.onerror = () => {
      settle();
      worker?.terminate();
    };
    worker.postMessage({ dir, ignored: [...IGNORED_NAMES], claims: claims.buffer, control: control.buffer, names, kinds: listing?.kinds });
  });
  return {
    results: () => done.finally(() => URL.revokeObjectURL(url)),
    help(tree) {
      // Nothing left once the worker is through its list (the walk of the order alone costs ~3 ms).
      if (Atomics.load(control, HASHED) !== 0) return;
      const rows = prehashRows(tree);
      const fs = require("node:fs") as FsLike;
      const buffer = Buffer.allocUnsafe(1 << 20);
      // Each file is read against the stat the walk took, as the worker reads the files it walked.
      const known = tree.stats;
      for (let k = Math.min(rows.length, SHARED_FILES) - 1; k >= 0; k--) {
        if (Atomics.compareExchange(claims, k, 0, 2) !== 0) return;
        hashRow(fs, `${dir}/${tree.paths[rows[k]!]}`, buffer, helped, known, rows[k]! * ROW_WIDTH);
      }
    },
    async walk() {
      if (!names) return undefined;
      const fs: WalkFs = { lstatSync, readdirSync } as WalkFs;
      const blocks: (WalkRows | undefined)[] = names.map(() => undefined);
      const walkHere = (k: number): boolean => {
        const rows: WalkRows = { paths: [], parents: [], stats: [] };
        if (!walkTopEntry(fs, dir, names[k]!, rows)) return false;
        blocks[k] = rows;
        return true;
      };
      for (let k = 0; k < names.length; k++) {
        if (Atomics.load(control, GAVE_UP) !== 0) return undefined;
        if (Atomics.compareExchange(control, CLAIMED + k, 0, 2) !== 0) continue;
        if (!walkHere(k)) {
          Atomics.store(control, GAVE_UP, 1);
          return undefined;
        }
      }
      if (names.some((_, k) => Atomics.load(control, CLAIMED + k) === 1)) {
        const theirs = await theirWalk;
        if (theirs?.gaveUp) return undefined;
        for (const w of theirs?.walked ?? []) if (names[w.k] !== undefined && blocks[w.k] === undefined) blocks[w.k] = w.rows;
      }
      // Entries the worker claimed but never posted (it failed): walked here.
      for (let k = 0; k < names.length; k++) if (blocks[k] === undefined && !walkHere(k)) return undefined;
      return blocks as WalkRows[];
    },
    cancel: () => worker?.terminate(),
  };
}

/** The worker's share of the walk, as rows. */
interface TheirWalk {
  walked: { k: number; rows: WalkRows }[];
  gaveUp: boolean;
}

/** The worker's walk message as rows, undefined when it is one but malformed, false when it is not a walk message. */
function wellFormedWalk(data: unknown): TheirWalk | undefined | false {
  const d = data as PostedWalk | undefined;
  if (typeof d !== "object" || d === null || !("walked" in d)) return false;
  if (!Array.isArray(d.walked) || typeof d.gaveUp !== "boolean") return undefined;
  const walked: { k: number; rows: WalkRows }[] = [];
  for (const w of d.walked) {
    if (!Number.isInteger(w?.k) || typeof w.paths !== "string" || !Array.isArray(w.parents) || !(w.stats instanceof Float64Array)) return undefined;
    const paths = w.paths.split("\0");
    if (w.parents.length !== paths.length || w.stats.length !== paths.length * ROW_WIDTH) return undefined;
    walked.push({ k: w.k, rows: { paths, parents: w.parents, stats: Array.from(w.stats) } });
  }
  return { walked, gaveUp: d.gaveUp };
}

/** The worker's message with its paths split, when it has the shape workerMain posts (paths, stats and digests agreeing in count), else undefined. */
function wellFormed(data: unknown): { paths: string[]; stats: Float64Array; hex: string } | undefined {
  const d = data as Posted | undefined;
  if (typeof d?.paths !== "string" || !(d.stats instanceof Float64Array) || typeof d.hex !== "string") return undefined;
  const paths = d.paths === "" ? [] : d.paths.split("\0");
  return d.stats.length === paths.length * 4 && d.hex.length === paths.length * 64 ? { paths, stats: d.stats, hex: d.hex } : undefined;
}

/**
 * The regular files of a raw tree of `toolsDir`, as absolute paths in the order the worker walks
 * them (one readdir order, ignored names and what is below them left out), for help(). A tree that
 * changed between the two walks only misaligns the claims: a file neither thread hashed is hashed
 * by the merge, as a file the worker could not read.
 */
export function prehashOrder(raw: WalkedTree, toolsDir: string): string[] {
  return prehashRows(raw).map((i) => `${toolsDir}/${raw.paths[i]}`);
}

/** prehashOrder as entry positions in the raw tree. */
function prehashRows(raw: WalkedTree): number[] {
  const out: number[] = [];
  const skipped = new Uint8Array(raw.paths.length);
  for (let i = 0; i < raw.paths.length; i++) {
    const path = raw.paths[i]!;
    const parent = raw.parents[i]!;
    const name = path.slice(path.lastIndexOf("/") + 1);
    if ((parent !== -1 && skipped[parent]) || IGNORED_NAMES.has(name)) {
      skipped[i] = 1;
      continue;
    }
    if (isRegularFile(raw.stats[i * ROW_WIDTH + 4]!)) out.push(i);
  }
  return out;
}
