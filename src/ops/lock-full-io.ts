// The full `kiwi lock`: hash every tool (stat cache), validate (unless this exact tree passed
// before), compare with the current lockfile and write it only if its bytes change, all under the
// project's lockfile lock; then record the lock index for the next run (lock-io.ts asks it first).
import { existsSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { faultsFromEnv } from "../cache/faults-io.ts";
import { statCacheRelPath } from "../cache/cache-layout.ts";
import { type PrehashRun, type PrehashedFiles, startPrehash } from "../cache/prehash-io.ts";
import { type StatCache, loadStatCache, loadTreeMemo, saveTreeMemo } from "../cache/stat-cache-io.ts";
import type { Context } from "../context.ts";
import type { Finding } from "../findings/verdict.ts";
import { formatDigest, hashCanonical, sha256Hex } from "../integrity/digest.ts";
import { KiwiError } from "../errors.ts";
import { type Project, readProject } from "../manifest/discover-io.ts";
import { REMOTE_TOOLS_DIR, type Tool, ignoreFileDated, isRemoteTool } from "../manifest/model.ts";
import { TOOLS_DIR } from "../manifest/project-io.ts";
import { declaresPackages, requirementChanges } from "../deps/requirements.ts";
import type { Resolution } from "../deps/resolve-io.ts";
import { type HashedTool, buildLockfile } from "../lockfile/build.ts";
import { compareTreeToLock } from "../lockfile/compare.ts";
import { type LockDiff, diffLockfiles } from "../lockfile/lock-diff.ts";
import { remoteToolsNotInstalled } from "./remote-installed-io.ts";
import { lockfilePath, readLockfileText, withProjectLock, writeLockfileText } from "../lockfile/fs.ts";
import { LOCKFILE_NAME, lockfileFromCheckedValue, parseLockfile } from "../lockfile/parse.ts";
import type { LockedTool, Lockfile, McpPin, RemoteTool } from "../schema/lockfile.ts";
import { type TreeIndex, buildLockIndex, completeLockIndex, indexTree, saveLockIndex, withoutPins } from "../lockfile/lock-index-io.ts";
import { type RawTree, TreeListing, joinRawTree, listTop, walkRawTree } from "../manifest/raw-tree-io.ts";
import { rememberWrittenLockfile } from "../exec/chain-io.ts";
import { type TreeTool, fingerprintTree, hashProjectTools } from "../lockfile/hash-tree-io.ts";
import { confirmUnchanged, renderWithQuickPins } from "../lockfile/unchanged.ts";
import { renderLockfile } from "../lockfile/render.ts";
import { openChildSchemaMemo } from "../validate/child-schema-memo-io.ts";

/** The full lock: discovery, hashing (stat cache), the check, and the lockfile written if its bytes change. */
export async function lockFull(ctx: Context, root: string, options: LockOptions = {}): Promise<LockResult> {
  // Cold (no stat cache yet): hash on a second core while this one walks the tree and discovery
  // parses every manifest. Hashing is the longer of the two, so it starts first; the worker
  // first walks a share of .ai/tools's entries for this thread (each thread claims the next
  // entry not yet taken), and reads the files of those entries against the stats that walk took.
  const cold = !existsSync(join(ctx.cacheDir, statCacheRelPath(root)));
  const startedAt = ctx.now();
  const top = cold && !options.needTree ? listTop(root) : undefined;
  const prehash = cold ? startPrehash(join(root, TOOLS_DIR), top) : undefined;
  try {
    // Taken before anything is read, so a file changed while this run reads it differs next time.
    let raw: RawTree | undefined;
    if (top && prehash) {
      const blocks = await prehash.walk();
      raw = blocks ? joinRawTree(top, blocks, startedAt) : undefined;
    } else if (!options.needTree) raw = walkRawTree(root, startedAt);
    // Discovery reads the walk just taken (folders and stats) instead of the disk a second time,
    // and so does the fingerprint (the manifests' stats).
    const listing = raw ? new TreeListing(raw, join(root, TOOLS_DIR)) : undefined;
    const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir, now: startedAt, ...(raw ? { raw: { root, tree: raw, listing } } : {}) });
    return await withProjectLock(project.root, () => lockLocked(ctx, project, options, prehash, raw, project.root === root ? listing : undefined), options.onWait);
  } finally {
    prehash?.cancel();
  }
}

