// Stat identities as proof, git's way: a path keeps the identity (size, mtime, ctime, inode) it
// had when something was derived from it, or that something is derived again. Shared by exec's
// chain memo and its launch memo (the launch memo loads nothing else of the chain's).
import { type Stats, lstatSync } from "node:fs";

export type StatId = [size: number, mtimeMs: number, ctimeMs: number, ino: number];

/** A path and the stat identity it had when something was proven from it. */
export type WatchedPath = [path: string, ...id: StatId];

/** Whether `path` (not followed if a symbolic link) still has the stat identity `id`. */
export function sameIdentity(path: string, id: readonly number[]): boolean {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return false;
  }
  return st.size === id[0] && st.mtimeMs === id[1] && st.ctimeMs === id[2] && st.ino === id[3];
}

/** Whether every path still has the stat identity it had. */
export function allUnchanged(watch: readonly WatchedPath[]): boolean {
  for (const [path, ...id] of watch) if (!sameIdentity(path, id)) return false;
  return true;
}
