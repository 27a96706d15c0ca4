// The content-addressed store: blobs keyed by sha256 and tool index entries keyed by integrity.
// Every write is atomic; every read re-verifies the bytes against the name; an entry that fails
// is moved to quarantine/ (evicted), reported, and never served.
import { existsSync, mkdirSync, readFileSync, renameSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { KiwiError } from "../errors.ts";
import { shortDigest, sha256Hex } from "../integrity/digest.ts";
import type { FileEntry } from "../integrity/tool.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { parseJsonLossless } from "../integrity/json-lossless.ts";
import { copyFileHashedAtomic, writeFileAtomic } from "./atomic-io.ts";
import { type Faults, NO_FAULTS, faultsFromEnv } from "./faults-io.ts";
import { hashFileHex } from "./hash-io.ts";
import { CACHEDIR_TAG, blobRelPath, indexRelPath, isHexDigest } from "./cache-layout.ts";

/** An opened cache directory (nothing is created until the first write). */
export interface Store {
  dir: string;
  faults: Faults;
}

/** What a verification found wrong with one entry, after it was evicted. */
export interface Eviction {
  kind: "blob" | "index";
  /** The digest the entry is named by. */
  expected: string;
  /** The digest of the bytes it actually held. */
  actual: string;
  /** Where the bad bytes were moved. */
  quarantined: string;
}

/** Opens the store at `cacheDir`; `env` feeds the test-only fault hooks. */
export function openStore(cacheDir: string, env: Readonly<Record<string, string | undefined>> = {}): Store {
  return { dir: cacheDir, faults: faultsFromEnv(env) };
}

/** Absolute path of a blob (whether or not it exists). */
export function blobPath(store: Store, hex: string): string {
  return join(store.dir, blobRelPath(assertHex(hex)));
}

/** Absolute path of a tool index entry. */
export function indexPath(store: Store, integrityHex: string): string {
  return join(store.dir, indexRelPath(assertHex(integrityHex)));
}

/** Creates the cache folder and its CACHEDIR.TAG on first use. */
export function ensureStore(store: Store): void {
  const tag = join(store.dir, "CACHEDIR.TAG");
  if (existsSync(tag)) return;
  mkdirSync(store.dir, { recursive: true });
  writeFileAtomic(tag, CACHEDIR_TAG, { faults: NO_FAULTS });
}

/**
 * Re-hashes the blob stored under `hex`. `missing` when absent; a blob whose bytes differ is
 * evicted to quarantine/ and returned as an Eviction.
 */
export function checkBlob(store: Store, hex: string): "ok" | "missing" | Eviction {
  const path = blobPath(store, hex);
  let actual: string;
  try {
    actual = hashFileHex(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw error;
  }
  if (actual === hex) return "ok";
  return { kind: "blob", expected: hex, actual, quarantined: quarantine(store, path, hex) };
}

export type PutResult = { status: "stored" | "present"; evicted?: Eviction };

/**
 * Puts a file's bytes under `expectedHex`. An existing blob is re-verified (and refreshed so a
 * concurrent prune keeps it); a corrupt one is evicted and replaced. If the source no longer
 * hashes to `expectedHex` nothing is stored and E_INTEGRITY_MISMATCH names both digests.
 */
export function putBlobFromFile(store: Store, src: string, expectedHex: string, subject: string): PutResult {
  const path = blobPath(store, expectedHex);
  const existing = checkBlob(store, expectedHex);
  if (existing === "ok") {
    touch(path);
    return { status: "present" };
  }
  const { hex, ok } = copyFileHashedAtomic(src, path, expectedHex, { faults: store.faults, writePoint: "blob-write", renamePoint: "blob-rename", mode: 0o444 });
  if (!ok) {
    throw new KiwiError("E_INTEGRITY_MISMATCH", `${subject} changed while kiwi was reading it: expected sha256:${shortDigest(expectedHex)}, read sha256:${shortDigest(hex)}`, {
      hint: "run the command again once nothing is writing to the tool",
      details: { file: subject, expected: expectedHex, actual: hex },
    });
  }
  return existing === "missing" ? { status: "stored" } : { status: "stored", evicted: existing };
}

/** Puts raw bytes under their digest (used for small generated content and tests). */
export function putBlobBytes(store: Store, bytes: Uint8Array): string {
  const hex = sha256Hex(bytes);
  if (checkBlob(store, hex) !== "ok") writeFileAtomic(blobPath(store, hex), bytes, { faults: store.faults, writePoint: "blob-write", renamePoint: "blob-rename", mode: 0o444 });
  return hex;
}

/**
 * The path of a blob whose bytes were just re-verified. A missing blob is E_CACHE_MISSING; a
 * corrupt one is evicted and E_CACHE_CORRUPT. Callers that copy or link the file should verify
 * the copy too (materializeTool does), since the path could change after this returns.
 */
export function getVerifiedBlobPath(store: Store, hex: string): string {
  const result = checkBlob(store, hex);
  if (result === "ok") return blobPath(store, hex);
  if (result === "missing") throw missingBlob(hex);
  throw corruptError(result);
}

/** The tool index entry: the exact canonical text whose sha256 is the integrity. */
export interface ToolIndexEntry {
  tool_id: string;
  version: string;
  manifest: CanonicalValue;
  files: FileEntry[];
}

/** Writes a tool's index entry (its canonical integrity text) unless a verified one exists. */
export function writeToolEntry(store: Store, integrityHex: string, canonical: string): void {
  if (sha256Hex(canonical) !== integrityHex) {
    throw new KiwiError("E_INTERNAL", `index entry text does not hash to sha256:${shortDigest(integrityHex)}`);
  }
  const path = indexPath(store, integrityHex);
  const existing = readIndexBytes(path);
  if (existing !== undefined && sha256Hex(existing) === integrityHex) {
    touch(path);
    return;
  }
  if (existing !== undefined) quarantine(store, path, integrityHex);
  writeFileAtomic(path, canonical, { faults: store.faults, writePoint: "index-write", mode: 0o444 });
}

/**
 * Reads and verifies a tool index entry. Undefined when absent; a corrupt entry is evicted and
 * E_CACHE_CORRUPT is thrown.
 */
export function readToolEntry(store: Store, integrityHex: string): ToolIndexEntry | undefined {
  const path = indexPath(store, integrityHex);
  const bytes = readIndexBytes(path);
  if (bytes === undefined) return undefined;
  const actual = sha256Hex(bytes);
  if (actual !== integrityHex) throw corruptError({ kind: "index", expected: integrityHex, actual, quarantined: quarantine(store, path, integrityHex) });
  const value = parseJsonLossless(new TextDecoder().decode(bytes), { positions: false }).value as unknown as ToolIndexEntry;
  return value;
}

/**
 * The file list of an installed package tree (deps/: `{"kind": "npm-tree" | "pypi-tree", "files": [...]}`),
 * verified by its digest like a tool entry; undefined when absent or not a tree entry.
 */
export function readTreeEntry(store: Store, treeHex: string): FileEntry[] | undefined {
  const entry = readToolEntry(store, treeHex) as unknown as { kind?: unknown; files?: unknown } | undefined;
  if (!entry || (entry.kind !== "npm-tree" && entry.kind !== "pypi-tree") || !Array.isArray(entry.files)) return undefined;
  return entry.files as FileEntry[];
}

/** Re-hashes the index entry stored under `hex` (for `kiwi cache verify`). */
export function checkIndexEntry(store: Store, hex: string): "ok" | "missing" | Eviction {
  const path = indexPath(store, hex);
  const bytes = readIndexBytes(path);
  if (bytes === undefined) return "missing";
  const actual = sha256Hex(bytes);
  return actual === hex ? "ok" : { kind: "index", expected: hex, actual, quarantined: quarantine(store, path, hex) };
}

/** The error for an evicted entry; `file` names the file the blob holds, when the caller knows it. */
export function corruptError(e: Eviction, file?: string): KiwiError {
  return new KiwiError(
    "E_CACHE_CORRUPT",
    `cached ${e.kind === "blob" ? "blob" : "tool index entry"} sha256:${shortDigest(e.expected)}${file === undefined ? "" : ` (${file})`} holds bytes hashing to sha256:${shortDigest(e.actual)}; it was evicted to ${e.quarantined}`,
    { hint: 'run "kiwi install" to restore it from the tool tree, and check what is writing to the cache', details: { ...e, ...(file === undefined ? {} : { file }) } },
  );
}

/** The error for a blob the lockfile needs but the cache does not hold; `file` names the file it holds. */
export function missingBlob(hex: string, file?: string): KiwiError {
  return new KiwiError("E_CACHE_MISSING", `the cache holds no blob sha256:${shortDigest(hex)}${file === undefined ? "" : ` (${file})`}`, { hint: 'run "kiwi install"', details: { sha256: hex, ...(file === undefined ? {} : { file }) } });
}

function readIndexBytes(path: string): Uint8Array | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Moves a bad entry out of its name. Renaming (not deleting) keeps the evidence and is atomic;
 * if another process already replaced or evicted it, the rename simply finds nothing.
 */
function quarantine(store: Store, path: string, hex: string): string {
  const dir = join(store.dir, "quarantine");
  const dest = join(dir, `${hex}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  try {
    mkdirSync(dir, { recursive: true });
    renameSync(path, dest);
    return dest;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return dest;
    // A read-only cache cannot evict; the entry stays but every read re-verifies, so it is never served.
    return `nowhere: moving it failed with ${code ?? String(error)}, so it stays in place and is refused on every read`;
  }
}

/** Marks an entry as recently used, so `kiwi cache prune`'s grace period protects it. */
function touch(path: string): void {
  const now = new Date();
  try {
    utimesSync(path, now, now);
  } catch {
    // A read-only cache still serves verified blobs; only prune's grace is lost.
  }
}

function assertHex(hex: string): string {
  if (!isHexDigest(hex)) throw new KiwiError("E_INTERNAL", `not a sha256 hex digest: ${JSON.stringify(hex.slice(0, 80))}`);
  return hex;
}
