// git's object id of a blob: the hash of `blob <length>\0` and the bytes, SHA-1 in most
// repositories and SHA-256 in those made with `--object-format=sha256`. It lets kiwi vouch that
// bytes it holds are the very blob git named (in its status or staged diff), without asking git
// for them. Pure.

/** The hash a blob id is written in, read from its length; undefined for anything but lowercase hex of 40 or 64 digits. */
export function blobIdFormat(id: string): "sha1" | "sha256" | undefined {
  if (!/^[0-9a-f]+$/.test(id)) return undefined;
  return id.length === 40 ? "sha1" : id.length === 64 ? "sha256" : undefined;
}

/** The id git gives `bytes` as a blob in a repository whose objects are named with `format`. */
export function gitBlobId(bytes: Uint8Array, format: "sha1" | "sha256"): string {
  return new Bun.CryptoHasher(format).update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

/** True when `bytes` are the blob `id` names (an id that is not one never matches). */
export function isBlobOf(bytes: Uint8Array, id: string): boolean {
  const format = blobIdFormat(id);
  return format !== undefined && !/^0+$/.test(id) && gitBlobId(bytes, format) === id;
}

/**
 * True when the UTF-8 bytes of `text` are the blob `id` names, and `text` is what TextDecoder gives
 * of them (it drops a leading byte order mark: text that starts with one is not).
 */
export function isBlobTextOf(text: string, id: string): boolean {
  const format = blobIdFormat(id);
  if (format === undefined || /^0+$/.test(id) || text.charCodeAt(0) === 0xfeff) return false;
  return new Bun.CryptoHasher(format).update(`blob ${Buffer.byteLength(text)}\0`).update(text).digest("hex") === id;
}

/** git's id for "no such blob" (a path HEAD or the index does not hold), in either format. */
export function isNullBlobId(id: string): boolean {
  return blobIdFormat(id) !== undefined && /^0+$/.test(id);
}
