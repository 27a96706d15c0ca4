// The stat cache's bytes on disk: a compact binary layout instead of JSON, because a cold lock of
// 10,000 files spent ~10 ms turning the rows into JSON text (and a load as long parsing it and
// testing every digest with a regex). Names are NUL-joined UTF-8, numbers raw float64, digests raw
// 32-byte sha256; a digest stored as bytes is always valid hex when read back. A CRC-32 of
// everything after it catches a damaged byte the lengths cannot (a flipped bit in a digest would
// otherwise be served for an unchanged stat). Pure: bytes in, bytes out. Anything that does not
// decode exactly (wrong magic or version, a checksum or length that does not add up, a name count
// that differs) reads as undefined, which the loader treats as an empty cache: a damaged file can
// only cost speed, never give a wrong hit.

/** One file's row: size, mtimeMs, ctimeMs, ino and its sha256 (lowercase hex). */
export type StatRow = [size: number, mtimeMs: number, ctimeMs: number, ino: number, sha256: string];

/** A tool's integrity memo: the digest of its inputs, its integrity and its manifest digest (all hex). */
export type ToolMemoRow = [inputDigest: string, integrity: string, manifestDigest: string];

/** Everything the stat cache file holds. */
export interface StatCacheData {
  root: string;
  entries: ReadonlyMap<string, StatRow>;
  tools: ReadonlyMap<string, ToolMemoRow>;
  /** The tree that last passed the pre-lock check: context digest and tool id -> integrity (hex). */
  checked: { context: string; tools: Record<string, string> } | null;
}

const MAGIC = "KIWISTA";
/** The format version (the byte after the magic); bumped whenever the layout changes. */
export const STAT_FORMAT = 3;
/** Magic, version, the CRC-32 of the rest, then seven u32 counts and lengths. */
const HEAD = 8 + 4 + 7 * 4;
const COUNTS = 12;
/** Marks "no checked tree" in the checked count. */
const NO_CHECKED = 0xffffffff;
const HEX64 = /^[0-9a-f]{64}$/;

/** The file's bytes for `data`. Rows whose digests are not lowercase hex are left out (never written garbled). */
export function encodeStatCache(data: StatCacheData): Uint8Array {
  return encodeChecked(data) ?? encodeChecked(wellFormed(data))!;
}

/**
 * The bytes, or undefined when a digest is not lowercase hex. Checked once over all digests (they
 * decode to exactly 32 bytes each and encode back to the same text), not with a regex per row:
 * the encoding is then a few native calls, as quick as the JSON.stringify it replaced.
 */
function encodeChecked(data: StatCacheData): Uint8Array | undefined {
  const n = data.entries.size;
  const names: string[] = [];
  const hexes: string[] = [];
  const numbers = new Float64Array(n * 4);
  let k = 0;
  for (const [name, row] of data.entries) {
    names.push(name);
    hexes.push(row[4]);
    numbers[k++] = row[0];
    numbers[k++] = row[1];
    numbers[k++] = row[2];
    numbers[k++] = row[3];
  }
  const toolKeys: string[] = [];
  for (const [key, memo] of data.tools) {
    toolKeys.push(key);
    hexes.push(memo[0], memo[1], memo[2]);
  }
  const checked = data.checked;
  const checkedIds = checked ? Object.keys(checked.tools) : [];
  if (checked) {
    hexes.push(checked.context);
    for (const id of checkedIds) hexes.push(checked.tools[id]!);
  }
  const joined = hexes.join("");
  const digests = Buffer.from(joined, "hex");
  if (digests.length !== hexes.length * 32 || joined.length !== hexes.length * 64 || digests.toString("hex") !== joined) return undefined;
  const root = Buffer.from(data.root);
  const nameBytes = Buffer.from(names.join("\0"));
  const toolBytes = Buffer.from(toolKeys.join("\0"));
  const checkedBytes = Buffer.from(checkedIds.join("\0"));
  const textEnd = HEAD + root.length + nameBytes.length + toolBytes.length + checkedBytes.length;
  const numbersAt = Math.ceil(textEnd / 8) * 8;
  const out = new Uint8Array(numbersAt + numbers.length * 8 + digests.length);
  out.set(Buffer.from(MAGIC, "latin1"), 0);
  out[7] = STAT_FORMAT;
  const view = new DataView(out.buffer);
  [root.length, n, nameBytes.length, toolKeys.length, toolBytes.length, checked ? checkedIds.length : NO_CHECKED, checkedBytes.length].forEach((x, i) => view.setUint32(COUNTS + i * 4, x, true));
  let at = HEAD;
  for (const part of [root, nameBytes, toolBytes, checkedBytes]) {
    out.set(part, at);
    at += part.length;
  }
  out.set(new Uint8Array(numbers.buffer), numbersAt);
  out.set(digests, numbersAt + numbers.length * 8);
  view.setUint32(8, Bun.hash.crc32(out.subarray(COUNTS)), true);
  return out;
}

