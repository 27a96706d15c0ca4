// The stat cache: (size, mtime, ctime, inode) -> sha256 per file of one project, so a warm
// `kiwi lock` reads no unchanged file. It is a hint, never a source of truth: `kiwi verify` and
// installs re-read bytes, and an unreadable or foreign stat cache is simply ignored.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ToolFile } from "../manifest/model.ts";
import { writeFileAtomic } from "./atomic-io.ts";
import type { Faults } from "./faults-io.ts";
import { statRelPath } from "./layout.ts";

/**
 * A file whose mtime or ctime is this close to the start of hashing is "racy": a second write in
 * the same timestamp tick would leave its stat unchanged, so it is hashed again next time rather
 * than remembered (git's racy-clean rule, with a margin that covers 1-2 s file systems).
 */
export const RACY_MARGIN_MS = 2000;

const FORMAT = 1;

type Row = [size: number, mtimeMs: number, ctimeMs: number, ino: number, sha256: string];

interface StatFile {
  format: number;
  root: string;
  entries: Record<string, Row>;
}

/** The stat cache of one project for one run: lookups, records, and a save at the end. */
export class StatCache {
  private readonly next = new Map<string, Row>();
  private dirty = false;
  hits = 0;
  misses = 0;

  constructor(
    readonly file: string,
    private readonly root: string,
    private readonly previous: ReadonlyMap<string, Row>,
    /** Start of this run's hashing (ms since epoch), for the racy rule. */
    private readonly startedAt: number,
  ) {}

  /** The remembered digest of a file whose stat is unchanged, else undefined. */
  lookup(key: string, file: Pick<ToolFile, "size" | "mtimeMs" | "ctimeMs" | "ino">): string | undefined {
    const row = this.previous.get(key);
    if (row && row[0] === file.size && row[1] === file.mtimeMs && row[2] === file.ctimeMs && row[3] === file.ino) {
      this.next.set(key, row);
      this.hits++;
      return row[4];
    }
    this.misses++;
    return undefined;
  }

  /** Remembers a digest read from disk with the stat taken before reading (racy files are skipped). */
  record(key: string, file: Pick<ToolFile, "size" | "mtimeMs" | "ctimeMs" | "ino">, hex: string): void {
    this.dirty = true;
    if (Math.max(file.mtimeMs, file.ctimeMs) >= this.startedAt - RACY_MARGIN_MS) return;
    this.next.set(key, [file.size, file.mtimeMs, file.ctimeMs, file.ino, hex]);
  }

  /** Writes the cache when it changed (files seen this run only). Returns a warning instead of throwing. */
  save(faults?: Faults): string | undefined {
    if (!this.dirty && this.next.size === this.previous.size) return undefined;
    const body: StatFile = { format: FORMAT, root: this.root, entries: Object.fromEntries(this.next) };
    try {
      writeFileAtomic(this.file, JSON.stringify(body), { faults, writePoint: "stat-write" });
      return undefined;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      return `could not save the stat cache ${this.file} (${code}); the next run hashes every file again`;
    }
  }
}

/** Loads a project's stat cache; a missing, unreadable or foreign file gives an empty cache. */
export function loadStatCache(cacheDir: string, root: string, startedAt: number): StatCache {
  const file = join(cacheDir, statRelPath(root));
  let previous = new Map<string, Row>();
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as StatFile;
    if (parsed.format === FORMAT && parsed.root === root && parsed.entries && typeof parsed.entries === "object") {
      previous = new Map(Object.entries(parsed.entries).filter(([, row]) => isRow(row)));
    }
  } catch {
    // No stat cache yet, or a damaged one: every file is hashed, which is always correct.
  }
  return new StatCache(file, root, previous, startedAt);
}

function isRow(row: unknown): row is Row {
  return Array.isArray(row) && row.length === 5 && row.slice(0, 4).every((n) => typeof n === "number") && typeof row[4] === "string" && /^[0-9a-f]{64}$/.test(row[4]);
}
