// git's object id of a blob: the hash of `blob <length>\0` and the bytes, SHA-1 in most
// repositories and SHA-256 in those made with `--object-format=sha256`. It lets kiwi vouch that
// bytes it holds are the very blob git named (in its status or staged diff), without asking git
// for them. Pure.

/** The hash a blob id is written in, read from its length; undefined for anything but lowercase hex of 40 or 64 digits. */
export function blobIdFormat(id: string): "sha1" | "sha256" | undefined {
  if (!/^[0-9a-f]+$/.test(id)) return undefined;
  return id.length === 40 ? "sha1" : id.length === 64 ? "sha256" : undefined;
}

/** The id git gives `content` (bytes, or text as its UTF-8) as a blob in a repository whose objects are named with `format`. */
export function gitBlobId(content: Uint8Array | string, format: "sha1" | "sha256"): string {
  const length = typeof content === "string" ? Buffer.byteLength(content) : content.length;
  return new Bun.CryptoHasher(format).update(`blob ${length}\0`).update(content).digest("hex");
}

/** True when `content` (bytes, or text as its UTF-8) is the blob `id` names (an id that is not one never matches). */
export function isBlobOf(content: Uint8Array | string, id: string): boolean {
  const format = blobIdFormat(id);
  return format !== undefined && !isNullBlobId(id) && gitBlobId(content, format) === id;
}

/**
 * True when the UTF-8 bytes of `text` are the blob `id` names, and `text` is what TextDecoder gives
 * of them (it drops a leading byte order mark: text that starts with one is not).
 */
export function isBlobTextOf(text: string, id: string): boolean {
  return text.charCodeAt(0) !== 0xfeff && isBlobOf(text, id);
}

/** git's id for "no such blob" (a path HEAD or the index does not hold), in either format. */
export function isNullBlobId(id: string): boolean {
  return blobIdFormat(id) !== undefined && /^0+$/.test(id);
}
