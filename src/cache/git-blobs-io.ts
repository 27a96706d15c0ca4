// A few git blobs kept in the cache under their own ids (`check/git-blobs/<id>`), so the staged
// check finds HEAD's lockfile without starting `git show`: the lockfile a commit stages is kept
// when it is checked, and after the commit it is HEAD's. Bytes are kept only once they hash to the
// id, and every read hashes them again, so a damaged or planted file is evicted and read as a
// miss, never served. The folder holds the newest KEEP blobs (~0.5 MB each for 1,000 tools).
import { readFileSync, readdirSync, statSync, unlinkSync, utimesSync, existsSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "./atomic-io.ts";
import { blobIdFormat, isBlobOf, isBlobTextOf } from "../integrity/git-blob.ts";

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
  const bytes = typeof content === "string" ? Buffer.from(content) : content;
  if (!isBlobOf(bytes, id)) return;
  try {
    writeFileAtomic(path, bytes, { mode: 0o444 });
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
