// Atomic writes: a temp file in the destination's folder, then a rename, so a reader (or a run
// killed with -9) only ever sees the old file or the complete new one under the final name.
import { closeSync, fchmodSync, fsync, fsyncSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { CHUNK_BYTES } from "./hash-io.ts";
import type { FaultPoint, Faults } from "./faults-io.ts";
import { NO_FAULTS } from "./faults-io.ts";
import { tempName } from "./cache-layout.ts";

export interface AtomicWriteOptions {
  faults?: Faults;
  /** Fault point names: `<point>-write` / `<point>-rename` style pairs. */
  writePoint?: FaultPoint;
  renamePoint?: FaultPoint;
  mode?: number;
  /** fsync the file before the rename (lockfiles: survive a power cut, not only kill -9). */
  fsync?: boolean;
}

/** A fresh temp path next to `path`. */
export function tempPathFor(path: string): string {
  return join(dirname(path), tempName(basename(path), process.pid, Math.random().toString(36).slice(2, 10)));
}

/** Writes `data` to `path` atomically, creating the folder. On any error the temp file is removed. */
export function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const { fd, tmp } = startTemp(path, data, options);
  try {
    if (options.mode !== undefined) fchmodSync(fd, options.mode);
    if (options.fsync) fsyncSync(fd);
  } catch (error) {
    discardTemp(fd, tmp);
    throw error;
  }
  finishTemp(fd, tmp, path, options);
}

/**
 * writeFileAtomic with fsync (always) on Bun's thread pool: the bytes are written now, and the
 * returned promise renames once they are on disk, so the caller's own work overlaps the flush.
 * Nothing is under `path` until the promise resolves; on any error the temp file is removed.
 */
export async function writeFileAtomicSynced(path: string, data: string | Uint8Array, options: Omit<AtomicWriteOptions, "fsync" | "mode"> = {}): Promise<void> {
  const { fd, tmp } = startTemp(path, data, options);
  try {
    await new Promise<void>((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
  } catch (error) {
    discardTemp(fd, tmp);
    throw error;
  }
  finishTemp(fd, tmp, path, options);
}

/**
 * Creates the folder and a fresh temp file beside `path` holding `data`; with a write point, half
 * the bytes first, so a fault (or a kill) there leaves a genuinely partial temp file. Removed on failure.
 */
function startTemp(path: string, data: string | Uint8Array, options: AtomicWriteOptions): { fd: number; tmp: string } {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  const fd = openSync(tmp, "wx", options.mode ?? 0o644);
  try {
    if (typeof data === "string" && !options.writePoint && data.length > TEXT_CHUNK) {
      writeText(fd, data);
      return { fd, tmp };
    }
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    if (options.writePoint) {
      const half = bytes.subarray(0, Math.floor(bytes.length / 2));
      writeAll(fd, half);
      (options.faults ?? NO_FAULTS).hit(options.writePoint, path);
      writeAll(fd, bytes.subarray(half.length));
    } else writeAll(fd, bytes);
    return { fd, tmp };
  } catch (error) {
    discardTemp(fd, tmp);
    throw error;
  }
}

/**
 * Closes the temp file and renames it into place; on failure the temp file is removed (the
 * descriptor is never closed twice: its number may already belong to another file).
 */
function finishTemp(fd: number, tmp: string, path: string, options: AtomicWriteOptions): void {
  try {
    closeSync(fd);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
  try {
    if (options.renamePoint) (options.faults ?? NO_FAULTS).hit(options.renamePoint, path);
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}

/** Closes (if still open) and removes a temp file that will not be renamed. */
function discardTemp(fd: number, tmp: string): void {
  safeClose(fd);
  rmSync(tmp, { force: true });
}

/**
 * Copies `src` to `path` atomically while hashing it, and renames only when the bytes hash to
 * `expectedHex`. Returns the actual digest; on a mismatch nothing is left under `path`.
 */
export function copyFileHashedAtomic(src: string, path: string, expectedHex: string, options: AtomicWriteOptions = {}): { hex: string; ok: boolean } {
  const faults = options.faults ?? NO_FAULTS;
  mkdirSync(dirname(path), { recursive: true });
  const input = openSync(src, "r");
  const tmp = tempPathFor(path);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, "wx", 0o644);
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    const hasher = new Bun.CryptoHasher("sha256");
    let first = true;
    for (;;) {
      const n = readSync(input, buffer, 0, CHUNK_BYTES, null);
      if (n <= 0) break;
      const chunk = buffer.subarray(0, n);
      hasher.update(chunk);
      if (first && options.writePoint) {
        const half = chunk.subarray(0, Math.max(1, Math.floor(n / 2)));
        writeAll(fd, half);
        faults.hit(options.writePoint, path);
        writeAll(fd, chunk.subarray(half.length));
      } else writeAll(fd, chunk);
      first = false;
    }
    if (first && options.writePoint) faults.hit(options.writePoint, path);
    const hex = hasher.digest("hex");
    if (options.mode !== undefined) fchmodSync(fd, options.mode);
    closeSync(fd);
    fd = undefined;
    if (hex !== expectedHex) {
      rmSync(tmp, { force: true });
      return { hex, ok: false };
    }
    if (options.renamePoint) faults.hit(options.renamePoint, path);
    renameSync(tmp, path);
    return { hex, ok: true };
  } catch (error) {
    if (fd !== undefined) safeClose(fd);
    rmSync(tmp, { force: true });
    throw error;
  } finally {
    closeSync(input);
  }
}

/**
 * Text longer than this (in UTF-16 units) is written through one small buffer, never encoded
 * whole: a ~2 MB lockfile kept as a git blob was a ~2 MB allocation, enough with the check's other
 * large strings to cost it a collection.
 */
const TEXT_CHUNK = 16 * 1024;

/** Writes `text` as UTF-8, the bytes Buffer.from gives, a chunk at a time. */
function writeText(fd: number, text: string): void {
  const scratch = Buffer.allocUnsafe(TEXT_CHUNK * 3); // a UTF-16 unit is at most 3 bytes of UTF-8 (a pair, 4 for 2)
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + TEXT_CHUNK);
    const last = text.charCodeAt(end - 1);
    // Never between the halves of a surrogate pair: each half alone would encode as U+FFFD.
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    writeAll(fd, scratch.subarray(0, scratch.write(text.slice(at, end), 0, "utf8")));
    at = end;
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

function safeClose(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed; the temp file is removed next.
  }
}
