// `kiwi tree`: a tool's chain (or every top-level tool's) with versions, integrities, sources and
// how each link compares with tool.lock.json. Inspection only: a changed or missing link is a
// status, not an error.
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { formatDigest } from "../integrity/digest.ts";
import { readLockfile } from "../lockfile/fs.ts";
import { LOCKFILE_NAME } from "../lockfile/parse.ts";
import { type Project, readProject } from "../manifest/discover-io.ts";
import { findProjectRoot } from "../manifest/project-io.ts";
import type { Tool } from "../manifest/model.ts";
import { MAX_CHAIN_DEPTH, executorIds, indexTools, resolveChain } from "../resolve/chain.ts";
import type { LockedTool, Lockfile } from "../schema/lockfile.ts";
import { hashChainTools, readToolAt } from "../exec/chain-io.ts";
import { readOnlyStatCache, unknownTool } from "../exec/chain-verify-io.ts";

export type LinkStatus = "verified" | "changed" | "missing" | "unlocked";

export interface TreeLink {
  id: string;
  version: string;
  type: string;
  /** Where the link comes from: the manifest file, or `<builtin>/<id>.yaml`. */
  source: string;
  /** `id@version` of the executor, null for a primitive. */
  executor: string | null;
  /** The lockfile's integrity (null when the tool is not locked). */
  locked: string | null;
  /** The integrity recomputed from the tree (null when the tool is gone). */
  tree: string | null;
  status: LinkStatus;
  files: number;
}

export interface TreeReport {
  tool: string;
  /** `locked`: the chain comes from tool.lock.json; `unlocked`: from the tree (no lockfile entry). */
  mode: "locked" | "unlocked";
  lockfile: string | null;
  links: TreeLink[];
  /** Why the chain could not be resolved (`kiwi tree` of the whole project goes on past it): no links then. */
  broken?: { code: string; message: string; hint?: string };
}

/** Resolves the chain of `toolId` for display. */
export function resolveTree(ctx: Context, toolId: string): TreeReport {
  return treeOf(treeSource(ctx), toolId);
}

/**
 * `kiwi tree` without a tool: the chain of every top-level tool of the project (every tool, locked
 * or in the tree, that no other project tool runs on; built-ins appear in the chains that reach
 * them), by id. A chain that is broken does not hide the others: its report carries the error.
 */
export function resolveTrees(ctx: Context): TreeReport[] {
  const source = treeSource(ctx);
  const project = source.project();
  const locked = source.lock?.tools ?? {};
  const executors = executorIds(locked, project.tools);
  const runOn = new Set(executors.values());
  const builtins = new Set(project.tools.filter((t) => t.form === "builtin").map((t) => t.id));
  const builtin = (id: string) => (locked[id] ? locked[id]!.source.startsWith("<builtin>") : builtins.has(id));
  const roots = [...executors.keys()].filter((id) => !runOn.has(id) && !builtin(id)).sort();
  return roots.map((id) => {
    try {
      return treeOf(source, id);
    } catch (error) {
      if (!(error instanceof KiwiError) || error.code !== "E_CHAIN") throw error;
      return { tool: id, mode: source.lock?.tools[id] ? "locked" : "unlocked", lockfile: source.lock ? LOCKFILE_NAME : null, links: [], broken: { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) } };
    }
  });
}

/** What every chain of one `kiwi tree` run is read from: the lockfile, the stat cache, the project (read once, when needed). */
interface TreeSource {
  root: string;
  lock: Lockfile | undefined;
  statCache: ReturnType<typeof readOnlyStatCache>;
  cacheDir: string;
  project: () => Project;
}

function treeSource(ctx: Context): TreeSource {
  const root = findProjectRoot(ctx.cwd);
  let project: Project | undefined;
  return { root, lock: readLockfile(root)?.lock, statCache: readOnlyStatCache(ctx, root), cacheDir: ctx.cacheDir, project: () => (project ??= readProject(root)) };
}

function treeOf(source: TreeSource, toolId: string): TreeReport {
  const { root, lock, statCache } = source;
  if (lock?.tools[toolId]) {
    const links: TreeLink[] = [];
    const seen = new Set<string>();
    for (let id: string | null = toolId; id !== null; ) {
      const entry: LockedTool | undefined = lock.tools[id];
      if (!entry || seen.has(id) || links.length >= MAX_CHAIN_DEPTH) {
        throw new KiwiError("E_CHAIN", `the locked chain of ${toolId} is broken at ${id}`, { hint: 'run "kiwi lock"' });
      }
      seen.add(id);
      const { tool } = readToolAt(root, entry.source, source.cacheDir);
      const hashed = tool && tool.id === id ? hashChainTools(root, [tool], statCache)[0] : undefined;
      const tree = hashed ? formatDigest(hashed.integrity) : null;
      links.push({
        id,
        version: entry.version,
        type: entry.type,
        source: entry.source,
        executor: entry.executor,
        locked: entry.integrity,
        tree,
        status: tree === null ? "missing" : tree === entry.integrity ? "verified" : "changed",
        files: entry.files.length,
      });
      id = entry.executor === null ? null : entry.executor.slice(0, entry.executor.lastIndexOf("@"));
    }
    return { tool: toolId, mode: "locked", lockfile: LOCKFILE_NAME, links };
  }
  const project = source.project();
  const tool = project.tools.find((t) => t.id === toolId);
  if (!tool) throw unknownTool(toolId, [...new Set([...project.tools.map((t) => t.id), ...Object.keys(lock?.tools ?? {})])]);
  const resolved = resolveChain(indexTools(project.tools), tool);
  if (!resolved.ok) {
    throw new KiwiError("E_CHAIN", `the chain of ${toolId} is broken: ${resolved.findings.map((f) => f.message).join("; ")}`, {
      hint: resolved.findings[0]?.hint ?? 'run "kiwi check"',
      details: { findings: resolved.findings, partial: resolved.chain.map((t) => t.id) },
    });
  }
  const hashed = hashChainTools(root, resolved.chain, statCache);
  return {
    tool: toolId,
    mode: "unlocked",
    lockfile: lock ? LOCKFILE_NAME : null,
    links: resolved.chain.map((t: Tool, i) => ({
      id: t.id,
      version: t.version,
      type: t.type,
      source: t.manifestFile,
      executor: resolved.chain[i + 1] ? `${resolved.chain[i + 1]!.id}@${resolved.chain[i + 1]!.version}` : null,
      locked: lock?.tools[t.id]?.integrity ?? null,
      tree: formatDigest(hashed[i]!.integrity),
      status: "unlocked" as const,
      files: t.files.length,
    })),
  };
}