export interface LockOptions {
  strict?: boolean;
  onProgress?: (done: number, total: number) => void;
  /** Always hash the tree (install needs every file's digest), even when the tree memo matches. */
  needTree?: boolean;
  /** Told when another kiwi holds tool.lock.json's lock and this one starts to wait for it. */
  onWait?: (holder: string, lockFile: string) => void;
  /**
   * The remote tool `kiwi add` or `kiwi update` just placed: its record (with the MCP pin published
   * with it) goes into the lockfile with its entry, in one write, so no kill between two writes can
   * leave its folder locked as a project tool with no record of its registry, or a record that
   * names another version. Its files must hash to the published integrity (else E_ARTIFACT_INVALID).
   */
  record?: RemoteRecord;
}

export interface RemoteRecord {
  id: string;
  entry: RemoteTool;
  pin?: McpPin;
}

export interface LockResult {
  root: string;
  lockfile: string;
  written: boolean;
  diff: LockDiff;
  /** The hashed tree; absent when the tree memo showed nothing changed (unless needTree). */
  tree?: TreeTool[];
  /** Ids of the project's mcp_server tools (the MCP step pins those). */
  mcpServers: string[];
  /** Those the lockfile does not pin, in project order, when the lock knows its pins (ops/mcp-lock-step-io.ts). */
  mcpUnpinned?: string[];
  /** Warnings from validation that did not stop the lock (empty when the check was remembered). */
  findings: Finding[];
  /** Non-fatal problems (stat cache not saved, hand-edited entries rewritten). */
  warnings: string[];
  /** "crlf": the lockfile was written only to undo git's CRLF conversion (its entries did not change). */
  lineEndings?: "crlf";
  /** Package resolutions this lock ran, with the registries and indexes they used (none when kept). */
  resolutions?: Resolution[];
  /** `memo`: the stat fingerprint and the lockfile matched the last run, so nothing was hashed. */
  stats: { tools: number; files: number; hashed: number; reused: number; memo: boolean };
}

/** A cold run's hashing: the worker's results, and what this thread prepared while it hashed. */
export interface ColdHashing {
  prehashed: Promise<PrehashedFiles>;
  /** Each tool's manifest canonical text and digest, rendered already. */
  manifests: ReadonlyMap<Tool, { canonical: string; hex: string }>;
  /** Hashes on this thread what the worker has not reached (PrehashRun.help). */
  help?: () => void;
}

/**
 * Hashes the tree and runs the pre-lock check: in full the first time, then only for what changed
 * since the last tree that passed (see checkChangedSince); the check is a pure function of the
 * tree, kiwi's version, the options and the discovery findings. Saves nothing itself.
 */
