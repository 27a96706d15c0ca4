// `kiwi install` end to end: place the remote tools, lock (or, frozen, prove the tree matches the
// lockfile without writing it), put every file of every tool and every tool index entry into the
// content-addressed cache, register the project for `kiwi cache prune`, then pin the MCP servers
// that have no pin yet (that step, and the MCP SDK, load only for a project with mcp_server tools).
import { faultsFromEnv } from "../cache/faults-io.ts";
import { registerProject } from "../cache/projects-io.ts";
import { loadStatCache } from "../cache/stat-cache-io.ts";
import { type Eviction, type Store, ensureStore, openStore, putBlobFromFile, readToolEntry, writeToolEntry } from "../cache/store-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings/verdict.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { leftoverLockfileExplained } from "./project-root-io.ts";
import { convertedLineEndingsHint, markConvertedLineEndings } from "./line-endings-io.ts";
import { declaresPackages, requirementChanges } from "../deps/requirements.ts";
import type { Resolution } from "../deps/resolve-io.ts";
import { readProject } from "../manifest/discover-io.ts";
import type { Lockfile } from "../schema/lockfile.ts";
import { integrityText } from "../lockfile/build.ts";
import { compareTreeToLock } from "../lockfile/compare.ts";
import { type LockDiff, allChanges, isEmptyDiff, summarizeDiff } from "../lockfile/lock-diff.ts";
import { lockfilePath, readLockfileText } from "../lockfile/fs.ts";
import { lockProject } from "./lock-io.ts";
import { hashAndCheck } from "./lock-full-io.ts";
import { LOCKFILE_NAME, parseLockfile } from "../lockfile/parse.ts";
import { matchUnchangedLockfile } from "../lockfile/unchanged.ts";
import type { TreeTool } from "../lockfile/hash-tree-io.ts";
import type { PullOptions } from "../registry/fetch-io.ts";
import type { LockPinReport } from "./mcp-lock-io.ts";
import { pinAfterLock } from "./mcp-lock-step-io.ts";
import { type SyncResult, syncRemoteTools } from "./remote-install-io.ts";

export type InstallPhase = "hashing" | "storing";

export interface InstallOptions {
  /** Never write the lockfile; fail if the tree differs from it. */
  frozen: boolean;
  strict?: boolean;
  /** Registries reached over plain HTTP when remote tools are pulled (`--insecure-registry`). */
  insecure?: PullOptions["insecure"];
  onProgress?: (phase: InstallPhase, done: number, total: number) => void;
  /** Told when another kiwi holds tool.lock.json's lock and this one starts to wait for it. */
  onWait?: (holder: string, lockFile: string) => void;
  /** Called once the tree is locked and cached, before any MCP server is started to be pinned. */
  onInstalled?: (result: Omit<InstallResult, "mcpPins">) => void;
  /** Called as each unpinned MCP server is started (it may take a while: npx may download it). */
  onMcpStart?: (server: string) => void;
}

export interface InstallResult {
  root: string;
  lockfile: string;
  frozen: boolean;
  /** Whether the lockfile was (re)written (never when frozen). */
  written: boolean;
  diff: LockDiff;
  findings: Finding[];
  warnings: string[];
  evicted: Eviction[];
  stats: { tools: number; files: number; stored: number; present: number };
  /** Ids of the project's mcp_server tools (whose pins the install step adds; none when frozen). */
  mcpServers: string[];
  /** Those the lockfile does not pin, when the lock knew its pins. */
  mcpUnpinned?: string[];
  /** npm and Python package sets installed now, and found in the cache. */
  packages?: { installed: number; reused: number };
  /** Package resolutions the lock step ran, with the registries and indexes they used. */
  resolutions?: Resolution[];
  /** The remote (registry) tools placed before the tree was hashed. */
  remote: SyncResult;
  /** What the MCP step did for each unpinned server (empty without mcp_server tools, or frozen). */
  mcpPins: LockPinReport[];
}

/** `kiwi install`: remote tools, then the lock (or the frozen proof) and the cache, then MCP pins. */
export async function installProject(ctx: Context, options: InstallOptions): Promise<InstallResult> {
  // Remote tools first: their folders must hold the locked bytes before the tree is hashed.
  const remote = await syncRemoteTools(ctx, { insecure: options.insecure });
  const installed = { ...(await installTree(ctx, options)), remote };
  options.onInstalled?.(installed);
  const mcpPins = await pinAfterLock(ctx, installed, { strict: options.strict === true, onStart: options.onMcpStart });
  return { ...installed, mcpPins };
}

