// SHA-256 of files, streamed through one reused buffer so memory stays flat whatever the size.
import { closeSync, openSync, readSync } from "node:fs";

/** Read size per chunk; large enough for few syscalls, small enough to stay in cache. */
export const CHUNK_BYTES = 1 << 20;

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
  shared ??= Buffer.allocUnsafe(CHUNK_BYTES);
  const hasher = new Bun.CryptoHasher("sha256");
  for (;;) {
    const n = readSync(fd, shared, 0, CHUNK_BYTES, null);
    if (n <= 0) break;
    hasher.update(shared.subarray(0, n));
  }
  return hasher.digest("hex");
}
