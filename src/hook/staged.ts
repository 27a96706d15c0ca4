// From changed paths (git's staged list, or the file names pre-commit passes) to the tools a
// commit affects: the tools whose manifest or files changed, every tool whose chain runs through
// one of them, and the locked tools whose source went away. Pure.
import { IGNORE_FILE, REMOTE_TOOLS_DIR, type Tool } from "../manifest/model.ts";
import { LOCKFILE_NAME } from "../lockfile/name.ts";
import type { LockedTools } from "../lockfile/locked-tools.ts";

const TOOLS_SEGMENT = ".ai/tools/";

/** Changed paths of one project, relative to its root. */
export interface ProjectChanges {
  /** Project root relative to where the paths were given ("" for the same folder), `/`-separated. */
  root: string;
  paths: string[];
}

/**
 * Groups changed paths (relative, `/`-separated) by the project they belong to: the folder that
 * holds the `.ai/tools/` they are under, or the folder of a changed `tool.lock.json` or
 * `.ai/kiwi-ignore.yaml`. Paths that
 * belong to no project are dropped. Nested projects each get their own group.
 */
export function groupByProject(paths: readonly string[]): ProjectChanges[] {
  const groups = new Map<string, string[]>();
  for (const raw of paths) {
    const path = raw.replace(/\\/g, "/").replace(/^\.\/+/, "");
    const at = path.startsWith(TOOLS_SEGMENT) ? 0 : path.lastIndexOf(`/${TOOLS_SEGMENT}`) + 1;
    let root: string | undefined;
    if (at === 0 && path.startsWith(TOOLS_SEGMENT)) root = "";
    else if (at > 0) root = path.slice(0, at - 1);
    else if (path === LOCKFILE_NAME || path === IGNORE_FILE) root = "";
    else if (path.endsWith(`/${LOCKFILE_NAME}`)) root = path.slice(0, -LOCKFILE_NAME.length - 1);
    else if (path.endsWith(`/${IGNORE_FILE}`)) root = path.slice(0, -IGNORE_FILE.length - 1);
    if (root === undefined) continue;
    const list = groups.get(root) ?? [];
    list.push(root === "" ? path : path.slice(root.length + 1));
    groups.set(root, list);
  }
  return [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([root, list]) => ({ root, paths: [...new Set(list)].sort() }));
}

export interface AffectedTools {
  /** Tools whose manifest or one of whose files is among the changed paths. */
  changed: Tool[];
  /** Tools whose executor chain includes a changed tool (not themselves changed). */
  dependents: Tool[];
  /** Locked tool ids whose source file or folder is among the changed paths but no longer holds them. */
  gone: string[];
  /** The lockfile itself is among the changed paths: every tool's entry must be judged. */
  lockfileChanged: boolean;
  /** The ignore file is among the changed paths: what it lets through may be anywhere, so every tool is judged. */
  ignoresChanged: boolean;
}

/**
 * The remote tools (each folder of .ai/tools/.remote/, by its name) whose files `paths` (project-
 * relative, staged) add or change, with how many: a remote tool comes from a registry, pinned by
 * tool.lock.json and put back by kiwi install, and is never committed (kiwi's .gitignore there
 * keeps it out; `git add -f` does not). A staged deletion (a path in `deleted`) takes one out of
 * git, which is what it should be.
 */
export function committedRemoteTools(paths: readonly string[], deleted: ReadonlySet<string>): Map<string, number> {
  const prefix = `${REMOTE_TOOLS_DIR}/`;
  const out = new Map<string, number>();
  for (const path of paths) {
    if (!path.startsWith(prefix) || deleted.has(path)) continue;
    const slash = path.indexOf("/", prefix.length);
    if (slash === -1) continue; // kiwi's .gitignore, or another file beside the tools
    const name = path.slice(prefix.length, slash);
    out.set(name, (out.get(name) ?? 0) + 1);
  }
  return out;
}