/** Locks (or checks the frozen lockfile), then fills the cache. */
async function installTree(ctx: Context, options: InstallOptions): Promise<Omit<InstallResult, "remote" | "mcpPins">> {
  const store = openStore(ctx.cacheDir, ctx.env);
  const onHash = options.onProgress && ((d: number, t: number) => options.onProgress!("hashing", d, t));
  let tree: TreeTool[];
  let base: Omit<InstallResult, "evicted" | "stats" | "remote" | "mcpPins">;
  // A frozen install never pins MCP servers, so it reports none.
  if (options.frozen) {
    const project = leftoverLockfileExplained(ctx.cwd, () => readProject(ctx.cwd, { cacheDir: ctx.cacheDir }));
    const text = readLockfileText(project.root);
    if (text === undefined) throw new KiwiError("E_LOCK_MISSING", `${LOCKFILE_NAME} does not exist in ${project.root}`, { hint: 'run "kiwi lock"' });
    const statCache = loadStatCache(ctx.cacheDir, project.root, ctx.now());
    const warnings: string[] = [];
    let checked: { tree: TreeTool[]; findings: Finding[] };
    try {
      checked = await hashAndCheck(ctx, project, "kiwi install", { strict: options.strict, onProgress: onHash }, statCache, text);
    } finally {
      const saveWarning = statCache.save(faultsFromEnv(ctx.env));
      if (saveWarning) warnings.push(saveWarning);
    }
    tree = checked.tree;
    if (!matchUnchangedLockfile(text, tree)) assertTreeMatches(parseLockfile(text), tree, store);
    base = { root: project.root, lockfile: lockfilePath(project.root), frozen: true, written: false, diff: { added: [], removed: [], changed: [] }, findings: checked.findings, warnings, mcpServers: [] };
  } else {
    const locked = await lockProject(ctx, { strict: options.strict, onProgress: onHash, needTree: true, onWait: options.onWait });
    tree = locked.tree!;
    base = { root: locked.root, lockfile: locked.lockfile, frozen: false, written: locked.written, diff: locked.diff, findings: locked.findings, warnings: locked.warnings, mcpServers: locked.mcpServers, ...(locked.mcpUnpinned ? { mcpUnpinned: locked.mcpUnpinned } : {}), ...(locked.resolutions ? { resolutions: locked.resolutions } : {}) };
  }
  const filled = fillStore(store, tree, options.onProgress);
  const packages = await installPackages(ctx, base.root, store, tree, options.frozen === true);
  if (packages.written) base = { ...base, written: true };
  try {
    registerProject(store, base.root);
  } catch (error) {
    throw cacheWriteError(store, error);
  }
  return { ...base, ...filled, packages: { installed: packages.installed, reused: packages.reused } };
}

/** Frozen mode: E_LOCK_INVALID for hand-edited entries, E_LOCK_STALE (with the diff) for a changed tree. */
export function assertTreeMatches(lock: Lockfile, tree: TreeTool[], store: Store): void {
  const cmp = compareTreeToLock(lock, tree, (_id, hex) => cachedManifest(store, hex));
  if (cmp.handEdited.length > 0) {
    throw new KiwiError("E_LOCK_INVALID", `${LOCKFILE_NAME}: ${cmp.handEdited.map((h) => h.message).join("; ")}`, {
      hint: `restore ${LOCKFILE_NAME} from version control, or run "kiwi lock" to rewrite it from the tool tree`,
      details: { handEdited: cmp.handEdited },
    });
  }
  if (!isEmptyDiff(cmp.diff)) {
    const summary = summarizeDiff(cmp.diff);
    // A changed manifest or requirements file may change what the tool needs: name each package.
    const tools = new Map(tree.map((t) => [t.tool.id, t.tool]));
    for (const ch of summary.changed) {
      const tool = tools.get(ch.id);
      const packages = tool ? requirementChanges(tool, lock.dependencies?.[ch.id]) : [];
      if (packages.length > 0) ch.packages = packages;
    }
    const converted = markConvertedLineEndings(summary, tools);
    const { added, removed, changed } = cmp.diff;
    const parts = [
      added.length ? `${added.length} added` : "",
      removed.length ? `${removed.length} removed` : "",
      changed.length ? `${changed.length} changed` : "",
    ].filter(Boolean);
    throw new KiwiError("E_LOCK_STALE", `the tool tree differs from ${LOCKFILE_NAME} (${parts.join(", ")}: ${allChanges(cmp.diff).map((c) => c.id).join(", ")})`, {
      hint: converted > 0 ? convertedLineEndingsHint(converted) : 'run "kiwi lock" and commit tool.lock.json',
      details: { diff: summary },
    });
  }
}

