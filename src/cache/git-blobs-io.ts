// A few git blobs kept in the cache under their own ids (`check/git-blobs/<id>`), so the staged
// check finds HEAD's lockfile without starting `git show`: the lockfile a commit stages is kept
// when it is checked, and after the commit it is HEAD's. Bytes are kept only once they hash to the
// id, and every read hashes them again, so a damaged or planted file is evicted and read as a
// miss, never served. The folder holds the newest KEEP blobs (~0.5 MB each for 1,000 tools).
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, readdirSync, statSync, unlinkSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "./atomic-io.ts";
import { blobIdFormat, isBlobOf, isBlobTextOf, isNullBlobId } from "../integrity/git-blob.ts";

/** Where the blobs live in the cache. */
export const GIT_BLOBS_DIR = join("check", "git-blobs");

/** How many blobs are kept: a commit's lockfile and a few relocks staged before the next commit. */
const KEEP = 16;

function blobPath(cacheDir: string, id: string): string | undefined {
  return blobIdFormat(id) === undefined ? undefined : join(cacheDir, GIT_BLOBS_DIR, id);
}

/** The bytes of blob `id` when the cache holds them and they hash to `id`; a file that does not is removed. */
export function readGitBlob(cacheDir: string, id: string): Uint8Array | undefined {
  const path = blobPath(cacheDir, id);
  if (path === undefined) return undefined;
  try {
    return verified(path, id, readFileSync(path));
  } catch {
    return undefined;
  }
}

/**
 * The kept blob `id` as text (what gitText gives of its bytes) without decoding it twice: read as
 * text (~1 ms for 2 MB, where decoding bytes read first cost ~2 ms more) and vouched for by hashing
 * that text's UTF-8. Undefined when the file cannot be read or the text's UTF-8 is not the blob: a
 * damaged file, or bytes that are not UTF-8 or start with a byte order mark (which decoding
 * changes); readGitBlob then reads the bytes (and removes a damaged file).
 */
export function readGitBlobText(cacheDir: string, id: string): string | undefined {
  const path = blobPath(cacheDir, id);
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  if (!isBlobTextOf(text, id)) return undefined;
  touch(path);
  return text;
}

/** Whether the cache holds a file under blob `id` (not yet vouched for: every read hashes it). */
export function hasGitBlob(cacheDir: string, id: string): boolean {
  const path = blobPath(cacheDir, id);
  return path !== undefined && existsSync(path);
}

/** Bytes read and compared at a time by readGitBlobBeside. */
const CHUNK = 32 * 1024;

/**
 * The kept blob `id` as text (what gitText gives of its bytes), told as it differs from `text`:
 * its first `same` and last `tail` characters are `text`'s (not overlapping in either), `middle`
 * between. Its bytes are read in chunks, each hashed and compared with `text` from both ends, and
 * only chunks that differ are kept: a blob that is the lockfile before a relock is never held
 * whole (~2 MB for 1,000 tools, which tipped the staged check into a collection). Every byte is
 * hashed as before: undefined when they are not the blob (the caller then reads it the long way,
 * which removes a damaged file), when the file cannot be read, or when `text` is not ASCII (its
 * characters are then not its bytes).
 */