export async function hashAndCheck(
  ctx: Context,
  project: Project,
  action: string,
  options: LockOptions,
  statCache: StatCache,
  lockfileText: string | undefined,
  manifestIdentities?: ReadonlyMap<string, string>,
  cold?: ColdHashing,
): Promise<{ tree: TreeTool[]; findings: Finding[] }> {
  const context = sha256Hex(JSON.stringify([pkg.version, options.strict === true, project.root, project.findings, ignoreFileKey(project)]));
  const passed = statCache.checked?.context === context ? statCache.checked : undefined;
  // Loaded on demand: an unchanged tree (the tree memo) never pays for the validator's start-up.
  const { assertGatePassed, checkBeforeLock, checkChangedSince } = await import("../lockfile/gate.ts");
  // The verdicts it judges are remembered for the check of the commit that follows (kiwi check --staged).
  const childSchemaMemo = openChildSchemaMemo(ctx.cacheDir);
  const notInstalled = remoteToolsMissing(project, lockfileText);
  const checkAll = () => checkBeforeLock(project, { strict: options.strict, childSchemaMemo, notInstalled });
  // Without a check to start from, the check needs no hashes: it runs while the second core hashes.
  const early = passed === undefined ? checkAll() : undefined;
  // This thread's own work is done: it hashes what the worker has not reached yet.
  cold?.help?.();
  const tree = hashProjectTools(project, { statCache, onProgress: options.onProgress, manifestIdentities, manifests: cold?.manifests, prehashed: await cold?.prehashed });
  // What a tool's verdict depends on: its integrity, and its ignore comments, which the integrity
  // (a manifest's canonical form) leaves out: a comment removed must bring its finding back.
  const integrity = new Map(tree.map((h) => [h.tool.id, h.tool.ignores ? `${h.integrity}\0${JSON.stringify(h.tool.ignores)}` : h.integrity]));
  const verdict = early ?? (integrity.size === tree.length ? checkChangedSince(project, passed!.tools, integrity, { strict: options.strict, childSchemaMemo, notInstalled }) : checkAll());
  childSchemaMemo?.save();
  assertGatePassed(verdict, action);
  statCache.recordChecked({ context, tools: Object.fromEntries(integrity) });
  return { tree, findings: verdict.findings };
}

/**
 * What the lock's verdict takes from the ignore file: its bytes' digest (read this run, so no stat
 * can hide a second write), or why it could not be read, and the day it was judged on when its
 * entries may expire; null when there is none.
 */
function ignoreFileKey(project: Project): string[] | null {
  const file = project.ignoreFile;
  return file ? [file.digest, file.unreadable ?? "", ignoreFileDated(file) ? file.day : ""] : null;
}

