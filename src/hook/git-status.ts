// git's answer to "what differs?": `git status --porcelain=v2 -z` names every path whose index copy
// differs from HEAD (staged) or whose working copy differs from the index (unstaged), with the blob
// ids of its HEAD and index copies, which identify the lockfile as committed and as in HEAD without
// reading either. The staged check asks it in two steps (parseStagedDiff, then scopedStatus): what
// a commit records, from `git diff --cached --raw`, which reads no working file, and the working
// copies' state only of the paths the check looks at, since a status of the whole tree stats every
// file git tracks (~40 ms for the 13,000 files of a 1,000-tool tree, four times the rest). Pure.

/** What `git status` says of one path: its change codes and the blob ids of its HEAD and index copies. */
export interface StatusEntry {
  /** Index vs HEAD ("." unchanged; "A", "M", "D", "T", ...; "U" for an unmerged path). */
  x: string;
  /** Working copy vs index. */
  y: string;
  /** Blob id in HEAD (all zeros when HEAD has none; undefined for an unmerged path). */
  head?: string;
  /** Blob id in the index (all zeros when the index has none; undefined for an unmerged path). */
  index?: string;
}

export interface GitStatus {
  /** Paths (relative to the work tree, `/`-separated) added, copied, modified, renamed, retyped or deleted in the index. */
  staged: string[];
  /** Paths deleted in the index: what pre-commit never passes to hooks. */
  deleted: string[];
  /** Paths whose working copy differs from the index (unmerged paths included, as `git diff` lists them). */
  unstaged: ReadonlySet<string>;
  /** Every path git listed, with what it said of it. */
  entries: ReadonlyMap<string, StatusEntry>;
}

/** What `git diff --cached --diff-filter=ACMRTD` keeps: the index changes a commit records. */
const STAGED_CODES = new Set(["A", "C", "M", "R", "T", "D"]);

/** Parses `git status --porcelain=v2 -z --no-renames` output (untracked and ignored lines are skipped). */
export function parseGitStatus(text: string): GitStatus {
  const entries = new Map<string, StatusEntry>();
  const records = text.split("\0");
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    const kind = record[0];
    if (kind === "1") {
      // 1 XY sub mH mI mW hH hI path
      const fields = splitFields(record, 8);
      if (!fields) continue;
      entries.set(fields.rest, { x: fields.parts[1]![0]!, y: fields.parts[1]![1]!, head: fields.parts[6], index: fields.parts[7] });
    } else if (kind === "2") {
      // 2 XY sub mH mI mW hH hI Xscore path, then the original path as its own record.
      const fields = splitFields(record, 9);
      i++;
      if (!fields) continue;
      entries.set(fields.rest, { x: fields.parts[1]![0]!, y: fields.parts[1]![1]!, head: fields.parts[6], index: fields.parts[7] });
    } else if (kind === "u") {
      // u XY sub m1 m2 m3 mW h1 h2 h3 path
      const fields = splitFields(record, 10);
      if (fields) entries.set(fields.rest, { x: "U", y: "U" });
    }
  }
  return fromEntries(entries);
}

/**
 * Parses `git diff --cached --raw -z --no-renames --no-abbrev` output (`:mH mI hH hI X` then the
 * path, each NUL-terminated): the index changes against HEAD, with both blob ids. An unmerged path
 * (X = "U") is not staged and counts as unstaged, as in the full status. Working copies are not
 * known here: every `y` is ".".
 */
export function parseStagedDiff(text: string): GitStatus {
  const entries = new Map<string, StatusEntry>();
  const records = text.split("\0");
  for (let i = 0; i + 1 < records.length; i += 2) {
    const head = records[i]!;
    const path = records[i + 1]!;
    if (!head.startsWith(":") || path === "") continue;
    const parts = head.slice(1).split(" ");
    if (parts.length !== 5 || parts[4]!.length === 0) continue;
    const x = parts[4]![0]!;
    entries.set(path, x === "U" ? { x: "U", y: "U" } : { x, y: ".", head: parts[2], index: parts[3] });
  }
  return fromEntries(entries);
}

/**
 * The whole repository's staged changes (parseStagedDiff) with the working copies' state of the
 * paths `scoped` (a status limited to them) covers: `unstaged` holds only those paths (and the
 * unmerged ones), and their entries are the scoped status's.
 */
export function scopedStatus(staged: GitStatus, scoped: GitStatus): GitStatus {
  const unstaged = new Set(scoped.unstaged);
  for (const path of staged.unstaged) unstaged.add(path);
  const entries = new Map(staged.entries);
  for (const [path, entry] of scoped.entries) entries.set(path, entry);
  return { staged: staged.staged, deleted: staged.deleted, unstaged, entries };
}

function fromEntries(entries: Map<string, StatusEntry>): GitStatus {
  const staged: string[] = [];
  const deleted: string[] = [];
  const unstaged = new Set<string>();
  for (const [path, e] of entries) {
    if (STAGED_CODES.has(e.x)) staged.push(path);
    if (e.x === "D") deleted.push(path);
    if (e.y !== ".") unstaged.add(path);
  }
  return { staged, deleted, unstaged, entries };
}

/** The first `count` space-separated fields of a record and the rest (a path may hold spaces). */
function splitFields(record: string, count: number): { parts: string[]; rest: string } | undefined {
  const parts: string[] = [];
  let at = 0;
  for (let n = 0; n < count; n++) {
    const space = record.indexOf(" ", at);
    if (space === -1) return undefined;
    parts.push(record.slice(at, space));
    at = space + 1;
  }
  const rest = record.slice(at);
  return rest === "" || (parts[1] ?? "").length !== 2 ? undefined : { parts, rest };
}
