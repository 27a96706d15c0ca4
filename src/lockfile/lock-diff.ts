// What changed between two lockfiles (or a lockfile and the tree it should describe): tools added,
// removed or changed, and for a changed tool which fields and which files. Pure.
import { compareCodePoints } from "../integrity/canonical.ts";
import type { LockedFile, LockedTool, Lockfile } from "../schema/lockfile.ts";

export type FileChangeKind = "added" | "removed" | "changed" | "mode";

/** One file of one tool that differs; digests are bare hex. */
export interface FileChange {
  path: string;
  kind: FileChangeKind;
  before?: LockedFile;
  after?: LockedFile;
}

/** Entry fields compared besides files, in the order they are reported. */
export const COMPARED_FIELDS = ["version", "type", "source", "executor", "manifest_digest"] as const;
export type ComparedField = (typeof COMPARED_FIELDS)[number];

export interface ToolChange {
  id: string;
  kind: "added" | "removed" | "changed";
  before?: LockedTool;
  after?: LockedTool;
  /** Changed entry fields (`manifest_digest` means the manifest text changed). */
  fields: ComparedField[];
  files: FileChange[];
}

export interface LockDiff {
  added: ToolChange[];
  removed: ToolChange[];
  changed: ToolChange[];
}

/** Compares two lockfiles' tools; `before` undefined means "no lockfile yet". */
export function diffLockfiles(before: Lockfile | undefined, after: Lockfile): LockDiff {
  return diffToolEntries(before?.tools ?? {}, after.tools);
}

/** diffLockfiles over two sets of tool entries. */
export function diffToolEntries(old: Record<string, LockedTool>, now: Record<string, LockedTool>): LockDiff {
  const diff: LockDiff = { added: [], removed: [], changed: [] };
  const ids = [...new Set([...Object.keys(old), ...Object.keys(now)])].sort(compareCodePoints);
  for (const id of ids) {
    // Own entries only: a tool named "constructor" that one side lacks is absent there, not Object.
    const a = Object.hasOwn(old, id) ? old[id] : undefined;
    const b = Object.hasOwn(now, id) ? now[id] : undefined;
    if (!a && b) diff.added.push({ id, kind: "added", after: b, fields: [], files: b.files.map((f) => ({ path: f.path, kind: "added", after: f })) });
    else if (a && !b) diff.removed.push({ id, kind: "removed", before: a, fields: [], files: a.files.map((f) => ({ path: f.path, kind: "removed", before: f })) });
    else if (a && b) {
      const change = diffTool(id, a, b);
      if (change) diff.changed.push(change);
    }
  }
  return diff;
}

/** The change between two entries of one tool, or undefined when they are equal. */
export function diffTool(id: string, a: LockedTool, b: LockedTool): ToolChange | undefined {
  if (a.integrity === b.integrity && a.manifest_digest === b.manifest_digest && COMPARED_FIELDS.every((k) => a[k] === b[k]) && sameFiles(a.files, b.files)) return undefined;
  const fields = COMPARED_FIELDS.filter((k) => a[k] !== b[k]);
  const files = diffFiles(a.files, b.files);
  if (fields.length === 0 && files.length === 0 && a.integrity === b.integrity) return undefined;
  return { id, kind: "changed", before: a, after: b, fields, files };
}

/** File-level differences, sorted by path. */
export function diffFiles(before: readonly LockedFile[], after: readonly LockedFile[]): FileChange[] {
  const old = new Map(before.map((f) => [f.path, f]));
  const now = new Map(after.map((f) => [f.path, f]));
  const paths = [...new Set([...old.keys(), ...now.keys()])].sort(compareCodePoints);
  const out: FileChange[] = [];
  for (const path of paths) {
    const a = old.get(path);
    const b = now.get(path);
    if (!a) out.push({ path, kind: "added", after: b });
    else if (!b) out.push({ path, kind: "removed", before: a });
    else if (a.sha256 !== b.sha256) out.push({ path, kind: "changed", before: a, after: b });
    else if (a.is_executable !== b.is_executable) out.push({ path, kind: "mode", before: a, after: b });
  }
  return out;
}

/** True when nothing was added, removed or changed. */
export function isEmptyDiff(diff: LockDiff): boolean {
  return diff.added.length === 0 && diff.removed.length === 0 && diff.changed.length === 0;
}

/** Every change in one list, ordered by tool id. */
export function allChanges(diff: LockDiff): ToolChange[] {
  return [...diff.added, ...diff.removed, ...diff.changed].sort((x, y) => compareCodePoints(x.id, y.id));
}

/** One tool's change as plain data (JSON output, error details, rendering). */
export interface ToolChangeSummary {
  id: string;
  change: ToolChange["kind"];
  /** Locked version before / after. */
  before?: string;
  after?: string;
  fields: { field: string; before: string | null; after: string | null }[];
  /** `lineEndings: "crlf"`: the file's bytes, with CRLF read as LF, are the locked ones (git converted them on checkout). */
  files: { path: string; change: FileChangeKind; before?: string; after?: string; executable?: boolean; lineEndings?: "crlf" }[];
  /** Declared packages the lock does not resolve (a frozen install names them), per ecosystem. */
  packages?: { ecosystem: string; changes: string[] }[];
}

export interface DiffSummary {
  added: ToolChangeSummary[];
  removed: ToolChangeSummary[];
  changed: ToolChangeSummary[];
}

/** The diff as plain JSON-ready data, with full digests. */
export function summarizeDiff(diff: LockDiff, options: { addedFiles?: boolean } = {}): DiffSummary {
  // A human summary names added and removed tools only (ui/lock-render.ts): their file lists (every
  // file of a cold lock's 1,000 tools) are left out unless asked for.
  const listAll = options.addedFiles !== false;
  const tool = (ch: ToolChange): ToolChangeSummary => ({
    id: ch.id,
    change: ch.kind,
    ...(ch.before ? { before: ch.before.version } : {}),
    ...(ch.after ? { after: ch.after.version } : {}),
    fields: ch.fields.map((f) => ({ field: f === "manifest_digest" ? "manifest" : f, before: ch.before![f], after: ch.after![f] })),
    files: (listAll || ch.kind === "changed" ? ch.files : []).map((f) => ({
      path: f.path,
      change: f.kind,
      ...(f.before ? { before: f.before.sha256 } : {}),
      ...(f.after ? { after: f.after.sha256 } : {}),
      ...(f.kind === "mode" ? { executable: f.after!.is_executable } : {}),
    })),
  });
  return { added: diff.added.map(tool), removed: diff.removed.map(tool), changed: diff.changed.map(tool) };
}

function sameFiles(a: readonly LockedFile[], b: readonly LockedFile[]): boolean {
  return a.length === b.length && a.every((f, i) => f.path === b[i]!.path && f.sha256 === b[i]!.sha256 && f.is_executable === b[i]!.is_executable);
}
