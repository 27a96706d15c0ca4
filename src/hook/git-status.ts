// git's answer to "what differs?" in one listing: `git status --porcelain=v2 -z` names every path
// whose index copy differs from HEAD (staged) or whose working copy differs from the index
// (unstaged), with the blob ids of its HEAD and index copies. One process where the staged check
// used to start two (`git diff --cached` and `git diff`), and the blob ids identify the lockfile as
// committed and as in HEAD without reading either. Pure.

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