async function lockLocked(ctx: Context, project: Project, options: LockOptions, prehash?: PrehashRun, raw?: RawTree, listing?: TreeListing): Promise<LockResult> {
  const faults = faultsFromEnv(ctx.env);
  const startedAt = ctx.now();
  const warnings: string[] = [];
  const text = readLockfileText(project.root);
  const fileCount = project.tools.reduce((n, t) => n + t.files.length, 0);
  const base = {
    root: project.root,
    lockfile: lockfilePath(project.root),
    mcpServers: project.tools.filter((t) => t.type === "mcp_server").map((t) => t.id),
    warnings,
  };
  // Everything a lock depends on, read from stat alone; if it and the lockfile's bytes are as
  // the last run left them, the lockfile is already what this run would write.
  const fingerprint = fingerprintTree(project, [pkg.version, options.strict === true, ignoreFileKey(project)], startedAt, listing);
  const memo = text === undefined ? undefined : loadTreeMemo(ctx.cacheDir, project.root);
  const textDigest = text === undefined ? "" : sha256Hex(text);
  // The index's tree part, when a cold run built it while the worker hashed (below).
  let treeIndex: TreeIndex | undefined;
  // The lock index of this tree, once its lockfile is what this run wrote or confirmed (the check passed).
  const saveIndex = (finalText: string, finalSha256: string, mcpPinned: readonly string[] | undefined, tree?: readonly TreeTool[], lockfileReplaced?: boolean) => {
    if (!raw) return;
    const pinned = finalText.includes('\n  "remote": ') || finalText.includes('\n  "dependencies": ');
    const lockfile = { pinned, lockfileText: finalText, lockfileSha256: finalSha256, lockfileReplaced, mcpPinned };
    const manifestDigests = tree ? new Map(tree.map((h) => [h.tool, h.manifestDigest])) : undefined;
    const index = treeIndex ? completeLockIndex(treeIndex, lockfile) : buildLockIndex({ root: project.root, strict: options.strict === true, raw, tools: project.tools, manifestDigests, findings: project.findings, ignoreFile: project.ignoreFile, startedAt, ...lockfile });
    saveLockIndex(ctx.cacheDir, index, faults);
  };
  if (!options.needTree && !options.record && !fingerprint.racy && memo?.fingerprint === fingerprint.digest && memo.lockfile === textDigest) {
    // The pins are read from the bytes only where the MCP step will ask for them.
    const mcpPinned = base.mcpServers.length > 0 ? pinnedIn(text!) : [];
    saveIndex(text!, textDigest, mcpPinned);
    const stats = { tools: project.tools.length, files: fileCount, hashed: 0, reused: fileCount, memo: true };
    return { ...base, ...unpinnedOf(base.mcpServers, mcpPinned), written: false, diff: { added: [], removed: [], changed: [] }, findings: [], stats };
  }
  const statCache = loadStatCache(ctx.cacheDir, project.root, startedAt);
  // Cold (a worker is hashing the files): its results are awaited inside, after the check, which
  // needs no hashes. No stat cache can stand in for any manifest's canonical text, and neither
  // those texts nor the index's tree part need a file hash, so they are built now, on this core,
  // while the worker hashes on the other; the merge then only joins them.
  let cold: ColdHashing | undefined;
  if (prehash) {
    const manifests = new Map(project.tools.map((t) => [t, hashCanonical(t.manifest)]));
    cold = { prehashed: prehash.results(), manifests, ...(raw ? { help: () => prehash.help(raw) } : {}) };
    if (raw) {
      const manifestDigests = new Map([...manifests].map(([t, m]) => [t, m.hex]));
      treeIndex = indexTree({ root: project.root, strict: options.strict === true, raw, tools: project.tools, manifestDigests, findings: project.findings, ignoreFile: project.ignoreFile, startedAt });
    }
  }
  const saveStats = () => {
    const warning = statCache.save(faults);
    if (warning) warnings.push(warning);
  };
  let tree: TreeTool[];
  let findings: Finding[];
  try {
    // Racy manifests must be parsed and digested for real, not recognised by their stat.
    ({ tree, findings } = await hashAndCheck(ctx, project, "kiwi lock", options, statCache, text, fingerprint.racy ? undefined : fingerprint.manifests, cold));
  } finally {
    saveStats();
  }
  const stats = { tools: tree.length, files: statCache.hits + statCache.misses, hashed: statCache.misses, reused: statCache.hits, memo: false };
  const remember = (finalText: string, finalLock: Lockfile, replacing = false) => {
    // One digest of the bytes for the three memos that name them (the text read is often the one kept).
    const finalSha256 = finalText === text ? textDigest : sha256Hex(finalText);
    rememberWrittenLockfile(ctx.cacheDir, finalText, finalLock, finalSha256);
    saveIndex(finalText, finalSha256, Object.keys(finalLock.mcp_servers), tree, replacing);
    // A racy tree is never vouched for (an empty fingerprint matches nothing), but the digest of
    // the bytes this run wrote is kept: the next relock then knows it wrote them (see `previous`).
    if (fingerprint.racy) saveTreeMemo(ctx.cacheDir, project.root, { fingerprint: "", lockfile: finalSha256 }, faults);
    else saveTreeMemo(ctx.cacheDir, project.root, { fingerprint: fingerprint.digest, lockfile: finalSha256 }, faults);
  };
  const quick = renderWithQuickPins(text, tree);
  if (!options.record && quick && quick.rendered === text && packagesLocked(tree, quick.lock)) {
    const unchanged = confirmUnchanged(quick);
    remember(unchanged.rendered, unchanged.lock);
    return { ...base, ...unpinnedOf(base.mcpServers, Object.keys(unchanged.lock.mcp_servers)), written: false, diff: { added: [], removed: [], changed: [] }, tree, findings, stats };
  }
  // Parse fully before writing: a lockfile from a newer kiwi or an unreadable one is never overwritten.
  // Bytes this kiwi wrote itself (the tree memo holds their digest) were rendered from checked data,
  // so the quick look already is that lockfile: no second render, no schema walk (~60 ms of a
  // thousand-tool relock). Only when it holds tools alone (strings and integers, which JSON.parse
  // keeps as written); pins, remote records, packages and any other text are parsed in full.
  const wroteItself = quick !== undefined && memo?.lockfile === textDigest && toolsOnly(quick.quick);
  // Every tool entry is rewritten below, so one naming an executor the file does not lock (a bad merge) is no reason to refuse it.
  const rewrite = { danglingExecutors: [] as string[] };
  const previous = text === undefined ? undefined : wroteItself ? lockfileFromCheckedValue(quick!.quick) : parseLockfile(text, undefined, quick?.quick, rewrite);
  for (const dangling of rewrite.danglingExecutors) warnings.push(`${LOCKFILE_NAME}: ${dangling} (merged or edited badly); rewritten from the tool tree`);
  const pins = previous?.mcp_servers ?? {};
  // Packages load only for a project whose tools declare some (deps/ is npm's driver).
  const declaring = project.tools.filter((t) => t.form !== "builtin" && declaresPackages(t));
  let dependencies = previous?.dependencies ?? {};
  let resolutions: Resolution[] = [];
  if (declaring.length > 0) {
    const { resolveDependencies } = await import("../deps/resolve-io.ts");
    const resolved = await resolveDependencies(ctx, project.root, declaring, dependencies);
    dependencies = resolved.dependencies;
    warnings.push(...resolved.warnings);
    resolutions = resolved.resolutions;
  } else dependencies = {};
  const notInstalled = remoteNotInstalled(project.root, previous, tree);
  for (const id of Object.keys(notInstalled)) {
    if (previous?.dependencies?.[id]) dependencies = { ...dependencies, [id]: previous.dependencies[id] };
    warnings.push(`${id} is a remote tool this checkout has not installed (${REMOTE_TOOLS_DIR}/${id} is missing): its entry is kept; "kiwi install" places it, "kiwi remove ${id}" drops it`);
  }
  const record = options.record;
  if (record) assertPublishedIntegrity(tree, record);
  // A folder in .ai/tools/.remote/ the lockfile has neither a record nor an entry of is most often
  // what another checkout's kiwi remove left (the lockfile came through git without it): locked,
  // it would be a project tool whose files git ignores.
  for (const { tool } of tree) {
    if (!isRemoteTool(tool) || previous?.tools[tool.id] || previous?.remote?.[tool.id] || record?.id === tool.id) continue;
    warnings.push(`${tool.id} is in ${tool.root}, but ${LOCKFILE_NAME} records no remote tool "${tool.id}": it is locked as a project tool, whose files git ignores; if a kiwi remove elsewhere took it out, "kiwi install" removes the folder`);
  }
  const remote = record ? { ...previous?.remote, [record.id]: record.entry } : previous?.remote;
  const lock = buildLockfile(tree, record?.pin ? { ...pins, [record.id]: record.pin } : pins, remote, dependencies, notInstalled);
  // Bytes this kiwi wrote hold no hand edit: each entry was rendered from the tree it hashed.
  if (previous && !wroteItself) {
    for (const edit of compareTreeToLock(previous, tree as HashedTool[]).handEdited) warnings.push(`${edit.message}; rewritten from the tool tree`);
  }
  // Without pins the quick rendering is already the final text (pins are the only lossy part).
  const reuse = quick && !record && Object.keys(pins).length === 0 && Object.keys(quick.lock.mcp_servers).length === 0 && !previous?.remote && !lock.dependencies && !previous?.dependencies ? quick.rendered : undefined;
  const finalText = reuse ?? renderLockfile(lock);
  // Flushed on Bun's thread pool while the memos and the index are saved. A crash before the
  // rename leaves them naming bytes that are not there (the index records no stat for a lockfile
  // being replaced), which only sends the next run down the full lock.
  const pending = writeLockfileText(project.root, finalText, text, faults);
  remember(finalText, lock, pending !== undefined);
  await pending;
  // A checkout with core.autocrlf (or an eol=crlf attribute) gives the lockfile CRLF line ends: the
  // rewrite then changes nothing else, and is said to be that, not an unexplained write.
  const lineEndings = pending !== undefined && text?.includes("\r\n") && text.replaceAll("\r\n", "\n") === finalText;
  return { ...base, ...unpinnedOf(base.mcpServers, Object.keys(lock.mcp_servers)), written: pending !== undefined, diff: diffLockfiles(previous, lock), tree, findings, stats, ...(resolutions.length > 0 ? { resolutions } : {}), ...(lineEndings ? { lineEndings: "crlf" as const } : {}) };
}