/** `data` without the rows, memos and checked tree that hold a digest that is not lowercase hex. */
function wellFormed(data: StatCacheData): StatCacheData {
  const entries = new Map([...data.entries].filter(([, row]) => HEX64.test(row[4])));
  const tools = new Map([...data.tools].filter(([, memo]) => memo.every((d) => HEX64.test(d))));
  // A checked tree with a value that is not a hex digest is dropped whole: the check runs again.
  const checked = data.checked && HEX64.test(data.checked.context) && Object.values(data.checked.tools).every((d) => HEX64.test(d)) ? data.checked : null;
  return { root: data.root, entries, tools, checked };
}

/** The data in `bytes`, or undefined when they are not a whole stat cache file of this format. */
export function decodeStatCache(bytes: Uint8Array): StatCacheData | undefined {
  if (bytes.length < HEAD) return undefined;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.toString("latin1", 0, 7) !== MAGIC || buf[7] !== STAT_FORMAT) return undefined;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (view.getUint32(8, true) !== Bun.hash.crc32(buf.subarray(COUNTS))) return undefined;
  const [rootLen, n, namesLen, toolCount, toolsLen, checkedCount, checkedLen] = Array.from({ length: 7 }, (_, i) => view.getUint32(COUNTS + i * 4, true)) as [number, number, number, number, number, number, number];
  const hasChecked = checkedCount !== NO_CHECKED;
  const checkedN = hasChecked ? checkedCount : 0;
  const textEnd = HEAD + rootLen + namesLen + toolsLen + checkedLen;
  const numbersAt = Math.ceil(textEnd / 8) * 8;
  const digestCount = n + toolCount * 3 + (hasChecked ? 1 + checkedN : 0);
  // Every count is bounded by the file's own length, so a garbled count fails here, before any allocation.
  if (numbersAt + n * 32 + digestCount * 32 !== bytes.length) return undefined;
  let at = HEAD;
  const text = (len: number) => buf.toString("utf8", at, (at += len));
  const root = text(rootLen);
  const names = splitNames(text(namesLen), n);
  const toolKeys = splitNames(text(toolsLen), toolCount);
  const checkedIds = splitNames(text(checkedLen), checkedN);
  if (!names || !toolKeys || !checkedIds) return undefined;
  // Numbers are copied out unless they already sit at an 8-byte boundary in memory.
  const numbersBytes = n * 32;
  const inPlace = (buf.byteOffset + numbersAt) % 8 === 0;
  const numbers = inPlace ? new Float64Array(buf.buffer, buf.byteOffset + numbersAt, n * 4) : new Float64Array(buf.buffer.slice(buf.byteOffset + numbersAt, buf.byteOffset + numbersAt + numbersBytes));
  // One hex conversion for every digest, then slices of it (one native call, not one per row).
  const hex = buf.toString("hex", numbersAt + numbersBytes, bytes.length);
  const digest = (k: number) => hex.slice(k * 64, k * 64 + 64);
  const entries = new Map<string, StatRow>();
  for (let i = 0; i < n; i++) entries.set(names[i]!, [numbers[i * 4]!, numbers[i * 4 + 1]!, numbers[i * 4 + 2]!, numbers[i * 4 + 3]!, digest(i)]);
  const tools = new Map<string, ToolMemoRow>();
  for (let t = 0; t < toolCount; t++) tools.set(toolKeys[t]!, [digest(n + t * 3), digest(n + t * 3 + 1), digest(n + t * 3 + 2)]);
  let checked: StatCacheData["checked"] = null;
  if (hasChecked) {
    const first = n + toolCount * 3;
    const ids: Record<string, string> = {};
    for (let c = 0; c < checkedN; c++) ids[checkedIds[c]!] = digest(first + 1 + c);
    checked = { context: digest(first), tools: ids };
  }
  return { root, entries, tools, checked };
}

/** `count` names from their NUL-joined text, or undefined when the text holds another number of them. */
function splitNames(joined: string, count: number): string[] | undefined {
  if (count === 0) return joined === "" ? [] : undefined;
  const names = joined.split("\0");
  return names.length === count ? names : undefined;
}