export function readGitBlobBeside(cacheDir: string, id: string, text: string): { same: number; tail: number; middle: string } | undefined {
  const path = blobPath(cacheDir, id);
  const format = blobIdFormat(id);
  if (path === undefined || format === undefined || isNullBlobId(id) || Buffer.byteLength(text) !== text.length) return undefined;
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const hasher = new Bun.CryptoHasher(format).update(`blob ${size}\0`);
    const chunk = Buffer.allocUnsafe(CHUNK);
    const mine = Buffer.allocUnsafe(CHUNK);
    // Blob byte k sits at text[k] in the prefix's alignment and at text[k + shift] in the tail's.
    const shift = text.length - size;
    let same = -1; // the first byte that differs in the prefix's alignment; -1 while none has
    let lastDiff = -1; // the last byte that differs in the tail's alignment, from the chunk `same` is in on
    // Of each chunk from there on that differs in the tail's alignment, by offset: its bytes from
    // `same` to its last difference (the rest are the text's in that alignment).
    const kept = new Map<number, Buffer>();
    for (let at = 0; at < size; ) {
      const want = Math.min(CHUNK, size - at);
      // Short of its stat (being replaced, or damaged), or a short read: the caller reads it whole.
      if (readSync(fd, chunk, 0, want, at) !== want) return undefined;
      const got = chunk.subarray(0, want);
      hasher.update(got);
      if (same === -1) {
        const d = firstDifference(got, text, at, mine);
        if (d !== -1) same = at + d;
      }
      if (same !== -1) {
        const d = lastDifference(got, text, at + shift, mine);
        if (d !== -1) {
          lastDiff = at + d;
          kept.set(at, Buffer.from(got.subarray(Math.max(0, same - at), d + 1)));
        }
      }
      at += want;
    }
    if (readSync(fd, chunk, 0, 1, size) !== 0) return undefined; // longer than its stat
    if (hasher.digest("hex") !== id) return undefined;
    const common = Math.min(size, text.length);
    if (same === -1) same = common;
    const tail = Math.min(size - (lastDiff + 1), common - same);
    // The middle's bytes: kept chunks as read, every other chunk is text's bytes in the tail's alignment.
    const middle = Buffer.allocUnsafe(size - tail - same);
    for (let at = same - (same % CHUNK); at < size - tail; at += CHUNK) {
      const from = Math.max(at, same);
      const to = Math.min(at + CHUNK, size - tail);
      const own = kept.get(at);
      // The kept bytes start at max(at, same) = from; past them the chunk is the text's.
      const ownTo = own ? Math.min(to, from + own.length) : from;
      if (own) own.copy(middle, from - same, 0, ownTo - from);
      if (ownTo < to) middle.write(text.slice(ownTo + shift, to + shift), ownTo - same, to - ownTo, "latin1");
    }
    touch(path);
    // A byte order mark is dropped only at the start of the text, as decoding the whole blob does.
    return { same, tail, middle: new TextDecoder("utf-8", { ignoreBOM: same > 0 }).decode(middle) };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The first offset where `bytes` differ from text[at…] (ASCII; past its end everything differs), or -1. */
function firstDifference(bytes: Buffer, text: string, at: number, scratch: Buffer): number {
  const n = Math.min(bytes.length, Math.max(0, text.length - at));
  const theirs = scratch.subarray(0, n);
  if (n > 0) theirs.write(text.slice(at, at + n), 0, n, "latin1");
  const mineNow = bytes.subarray(0, n);
  if (mineNow.equals(theirs)) return n < bytes.length ? n : -1;
  // Halved until one byte: a[0, lo) equal, a difference in [lo, hi).
  let lo = 0;
  let hi = n;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (mineNow.subarray(lo, mid).equals(theirs.subarray(lo, mid))) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** The last offset where `bytes` differ from text[at…] (ASCII; before its start everything differs), or -1. */
function lastDifference(bytes: Buffer, text: string, at: number, scratch: Buffer): number {
  const skip = Math.min(bytes.length, Math.max(0, -at)); // bytes before the text's start
  const n = bytes.length - skip;
  const theirs = scratch.subarray(0, n);
  if (n > 0) theirs.write(text.slice(at + skip, at + skip + n), 0, n, "latin1");
  const mineNow = bytes.subarray(skip);
  if (mineNow.equals(theirs)) return skip > 0 ? skip - 1 : -1;
  // Halved until one byte: a difference in [lo, hi), a[hi, n) equal.
  let lo = 0;
  let hi = n;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (mineNow.subarray(mid, hi).equals(theirs.subarray(mid, hi))) hi = mid;
    else lo = mid;
  }
  return skip + lo;
}

/** `bytes` read from `path` when they are blob `id` (then touched), else undefined and the file removed. */
function verified(path: string, id: string, bytes: Uint8Array): Uint8Array | undefined {
  if (!isBlobOf(bytes, id)) {
    evict(path);
    return undefined;
  }
  // Newest first when the folder is trimmed: HEAD's blob stays while relocks come and go.
  touch(path);
  return bytes;
}

/**
 * Keeps `content` (bytes, or text as its UTF-8 bytes) as blob `id` when it hashes to it, else
 * nothing; best effort, like every memo. Text decoded from a blob with bytes that are not UTF-8
 * encodes to other bytes, so it is never kept under that blob's id.
 */
export function storeGitBlob(cacheDir: string, id: string, content: Uint8Array | string): void {
  const path = blobPath(cacheDir, id);
  if (path === undefined || existsSync(path)) return;
  // Text is hashed and written as its UTF-8 without encoding it whole first (~2 MB for 1,000 tools).
  if (!isBlobOf(content, id)) return;
  try {
    writeFileAtomic(path, content, { mode: 0o444 });
    trim(join(cacheDir, GIT_BLOBS_DIR));
  } catch {
    // A read-only or full cache only costs the next check a `git show`.
  }
}

/** Removes all but the KEEP most recently used blobs (temp files of other writers are left alone). */
function trim(dir: string): void {
  const names = readdirSync(dir).filter((n) => blobIdFormat(n) !== undefined);
  if (names.length <= KEEP) return;
  const aged = names.map((name) => {
    try {
      return { name, used: statSync(join(dir, name)).mtimeMs };
    } catch {
      return { name, used: -Infinity };
    }
  });
  aged.sort((a, b) => b.used - a.used || (a.name < b.name ? -1 : 1));
  for (const { name } of aged.slice(KEEP)) evict(join(dir, name));
}

function touch(path: string): void {
  try {
    const now = new Date();
    utimesSync(path, now, now);
  } catch {
    // Only the order of eviction depends on it.
  }
}

function evict(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already, or a read-only cache: it is verified again on the next read either way.
  }
}