/** The tool a project-relative path belongs to, if any (its manifest, its script, or a file in its folder). */
export function toolOfPath(tools: readonly Tool[], path: string): Tool | undefined {
  // Over every tool of the tree per changed path, in the interpreter: `${root}/` is not built per tool.
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]!;
    const form = tool.form;
    if (form === "builtin") continue;
    if (tool.manifestFile === path) return tool;
    if (form !== "directory") continue;
    const root = tool.root;
    if (root !== "" && path.length > root.length && path.charCodeAt(root.length) === 47 /* "/" */ && path.startsWith(root)) return tool;
  }
  return undefined;
}

/** Which tools a set of changed project-relative paths affects, given the lockfile's entries. */
export function selectAffected(tools: readonly Tool[], paths: readonly string[], locked?: LockedTools): AffectedTools {
  const changed = new Set<Tool>();
  for (const path of paths) {
    const tool = toolOfPath(tools, path);
    if (tool) changed.add(tool);
  }
  const dependents = reverseDependents(tools, changed);
  const touched = locked?.touchedByAny(paths) ?? [];
  // The ids present are gathered only when an entry is touched (a tool moved or deleted).
  const present = touched.length === 0 ? undefined : new Set(tools.map((t) => t.id));
  const gone = new Set<string>();
  // A tool that still exists (even moved) is judged by its own entry, `source` included.
  for (const id of touched) if (!present!.has(id)) gone.add(id);
  return {
    changed: inTreeOrder(tools, changed),
    dependents: inTreeOrder(tools, dependents),
    gone: [...gone].sort(),
    lockfileChanged: paths.includes(LOCKFILE_NAME),
    ignoresChanged: paths.includes(IGNORE_FILE),
  };
}

/** The tools of `set` as they come in `tools` (each time they come): a filter without a closure per tool. */
function inTreeOrder(tools: readonly Tool[], set: ReadonlySet<Tool>): Tool[] {
  const out: Tool[] = [];
  if (set.size === 0) return out;
  for (let i = 0; i < tools.length; i++) if (set.has(tools[i]!)) out.push(tools[i]!);
  return out;
}

/** Every tool whose chain reaches one of `targets` (transitively), excluding the targets. */
export function reverseDependents(tools: readonly Tool[], targets: ReadonlySet<Tool>): Set<Tool> {
  // A tool runs on another when that one is the first tool with its executor's id (project tools
  // shadow built-ins), as resolve/ picks it. Found a generation at a time, one pass over the tree
  // for who is first with an id and one for whose executor that is, never a map of every tool: a
  // commit's few tools rarely have dependents, and the interpreter runs these passes (staged check).
  const out = new Set<Tool>();
  let generation: Tool[] = [...targets];
  while (generation.length > 0) {
    const parents = firstWithOwnId(tools, generation);
    if (parents.size === 0) break;
    const next: Tool[] = [];
    for (let i = 0; i < tools.length; i++) {
      const tool = tools[i]!;
      const ref = tool.executor;
      // A tool that is its own executor is in the generation, so among the targets or already out.
      if (!ref || !parents.has(ref.id) || targets.has(tool) || out.has(tool)) continue;
      out.add(tool);
      next.push(tool);
    }
    generation = next;
  }
  return out;
}

/** The ids of the given tools that are each the first tool with its id in `tools` (the one an executor reference resolves to). */
function firstWithOwnId(tools: readonly Tool[], some: readonly Tool[]): Set<string> {
  const first = new Map<string, Tool | undefined>();
  for (const tool of some) first.set(tool.id, undefined);
  let open = first.size;
  for (let i = 0; i < tools.length && open > 0; i++) {
    const id = tools[i]!.id;
    if (first.has(id) && first.get(id) === undefined) {
      first.set(id, tools[i]!);
      open--;
    }
  }
  const ids = new Set<string>();
  for (const tool of some) if (first.get(tool.id) === tool) ids.add(tool.id);
  return ids;
}