/** The files kiwi add placed must lock as the integrity the registry published, or nothing is recorded. */
function assertPublishedIntegrity(tree: readonly TreeTool[], record: RemoteRecord): void {
  const tool = tree.find((h) => h.tool.id === record.id);
  const locked = tool ? formatDigest(tool.integrity) : undefined;
  if (locked === record.entry.integrity) return;
  throw new KiwiError("E_ARTIFACT_INVALID", `the tool "${record.id}" from ${record.entry.source} locked as ${locked ?? "nothing"}, not the published ${record.entry.integrity}`, {
    hint: "the pulled files do not reproduce the published tool; nothing was recorded",
  });
}

/**
 * The remote tools the lockfile (its bytes, as read) records that this checkout has not installed,
 * for the check to name them; the bytes are parsed only when they hold remote records.
 */
function remoteToolsMissing(project: Project, text: string | undefined): ReadonlySet<string> | undefined {
  if (text === undefined || !text.includes('\n  "remote": ')) return undefined;
  let remote: unknown;
  try {
    remote = (JSON.parse(text) as { remote?: unknown }).remote;
  } catch {
    return undefined; // kiwi lock and verify say what is wrong with it
  }
  if (typeof remote !== "object" || remote === null) return undefined;
  const missing = remoteToolsNotInstalled(project.root, Object.keys(remote), new Set(project.tools.map((t) => t.id)));
  return missing.length > 0 ? new Set(missing) : undefined;
}

