// security/secret-literal on the lines of a tool's files, the I/O half: reads each planned file
// (file-secrets.ts) and finds the credentials and ignore comments in it. A file with a NUL byte in
// its first 8 KiB is binary and not read further. What a tool's files hold is remembered in
// <cache>/check/secrets-v1.json under a digest of their paths and stat identities (size, mtime,
// ctime, inode), one entry a tool, so a warm `kiwi check` reads no file and hashes one string per
// tool; a tool with a file changed within the last 2 s is not remembered (git's racy-clean rule:
// a second write in the same tick would keep the identity).
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../cache/atomic-io.ts";
import { type FileIdentity, RACY_MARGIN_MS } from "../cache/stat-cache-io.ts";
import { type IgnoreDirective, textIgnoreDirectives } from "../manifest/ignore-comments.ts";
import { parseManifestText } from "../manifest/forms.ts";
import { credentialsInText } from "./credentials.ts";
import { type FileScan, type FileScanRequest, MAX_SCANNED_BYTES, fileSecretFindings, planFileScans } from "./file-secrets.ts";
import { type CheckResult, withFindings } from "./check-project.ts";
import type { Tool } from "../manifest/model.ts";
import type { RemoteRecords } from "./layer.ts";

/** Where what tools' files hold is remembered, relative to the cache directory. */
export const FILE_SCAN_CACHE_FILE = join("check", "secrets-v1.json");
/** Most tools remembered; those of this run are kept first. */
const CACHE_LIMIT = 50_000;
/** How much of a file decides that it is binary (git looks at the first 8,000 bytes). */
const BINARY_PROBE = 8000;

/** A remembered tool: 0 when its files hold nothing, else what each file that holds something holds, by its position in the tool's requests. */
type Entry = 0 | Record<string, FileScan>;

/** What each readable text file holds, by absolute path; files holding nothing, binary and unreadable files are absent. */
export function runFileScans(requests: readonly FileScanRequest[], options: { cacheDir?: string; now?: () => number } = {}): Map<string, FileScan> {
  const out = new Map<string, FileScan>();
  if (requests.length === 0) return out;
  const path = options.cacheDir ? join(options.cacheDir, FILE_SCAN_CACHE_FILE) : undefined;
  const cache = path ? loadCache(path) : undefined;
  const fresh = new Map<string, Entry>();
  const now = (options.now ?? Date.now)();
  // planFileScans lists the requests tool by tool.
  for (let start = 0; start < requests.length; ) {
    let end = start + 1;
    while (end < requests.length && requests[end]!.tool === requests[start]!.tool) end++;
    scanTool(requests.slice(start, end), cache, fresh, out, now);
    start = end;
  }
  if (path && cache && [...fresh.keys()].some((k) => !cache.has(k))) saveCache(path, fresh, cache);
  return out;
}

/** One tool's files: from the cache when their identities are those remembered, else read. */
function scanTool(requests: readonly FileScanRequest[], cache: Map<string, Entry> | undefined, fresh: Map<string, Entry>, out: Map<string, FileScan>, now: number): void {
  const identities = requests.map((r) => r.identity ?? statIdentity(r.abs));
  const key = toolKey(requests, identities);
  const known = cache?.get(key);
  if (known !== undefined) {
    fresh.set(key, known);
    // The key holds every path, so its positions are these requests' (a hand-edited entry's stray one is skipped).
    if (known !== 0) for (const [i, scan] of Object.entries(known)) if (requests[Number(i)]) out.set(requests[Number(i)]!.abs, scan);
    return;
  }
  const held: Record<string, FileScan> = {};
  // Remembered only when every file was read with the identity the key holds, past the racy window.
  let memorable = true;
  for (const [i, request] of requests.entries()) {
    const seen = identities[i];
    // A file gone holds nothing, as its key says; one that cannot be read now may be read next time.
    if (seen === undefined) continue;
    const read = readText(request.abs);
    if (read === undefined) {
      memorable = false;
      continue;
    }
    if (read.size !== seen.size || read.mtimeMs !== seen.mtimeMs || read.ctimeMs !== seen.ctimeMs || read.ino !== seen.ino || Math.max(read.mtimeMs, read.ctimeMs) >= now - RACY_MARGIN_MS) memorable = false;
    // A binary file holds no text to scan.
    if (read.text === undefined) continue;
    const scan: FileScan = { hits: credentialsInText(read.text), ignores: ownComments(request, read.text) };
    if (scan.hits.length === 0 && scan.ignores.length === 0) continue;
    held[i] = scan;
    out.set(request.abs, scan);
  }
  if (memorable) fresh.set(key, Object.keys(held).length === 0 ? 0 : held);
}

/** `result` with the credentials found in the files of `tools` (and those files' ignore comments). */
export function withFileSecrets(result: CheckResult, tools: readonly Tool[], options: { cacheDir?: string; strict?: boolean; remoteRecords?: RemoteRecords }): CheckResult {
  const requests = planFileScans(tools, options.remoteRecords);
  const { findings, ignoreComments } = fileSecretFindings(requests, runFileScans(requests, { cacheDir: options.cacheDir }), [...result.findings, ...result.ignored], tools);
  return findings.length === 0 && ignoreComments.length === 0 ? result : withFindings(result, findings, { strict: options.strict }, ignoreComments);
}

