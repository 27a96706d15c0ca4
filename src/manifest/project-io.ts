// The project on disk without parsing anything: where it is, and which files each tool owns.
// Kept apart from discover-io.ts so commands that only need paths (a warm kiwi exec) do not load
// the YAML parser and the built-in manifests.
import { type Dirent, type Stats, existsSync, lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings/verdict.ts";
import { IGNORED_NAMES } from "../integrity/tool-path.ts";
import type { ToolFile } from "./model.ts";
import { fileFinding } from "../findings/finding.ts";

/** Where tools live, relative to the project root. */
export const TOOLS_DIR = join(".ai", "tools");

/** A folder entry as discovery reads it: what `readdirSync(dir, { withFileTypes: true })` gives. */
export type FolderEntry = Pick<Dirent, "name" | "isDirectory" | "isFile" | "isSymbolicLink">;

/** The stat fields discovery reads (file identity for the parse cache and the tool's files). */
export type EntryStat = Pick<Stats, "size" | "mtimeMs" | "ctimeMs" | "ino" | "mode">;

/**
 * Folder listings and stats a caller took before discovery (raw-tree-io.ts's TreeListing), read
 * instead of the disk; undefined means the listing does not hold that path, and the disk answers.
 */
export interface Listing {
  entries(abs: string): FolderEntry[] | undefined;
  stat(abs: string): EntryStat | undefined;
  /** The stat of an entry `entries` gave (no lookup by path), or undefined for any other. */
  entryStat(entry: FolderEntry): EntryStat | undefined;
}

/** The nearest ancestor of `cwd` (inclusive) that holds `.ai/tools/`. */
export function findProjectRoot(cwd: string): string {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (existsSync(join(dir, TOOLS_DIR))) return dir;
    if (dirname(dir) === dir) break;
  }
  // A folder that is not there (a mistyped --cwd) is said as that, not as a folder without a project.
  if (!existsSync(cwd)) throw new KiwiError("E_NO_PROJECT", `${cwd} does not exist`, { hint: "pass --cwd a folder of the project (or run kiwi from one)" });
  throw new KiwiError("E_NO_PROJECT", `no .ai/tools/ folder in ${cwd} or any parent`, {
    hint: 'run "kiwi init" to create one, or pass --cwd <project>',
  });
}

/** A path segment that is empty, `.` or `..`: a path holding one is not normalised. */
const UNCLEAN_SEGMENT = /(?:^|\/)\.{0,2}(?:\/|$)/;

/** Project-relative path with `/` separators. */
export function toProjectPath(root: string, abs: string): string {
  // Discovery asks this several times per tool, nearly always of a clean path below a clean root:
  // then it is that path's tail (path.relative() was ~4 ms of a cold 1,000-tool lock).
  if (sep === "/" && abs.length > root.length + 1 && abs.charCodeAt(root.length) === 47 && abs.startsWith(root) && !UNCLEAN_SEGMENT.test(root.slice(1))) {
    const tail = abs.slice(root.length + 1);
    if (!UNCLEAN_SEGMENT.test(tail)) return tail;
  }
  return relative(root, abs).split(sep).join("/");
}

/**
 * Every regular file below a directory tool, sorted by path. A symlink is followed only when its
 * target stays inside the tool; one that leaves it, or loops, is a finding and never followed.
 */
export function listToolFiles(root: string, toolDir: string, findings: Finding[], listing?: Listing): ToolFile[] {
  const out: ToolFile[] = [];
  // The tool's real path is only needed to judge symlinks, which most tools do not have: asked on
  // the first one (a realpath per tool is ~6 ms of a 1,000-tool lock).
  let realRoot: string | undefined;
  const visited = new Set<string>();
  const realRootOf = (): string => {
    if (realRoot === undefined) {
      realRoot = realpathSync(toolDir);
      visited.add(realRoot);
    }
    return realRoot;
  };
  const walk = (dirAbs: string, relDir: string) => {
    let entries: FolderEntry[];
    const listed = listing?.entries(dirAbs);
    try {
      entries = listed ?? readdirSync(dirAbs, { withFileTypes: true });
    } catch (error) {
      findings.push(ioFinding(root, dirAbs, error));
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (IGNORED_NAMES.has(entry.name)) continue;
      // A listed folder's path is clean (the walk built it): concatenation, not join()'s normalisation.
      const abs = listed ? `${dirAbs}/${entry.name}` : join(dirAbs, entry.name);
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink()) {
        let target: string;
        try {
          target = realpathSync(abs);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          findings.push(
            fileFinding(code === "ELOOP" ? "security/symlink-loop" : "security/symlink-broken", toProjectPath(root, abs), code === "ELOOP" ? "the symbolic link loops" : "the symbolic link points at nothing", "replace the link with the file it should point at"),
          );
          continue;
        }
        const inside = realRootOf();
        if (target !== inside && !target.startsWith(inside + sep)) {
          findings.push(fileFinding("security/symlink-escape", toProjectPath(root, abs), `the symbolic link resolves outside the tool directory (to ${target})`, "copy the file into the tool instead of linking to it"));
          continue;
        }
        const stat = statSync(target);
        if (stat.isDirectory()) {
          if (visited.has(target)) continue;
          visited.add(target);
          walk(target, rel);
        } else if (stat.isFile()) out.push(fileOf(rel, target, stat));
      } else if (entry.isDirectory()) {
        walk(abs, rel);
      } else if (entry.isFile()) {
        const listedStat = listed && listing?.entryStat(entry);
        const file = listedStat ? fileOf(rel, abs, listedStat) : statToolFile(abs, rel, findings, root, listing);
        if (file) out.push(file);
      }
    }
  };
  walk(toolDir, "");
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function statToolFile(abs: string, rel: string, findings?: Finding[], root?: string, listing?: Listing): ToolFile | undefined {
  try {
    return fileOf(rel, abs, listing?.stat(abs) ?? lstatSync(abs));
  } catch (error) {
    if (findings && root) findings.push(ioFinding(root, abs, error));
    return undefined;
  }
}

function fileOf(path: string, abs: string, stat: EntryStat): ToolFile {
  return {
    path,
    abs,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    ctimeMs: stat.ctimeMs,
    ino: stat.ino,
    isExecutable: (stat.mode & 0o100) !== 0,
  };
}

export function ioFinding(root: string, abs: string, error: unknown): Finding {
  const code = (error as NodeJS.ErrnoException)?.code ?? "EIO";
  return fileFinding("discover/unreadable", toProjectPath(root, abs), `cannot read: ${code}`, code === "EACCES" ? "make the file readable by the user running kiwi" : "check the path");
}
