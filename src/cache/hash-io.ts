// SHA-256 of files, streamed through one reused buffer so memory stays flat whatever the size.
import { closeSync, openSync, readSync } from "node:fs";

/** Read size per chunk; large enough for few syscalls, small enough to stay in cache. */
export const CHUNK_BYTES = 1 << 20;

/**
 * The first read of a process's first files: the few small files a staged check hashes need no
 * 1 MB buffer, which with the lockfile's texts and the lock index tipped that check into a
 * collection (~2 ms). A file that fills it is read on in CHUNK_BYTES, kept from then on.
 */
const FIRST_CHUNK_BYTES = 64 * 1024;

let small: Buffer | undefined;
let shared: Buffer | undefined;

/** Lowercase hex SHA-256 of a file's bytes. */
export function hashFileHex(abs: string): string {
  const fd = openSync(abs, "r");
  try {
    return hashFd(fd);
  } finally {
    closeSync(fd);
  }
}

/** Lowercase hex SHA-256 of everything readable from an open descriptor, from its current offset. */
export function hashFd(fd: number): string {
  let buffer = shared ?? (small ??= Buffer.allocUnsafe(FIRST_CHUNK_BYTES));
  const hasher = new Bun.CryptoHasher("sha256");
  for (;;) {
    const n = readSync(fd, buffer, 0, buffer.length, null);
    if (n <= 0) break;
    hasher.update(buffer.subarray(0, n));
    if (n === buffer.length && buffer !== shared) buffer = shared ??= Buffer.allocUnsafe(CHUNK_BYTES);
  }
  return hasher.digest("hex");
}