function statIdentity(abs: string): FileIdentity | undefined {
  try {
    const st = statSync(abs);
    return st.isFile() ? { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The ignore comments the file's text shows after a comment opener; in a tool's manifest file,
 * only those outside the manifest (its parser read those inside, and a mark inside one of its
 * strings is text). The manifest is parsed again for where it lies only when the text has a mark.
 */
function ownComments(request: FileScanRequest, text: string): IgnoreDirective[] {
  const all = textIgnoreDirectives(text);
  if (all.length === 0 || request.manifest === undefined) return all;
  let block: { first: number; last: number } | undefined;
  try {
    const parsed = parseManifestText(text, request.manifest);
    block = parsed === "none" ? undefined : parsed.block;
  } catch {
    // It parsed when discovery read it; if it no longer does, none of its marks is taken.
  }
  // No block: the manifest is the whole file (YAML, JSON, a kiwi_mcp module), every comment its own.
  return block ? all.filter((d) => d.line < block.first || d.line > block.last) : [];
}

/**
 * A digest of the tool's files: their paths, and each one's stat identity as numbers (a file gone
 * is -1): no number is turned into text, which cost a warm check of 11,636 files ~10 ms.
 */
function toolKey(requests: readonly FileScanRequest[], identities: readonly (FileIdentity | undefined)[]): string {
  let paths = "";
  const stats = new Float64Array(requests.length * 4);
  for (let i = 0; i < requests.length; i++) {
    // A file's role is part of what it holds: a manifest's own comments are not read as text.
    paths += `${requests[i]!.abs}\0${requests[i]!.manifest ?? ""}\n`;
    const f = identities[i];
    if (f === undefined) stats[i * 4] = -1;
    else {
      stats[i * 4] = f.size;
      stats[i * 4 + 1] = f.mtimeMs;
      stats[i * 4 + 2] = f.ctimeMs;
      stats[i * 4 + 3] = f.ino;
    }
  }
  return `${Bun.hash(paths).toString(16)}.${Bun.hash(stats).toString(16)}`;
}

/** The file's text (none when it is binary) and the identity it was read with; undefined when it cannot be read. */
function readText(abs: string): { text?: string; size: number; mtimeMs: number; ctimeMs: number; ino: number } | undefined {
  let fd: number;
  try {
    fd = openSync(abs, "r");
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    // It may have grown since discovery planned it.
    if (!st.isFile() || st.size > MAX_SCANNED_BYTES) return undefined;
    const identity = { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino };
    const bytes = Buffer.allocUnsafe(st.size);
    let got = 0;
    // The probe first: a binary file (a data file, an image) is not read past it.
    const fill = (upTo: number) => {
      while (got < upTo) {
        const n = readSync(fd, bytes, got, upTo - got, got);
        if (n === 0) return false;
        got += n;
      }
      return true;
    };
    if (fill(Math.min(st.size, BINARY_PROBE)) && bytes.subarray(0, got).includes(0)) return identity;
    fill(st.size);
    const data = bytes.subarray(0, got);
    return data.subarray(0, BINARY_PROBE).includes(0) ? identity : { text: data.toString("utf8"), ...identity };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function loadCache(path: string): Map<string, Entry> {
  const map = new Map<string, Entry>();
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as { version?: unknown; entries?: unknown };
    if (parsed.version !== 1 || typeof parsed.entries !== "object" || parsed.entries === null) return map;
    for (const [k, v] of Object.entries(parsed.entries)) if (v === 0 || (typeof v === "object" && v !== null && Object.entries(v).every(([i, scan]) => /^\d+$/.test(i) && isFileScan(scan)))) map.set(k, v as Entry);
  } catch {
    // A missing or damaged cache is an empty one: every file is read.
  }
  return map;
}

/** Writes this run's entries, then earlier ones up to the limit; failure only costs the next run time. */
function saveCache(path: string, fresh: ReadonlyMap<string, Entry>, old: ReadonlyMap<string, Entry>): void {
  const entries: Record<string, Entry> = {};
  let n = 0;
  for (const [k, v] of fresh) if (n++ < CACHE_LIMIT) entries[k] = v;
  for (const [k, v] of old) if (!(k in entries) && n++ < CACHE_LIMIT) entries[k] = v;
  try {
    writeFileAtomic(path, `${JSON.stringify({ version: 1, entries })}\n`);
  } catch {
    // A read-only or full cache directory: the check itself worked.
  }
}

function isFileScan(v: unknown): v is FileScan {
  const s = v as FileScan;
  return (
    typeof s === "object" &&
    s !== null &&
    Array.isArray(s.hits) &&
    s.hits.every((h) => typeof h === "object" && h !== null && typeof h.kind === "string" && typeof h.shown === "string" && Number.isInteger(h.line) && Number.isInteger(h.column)) &&
    Array.isArray(s.ignores) &&
    s.ignores.every((d) => typeof d === "object" && d !== null && Number.isInteger(d.line) && Number.isInteger(d.target) && Array.isArray(d.rules) && Array.isArray(d.invalid))
  );
}