/** The manifest a cached tool index entry holds, or undefined (absent or corrupt). */
export function cachedManifest(store: Store, integrityHex: string): CanonicalValue | undefined {
  try {
    return readToolEntry(store, integrityHex)?.manifest;
  } catch {
    return undefined;
  }
}

function fillStore(store: Store, tree: TreeTool[], onProgress?: InstallOptions["onProgress"]): Pick<InstallResult, "evicted" | "stats"> {
  const total = tree.reduce((n, t) => n + t.files.length, 0);
  const stats = { tools: tree.length, files: total, stored: 0, present: 0 };
  const evicted: Eviction[] = [];
  let done = 0;
  try {
    ensureStore(store);
    for (const t of tree) {
      const abs = new Map(t.tool.files.map((f) => [f.path, f.abs]));
      for (const f of t.files) {
        const subject = t.tool.root ? `${t.tool.root}/${f.path}` : f.path;
        const result = putBlobFromFile(store, abs.get(f.path)!, f.sha256, subject);
        if (result.status === "stored") stats.stored++;
        else stats.present++;
        if (result.evicted) evicted.push(result.evicted);
        onProgress?.("storing", ++done, total);
      }
      writeToolEntry(store, t.integrity, integrityText(t));
    }
  } catch (error) {
    throw cacheWriteError(store, error);
  }
  return { evicted, stats };
}

/** An errno from writing the cache, as E_IO naming the cache folder, with a hint per cause. */
export function cacheWriteError(store: Store, error: unknown): unknown {
  if (error instanceof KiwiError) return error;
  const err = error as NodeJS.ErrnoException;
  if (!err || typeof err.code !== "string") return error;
  const hints: Record<string, string> = {
    ENOSPC: "the disk is full: free some space (kiwi cache prune helps) and run kiwi install again; nothing partial was kept",
    EROFS: "the cache folder is read-only: point KIWI_CACHE_DIR at a writable folder",
    EACCES: "kiwi may not write to the cache folder: fix its permissions or point KIWI_CACHE_DIR elsewhere",
    EPERM: "kiwi may not write to the cache folder: fix its permissions or point KIWI_CACHE_DIR elsewhere",
  };
  return new KiwiError("E_IO", `cannot write to the cache ${store.dir}: ${err.code}${err.path ? ` (${err.path})` : ""}`, {
    hint: hints[err.code] ?? "check the cache folder and run the command again",
    cause: error,
    details: { cache: store.dir, code: err.code },
  });
}

/**
 * The tools' locked packages, installed (deps/ loads only when the lock has some). Frozen: the lock
 * must already hold each tool's requirements and installed tree; otherwise the trees are recorded.
 */
async function installPackages(ctx: Context, root: string, store: Store, tree: readonly TreeTool[], frozen: boolean): Promise<{ installed: number; reused: number; written: boolean }> {
  const text = readLockfileText(root);
  const lock = text === undefined ? undefined : parseLockfile(text);
  if (!lock?.dependencies && !tree.some((h) => h.tool.form !== "builtin" && declaresPackages(h.tool))) return { installed: 0, reused: 0, written: false };
  if (frozen) {
    for (const h of tree) {
      const [change] = requirementChanges(h.tool, lock?.dependencies?.[h.tool.id]);
      if (!change) continue;
      throw new KiwiError("E_LOCK_STALE", `the ${change.ecosystem === "npm" ? "npm" : "Python"} requirements of ${h.tool.id} differ from ${LOCKFILE_NAME}: ${change.changes.join(", ")}`, {
        hint: 'run "kiwi install" without --frozen-lockfile and commit tool.lock.json',
        details: { tool: h.tool.id, ecosystem: change.ecosystem, changes: change.changes },
      });
    }
  }
  if (!lock?.dependencies) return { installed: 0, reused: 0, written: false };
  const { installDependencies } = await import("./dependency-install-io.ts");
  const done = await installDependencies(ctx, root, lock, store);
  if (frozen) {
    for (const [id, byEcosystem] of Object.entries(done.trees)) {
      if ((["npm", "pypi"] as const).some((e) => byEcosystem[e] !== undefined && lock.dependencies![id]?.[e]?.tree !== byEcosystem[e])) {
        throw new KiwiError("E_LOCK_STALE", `${LOCKFILE_NAME} records no installed package tree for ${id}`, {
          hint: 'run "kiwi install" without --frozen-lockfile once and commit tool.lock.json: it records the tree every install must reproduce',
          details: { tool: id },
        });
      }
    }
    return { ...done, written: false };
  }
  const { writeDependencyTrees } = await import("../lockfile/fs.ts");
  return { ...done, written: await writeDependencyTrees(root, done.trees, lock.dependencies) };
}
