// Cold-run hashing on a second core: while the main thread discovers and parses manifests (the
// bulk of a cold lock), a worker walks .ai/tools/ and hashes every regular file. Each result
// carries the stat taken before reading, re-checked with fstat after, and the main thread uses it
// only for a file whose discovery stat is identical, exactly like a stat cache entry. When the
// main thread runs out of its own work first, it hashes the files the worker has not reached yet
// (help): the two claim files from opposite ends of one list through shared memory, so each file
// is hashed once and both finish together. The worker hands its results back as three values
// (paths NUL-joined, stats as one Float64Array, digests as one hex string), not one small array per
// file: ~10,000 structured-cloned arrays and a Map of as many objects cost the main thread ~5 ms
// at the point where it has nothing else to do.
import { ROW_WIDTH, isRegularFile } from "./stat-row.ts";
import type { FileIdentity } from "./stat-cache-io.ts";
import { IGNORED_NAMES } from "../integrity/tool-path.ts";

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

/** Files the two threads can share; past it the worker hashes alone. 4 MB of address space, touched only as used. */
const SHARED_FILES = 1 << 20;

/**
 * Hashes one file into `out`; nothing when it changed while being read or cannot be read (the main
 * thread then reads it itself, and reports it if it is a tool file). Serialised into the worker
 * with toString(), so it uses only its parameters and globals (Bun).
 */
function hashRow(fs: FsLike, abs: string, buffer: Buffer, out: Rows): void {
  let fd = -1;
  try {
    const before = fs.lstatSync(abs);
    fd = fs.openSync(abs, "r");
    const hasher = new Bun.CryptoHasher("sha256");
    // Up to the size the stat gave, and no read past it to see the end (a third of the calls for
    // a small file): a file that grew or changed meanwhile fails the fstat below.
    for (let total = 0; total < before.size; ) {
      const n = fs.readSync(fd, buffer, 0, buffer.length, null);
      if (n <= 0) break;
      hasher.update(buffer.subarray(0, n));
      total += n;
    }
    const after = fs.fstatSync(fd);
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs || after.ctimeMs !== before.ctimeMs || after.ino !== before.ino) return;
    const hex = hasher.digest("hex");
    // All three or none: row k of each is the same file.
    out.paths.push(abs);
    out.stats.push(before.size, before.mtimeMs, before.ctimeMs, before.ino);
    out.hexes.push(hex);
  } catch {
    // Unreadable: left to the main thread, as above.
  } finally {
    if (fd !== -1) fs.closeSync(fd);
  }
}

/**
 * The worker's whole program. It is serialised with toString() into a Blob URL, so it must stay
 * self-contained: only its parameters, hashRow and globals (Bun, Buffer, Atomics). File k of its
 * walk is hashed only once claimed in `claims` (1 = the worker's, 2 = help()'s); help() claims from
 * the end down, so the first file it finds claimed ends the worker's part.
 */
function workerMain(fs: FsLike, post: PostMessage, dir: string, ignored: string[], claims: Int32Array): void {
  const skip = new Set(ignored);
  const out: Rows = { paths: [], stats: [], hexes: [] };
  const buffer = Buffer.allocUnsafe(1 << 20);
  let k = 0;
  let met = false;
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
      else if (entry.isFile()) {
        const mine = k >= claims.length || Atomics.compareExchange(claims, k, 0, 1) === 0;
        k++;
        if (!mine) {
          met = true;
          return;
        }
        hashRow(fs, abs, buffer, out);
      }
    }
  };
  walk(dir);
  const stats = Float64Array.from(out.stats);
  post({ paths: out.paths.join("\0"), stats, hex: out.hexes.join("") }, [stats.buffer]);
}

/** Starts hashing every regular file under `dir` on a worker thread. */
export function startPrehash(dir: string): PrehashRun {
  const source = `import * as fs from "node:fs";\n${hashRow.toString()}\nself.onmessage = (e) => (${workerMain.toString()})(fs, (d, t) => postMessage(d, t), e.data.dir, e.data.ignored, new Int32Array(e.data.claims));\n`;
  const url = URL.createObjectURL(new Blob([source], { type: "application/javascript" }));
  const claims = new Int32Array(new SharedArrayBuffer(4 * SHARED_FILES));
  const helped: Rows = { paths: [], stats: [], hexes: [] };
  let worker: Worker | undefined;
  const done = new Promise<PrehashedFiles>((resolve) => {
    // help() has returned by the time the worker's message is handled (both run on this thread).
    const settle = (posted?: { paths: string[]; stats: Float64Array; hex: string }) => {
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
      settle(wellFormed(event.data));
      worker?.terminate();
    };
    worker.onerror = () => {
      settle();
      worker?.terminate();
    };
    worker.postMessage({ dir, ignored: [...IGNORED_NAMES], claims: claims.buffer });
  });
  return {
    results: () => done.finally(() => URL.revokeObjectURL(url)),
    help(tree) {
      const files = prehashOrder(tree, dir);
      const fs = require("node:fs") as FsLike;
      const buffer = Buffer.allocUnsafe(1 << 20);
      for (let k = Math.min(files.length, SHARED_FILES) - 1; k >= 0; k--) {
        if (Atomics.compareExchange(claims, k, 0, 2) !== 0) return;
        hashRow(fs, files[k]!, buffer, helped);
      }
    },
    cancel: () => worker?.terminate(),
  };
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
  const out: string[] = [];
  const skipped = new Uint8Array(raw.paths.length);
  for (let i = 0; i < raw.paths.length; i++) {
    const path = raw.paths[i]!;
    const parent = raw.parents[i]!;
    const name = path.slice(path.lastIndexOf("/") + 1);
    if ((parent !== -1 && skipped[parent]) || IGNORED_NAMES.has(name)) {
      skipped[i] = 1;
      continue;
    }
    if (isRegularFile(raw.stats[i * ROW_WIDTH + 4]!)) out.push(`${toolsDir}/${path}`);
  }
  return out;
}
