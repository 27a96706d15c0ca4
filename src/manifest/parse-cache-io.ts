// Remembers parsed manifests by file identity (size, mtime, ctime, inode), so an unchanged tree is
// not parsed again: YAML parsing dominates `kiwi check` on large trees. Same trust model as the
// file-hash stat cache; a changed ctime (which tools cannot set) always forces a fresh parse.
// It also remembers, the same way, that a Python entry point has no PEP 723 block (discover-io.ts).
import { readFileSync } from "node:fs";
import type { EntryStat } from "./project-io.ts";

/** The identity a cached entry is checked against. */
type Identity = Pick<EntryStat, "size" | "mtimeMs" | "ctimeMs" | "ino">;
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { writeFileAtomic } from "../cache/atomic-io.ts";
import { sha256Hex } from "../integrity/digest.ts";
import { type CanonicalValue, Float } from "../integrity/value.ts";
import { parseJsonLossless } from "../integrity/json-lossless.ts";
import type { IgnoreDirective } from "./ignore-comments.ts";
import { renderLosslessJson } from "../integrity/canonical.ts";

/** Bumped whenever what an entry holds changes (2, 3: ignore comments; 4: a CRLF file's embedded metadata read without its CRs; 5: an ignore comment's column on a shell block's `#key` line), as the kiwi version is between releases. */
const FORMAT = 5;

/** How recent a change must be for its parse not to be remembered (the stat cache's rule too). */
const RACY_MS = 2000;

interface Entry {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  /** The parsed document, or null when the file had no metadata. */
  value: CanonicalValue | null;
  /** Its ignore comments, which the document does not hold; absent when it has none. */
  ignores?: IgnoreDirective[];
}

/**
 * An entry as stored. A value JSON.parse reads back exactly is stored as is (the common case, and
 * fast to load); one holding an integral float (`1.0`) or an integer past 2^53 is stored as
 * lossless text, parsed with the lossless parser when the cache is loaded.
 */
type StoredEntry = Omit<Entry, "value"> & { value?: CanonicalValue | null; lossless?: string };

function toStored(e: Entry): StoredEntry {
  // Spelled out, not spread: a cold lock stores a thousand entries (the key order is Entry's).
  const { size, mtimeMs, ctimeMs, ino, value, ignores } = e;
  const stored: StoredEntry = value !== null && needsLossless(value) ? { size, mtimeMs, ctimeMs, ino, lossless: renderLosslessJson(value) } : { size, mtimeMs, ctimeMs, ino, value };
  if (ignores) stored.ignores = ignores;
  return stored;
}

function fromStored(e: StoredEntry): Entry {
  const { value, lossless, ...identity } = e;
  return { ...identity, value: lossless !== undefined ? parseJsonLossless(lossless, { positions: false }).value : (value ?? null) };
}

/** True when JSON.stringify + JSON.parse would lose integer/float identity or precision. */
function needsLossless(value: CanonicalValue): boolean {
  if (value === null || typeof value !== "object") return typeof value === "bigint";
  if (value instanceof Float) return true;
  // Loops, not some() over Object.values(): this walks every value of every manifest a cold run parsed.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (needsLossless(value[i]!)) return true;
    return false;
  }
  for (const key in value) if (Object.hasOwn(value, key) && needsLossless(value[key]!)) return true;
  return false;
}

/** A per-project cache of parsed manifests, loaded once and written back only when it changed. */
export class ManifestCache {
  private readonly before: Map<string, Entry>;
  private readonly after = new Map<string, Entry>();
  private dirty = false;

  private constructor(
    private readonly file: string | undefined,
    entries: Map<string, Entry>,
  ) {
    this.before = entries;
  }

  /** Opens the cache for a project root; without a cache dir it remembers nothing. */
  static open(cacheDir: string | undefined, projectRoot: string): ManifestCache {
    if (!cacheDir) return new ManifestCache(undefined, new Map());
    const file = join(cacheDir, "manifests", `${sha256Hex(projectRoot).slice(0, 32)}.json`);
    let entries = new Map<string, Entry>();
    try {
      const doc = JSON.parse(readFileSync(file, "utf8")) as { kiwi?: unknown; format?: unknown; entries?: Record<string, StoredEntry> };
      // A different kiwi may parse differently: its entries are not reused.
      if (doc.kiwi === pkg.version && doc.format === FORMAT && doc.entries && typeof doc.entries === "object") {
        entries = new Map(Object.entries(doc.entries).map(([path, e]) => [path, fromStored(e)]));
      }
    } catch {
      // Missing or unreadable cache: parse everything, and rewrite it below.
    }
    return new ManifestCache(file, entries);
  }

  /** The cached document for a file whose identity is unchanged, or undefined on a miss. */
  get(path: string, stat: Identity): CanonicalValue | null | undefined {
    const hit = this.before.get(path);
    if (!hit || hit.size !== stat.size || hit.mtimeMs !== stat.mtimeMs || hit.ctimeMs !== stat.ctimeMs || hit.ino !== stat.ino) return undefined;
    this.after.set(path, hit);
    return hit.value;
  }

  /** The ignore comments of a file get() just found unchanged. */
  ignoresOf(path: string): IgnoreDirective[] | undefined {
    return this.after.get(path)?.ignores;
  }

  /**
   * Records a fresh parse. A file changed in the last two seconds is not remembered: a second write
   * within the file system's timestamp granularity could leave size and times unchanged.
   */
  set(path: string, stat: Identity, value: CanonicalValue | null, ignores?: IgnoreDirective[]): void {
    if (Date.now() - stat.mtimeMs < RACY_MS) return;
    const entry: Entry = { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino, value };
    if (ignores) entry.ignores = ignores;
    this.after.set(path, entry);
    this.dirty = true;
  }

  /** Writes the entries seen this run (dropping deleted files), atomically; failures only cost speed. */
  save(): void {
    if (!this.file || (!this.dirty && this.after.size === this.before.size)) return;
    const body = [...this.after.entries()].map(([path, e]) => `${JSON.stringify(path)}:${JSON.stringify(toStored(e))}`).join(",\n");
    const text = `{"kiwi":${JSON.stringify(pkg.version)},"format":${FORMAT},"entries":{\n${body}\n}}\n`;
    try {
      writeFileAtomic(this.file, text);
    } catch {
      // A read-only or full cache must not fail a read-only command such as kiwi check.
    }
  }
}