/** The locked entries of remote tools this checkout has not installed (remote-installed-io.ts), which the lock keeps. */
function remoteNotInstalled(root: string, previous: Lockfile | undefined, tree: readonly TreeTool[]): Record<string, LockedTool> {
  if (!previous?.remote) return {};
  const ids = remoteToolsNotInstalled(root, Object.keys(previous.remote), new Set(tree.map((h) => h.tool.id)));
  return Object.fromEntries(ids.flatMap((id) => (previous.tools[id] ? [[id, previous.tools[id]!]] : [])));
}

/** The ids of a lockfile text's mcp_servers section; undefined when the text is not a JSON object. */
function pinnedIn(text: string): string[] | undefined {
  try {
    const pins = (JSON.parse(text) as { mcp_servers?: unknown } | null)?.mcp_servers;
    return typeof pins === "object" && pins !== null ? Object.keys(pins) : [];
  } catch {
    return undefined;
  }
}

/** LockResult's mcpUnpinned: the servers without a pin, when the pins are known. */
function unpinnedOf(servers: readonly string[], pinned: readonly string[] | undefined): { mcpUnpinned?: string[] } {
  const unpinned = withoutPins(servers, pinned);
  return unpinned ? { mcpUnpinned: unpinned } : {};
}

/** A quick look at a lockfile with tools only: no MCP pins, remote records or packages. */
function toolsOnly(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const { mcp_servers: pins, remote, dependencies } = value as Record<string, unknown>;
  return remote === undefined && dependencies === undefined && typeof pins === "object" && pins !== null && Object.keys(pins).length === 0;
}

/** Whether every tool that declares packages has them resolved in `lock` for its current requirements. */
function packagesLocked(tree: readonly TreeTool[], lock: Lockfile): boolean {
  return tree.every((h) => h.tool.form === "builtin" || !declaresPackages(h.tool) || requirementChanges(h.tool, lock.dependencies?.[h.tool.id]).length === 0);
}
