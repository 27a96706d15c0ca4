// The raw walk of .ai/tools, one of its entries at a time: every entry's path, folder and lstat
// row, read with one readdir per folder and one lstat per entry. manifest/raw-tree-io.ts joins the
// walks into its RawTree; the cold lock's hashing worker (prehash-io.ts) walks a share of the
// entries with the same function, serialised into it, so both threads walk alike.
import { type Dirent, lstatSync, readdirSync } from "node:fs";

/** Entries of a walk in walk order: paths relative to .ai/tools, each entry's folder (-1 for .ai/tools), stat rows (ROW_WIDTH numbers each). */
export interface WalkRows {
  paths: string[];
  parents: number[];
  stats: number[];
}

/** What a walk reads of .ai/tools itself: its stat row and its entries' names, in readdir order. */
export interface TopListing {
  toolsDir: string;
  top: number[];
  names: string[];
  /** Per name: 1 a folder, 2 a regular file, 0 anything else (readdir's type). */
  kinds: number[];
}

/** The fs calls a walk makes (node:fs, or the pre-hash worker's own). */
export type WalkFs = Pick<typeof import("node:fs"), "lstatSync" | "readdirSync">;

/**
 * Appends entry `name` of .ai/tools (`toolsDir`) and everything below it to `out`, in walk order;
 * false when the tree cannot be vouched for (a symbolic link below it, an entry that cannot be
 * read). The pre-hash worker walks part of the tree with it (cache/prehash-io.ts, serialised with
 * toString()), so it uses only its parameters.
 */
export function walkTopEntry(fs: WalkFs, toolsDir: string, name: string, out: WalkRows): boolean {
  const { paths, parents, stats } = out;
  const add = (abs: string, path: string, parent: number): number => {
    const st = fs.lstatSync(abs);
    const at = paths.length;
    paths.push(path);
    parents.push(parent);
    stats.push(st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode);
    return st.isDirectory() ? at : -1;
  };
  const walk = (dir: string, rel: string, parent: number): boolean => {
    let entries: Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return false;
    }
    for (const entry of entries) {
      if (entry.isSymbolicLink()) return false;
      // dir is already a clean absolute path: concatenation, not join()'s normalisation (a third of the walk).
      const abs = `${dir}/${entry.name}`;
      const path = `${rel}/${entry.name}`;
      let folder: number;
      try {
        folder = add(abs, path, parent);
      } catch {
        return false;
      }
      if (folder !== -1 && !walk(abs, path, folder)) return false;
    }
    return true;
  };
  const abs = `${toolsDir}/${name}`;
  let folder: number;
  try {
    folder = add(abs, name, -1);
  } catch {
    return false;
  }
  return folder === -1 || walk(abs, name, folder);
}

/** Folder `toolsDir`'s own stat and entries, or undefined when the walk cannot vouch for the tree (unreadable, or a symbolic link among them). */
export function listFolder(toolsDir: string): TopListing | undefined {
  try {
    const top = lstatSync(toolsDir);
    const entries = readdirSync(toolsDir, { withFileTypes: true });
    if (entries.some((e) => e.isSymbolicLink())) return undefined;
    return {
      toolsDir,
      top: [top.size, top.mtimeMs, top.ctimeMs, top.ino, top.mode],
      names: entries.map((e) => e.name),
      kinds: entries.map((e) => (e.isDirectory() ? 1 : e.isFile() ? 2 : 0)),
    };
  } catch {
    return undefined;
  }
}

