// Verification before anything runs: the chain is resolved from tool.lock.json (or, unlocked, from
// the validated tree), every link's integrity is recomputed from its files and compared with the
// lockfile, and every parent->child pair must satisfy the parent's child_schemas.
import { type StatCache, loadStatCache } from "../cache/stat-cache-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { formatDigest, shortDigest } from "../integrity/digest.ts";
import { resolveLockedChain } from "../lockfile/locked-chain.ts";
import type { FileChange } from "../lockfile/lock-diff.ts";
import { LOCKFILE_NAME } from "../lockfile/name.ts";
import type { TreeTool } from "../lockfile/hash-tree-io.ts";
import { findProjectRoot } from "../manifest/project-io.ts";
import { type Tool, isRemoteTool } from "../manifest/model.ts";
import type { LockedTool, Lockfile, ToolDependencies } from "../schema/lockfile.ts";
import type { WatchedPath } from "./stat-proof-io.ts";
import { type ChainIndex, chainProof, readChainIndex, recordVerifiedChain, replayVerifiedChain, writeChainIndex } from "./chain-memo-io.ts";
import { memoKey, readMemo, writeMemo } from "./memo-io.ts";

// Loaded on first use: a warm locked run replays its chain from the chain index and should not
// pay for evaluating what reads, parses and hashes manifests, nor what only refusals and the
// unlocked mode need (README "kiwi exec", start-up).
const load = {
  build: () => require("../lockfile/build.ts") as typeof import("../lockfile/build.ts"),
  diff: () => require("../lockfile/lock-diff.ts") as typeof import("../lockfile/lock-diff.ts"),
  gate: () => require("../lockfile/gate.ts") as typeof import("../lockfile/gate.ts"),
  discover: () => require("../manifest/discover-io.ts") as typeof import("../manifest/discover-io.ts"),
  chain: () => require("../resolve/chain.ts") as typeof import("../resolve/chain.ts"),
  suggest: () => require("../resolve/suggest.ts") as typeof import("../resolve/suggest.ts"),
  read: () => require("./chain-io.ts") as typeof import("./chain-io.ts"),
  schema: () => require("./schema.ts") as typeof import("./schema.ts"),
  requirements: () => require("../deps/requirements.ts") as typeof import("../deps/requirements.ts"),
};

/** One link as verified: the tree's tool, its hashed files and integrity, and its lock entry. */
export interface VerifiedLink {
  tool: Tool;
  hashed: TreeTool;
  /** `sha256:<hex>` recomputed from the tree (equal to the lockfile's when locked). */
  integrity: string;
  /** The lockfile entry (undefined in unlocked mode). */
  locked?: LockedTool;
  /** The tool's locked packages (from the lockfile, in unlocked mode too when it has them). */
  packages?: ToolDependencies;
}

export interface VerifiedChain {
  root: string;
  mode: "locked" | "unlocked";
  /** Tool first, primitive last. */
  links: VerifiedLink[];
  warnings: string[];
  /**
   * When the chain is remembered (replayed, or just recorded): every path it was proven from, with
   * its stat identity. While they all keep it, the same chain would be replayed.
   */
  proof?: WatchedPath[];
}

export interface VerifyOptions {
  unlocked: boolean;
  /** A parent without child_schemas is an error instead of a warning. */
  strict?: boolean;
}

/** Resolves and verifies the chain of `toolId`; throws a coded error naming the failing link. */
export function verifyChain(ctx: Context, toolId: string, options: VerifyOptions): VerifiedChain {
  const root = findProjectRoot(ctx.cwd);
  if (options.unlocked) {
    const chain = resolveUnlocked(ctx, root, toolId);
    const warnings = [`running ${toolId} unlocked: ${LOCKFILE_NAME} is not compared (development mode; --unlocked or KIWI_UNLOCKED=1)`, ...chain.warnings];
    assertChildSchemas(chain.links, options.strict === true, warnings, ctx.cacheDir);
    return { ...chain, warnings };
  }
  const index = readChainIndex(ctx.cacheDir, root, toolId, ctx.now());
  // Warm: the chain exactly as a previous call verified it, while every input keeps its stat identity.
  const replayed = index.hit ? replayVerifiedChain(index.hit, chainIds(index.hit.lock, toolId)) : undefined;
  if (replayed) {
    const proof = chainProof(root, index.lockStat!, index.hit!.verified!, ctx.now());
    return { root, mode: "locked", links: replayed, warnings: [], ...(proof ? { proof } : {}) };
  }
  const { chain, statCache, lock } = verifyLocked(ctx, root, toolId, index);
  assertChildSchemas(chain.links, options.strict === true, chain.warnings, ctx.cacheDir);
  // Only a chain that passed every check without a warning is replayed (a warning shows on every call).
  const verified = chain.warnings.length === 0 ? recordVerifiedChain(chain.links, ctx.now()) : undefined;
  if (!index.hit || statCache.misses > 0 || verified) {
    writeChainIndex(ctx.cacheDir, root, toolId, { lockStat: index.lockStat!, lock, ids: chain.links.map((l) => l.tool.id), seen: statCache.seen(), ...(verified ? { verified } : {}) }, ctx.now());
  }
  const proof = verified ? chainProof(root, index.lockStat!, verified, ctx.now()) : undefined;
  return proof ? { ...chain, proof } : chain;
}

/** The chain's tool ids, tool first, as the lockfile links them (none when the tool is not locked). */
function chainIds(lock: Lockfile, toolId: string): string[] {
  if (!lock.tools[toolId]) return [];
  return resolveLockedChain(lock, toolId).map((ref) => ref.slice(0, ref.lastIndexOf("@")));
}

/**
 * The locked chain read and hashed: through exec's chain index when tool.lock.json is unchanged
 * since the index was written (no lockfile parse, no project-wide stat cache), else from the
 * lockfile and the project's stat cache.
 */
function verifyLocked(ctx: Context, root: string, toolId: string, index: ChainIndex): { chain: VerifiedChain; statCache: StatCache; lock: Lockfile } {
  if (index.hit) return { chain: resolveLocked(ctx, root, index.hit.lock, toolId, index.hit.statCache), statCache: index.hit.statCache, lock: index.hit.lock };
  const read = index.lockStat === undefined ? undefined : load.read().readLockfileMemo(root, ctx.cacheDir);
  if (!read) {
    throw new KiwiError("E_LOCK_MISSING", `${LOCKFILE_NAME} does not exist in ${root}; kiwi exec runs only locked tools`, {
      hint: 'run "kiwi lock" (or pass --unlocked while developing)',
    });
  }
  const statCache = readOnlyStatCache(ctx, root);
  return { chain: resolveLocked(ctx, root, read.lock, toolId, statCache), statCache, lock: read.lock };
}

function resolveLocked(ctx: Context, root: string, lock: Lockfile, toolId: string, statCache: StatCache): VerifiedChain {
  if (!lock.tools[toolId]) throw notLocked(root, toolId, Object.keys(lock.tools));
  const ids = chainIds(lock, toolId);
  const { assertNoReadErrors, hashChainTools, readToolAt } = load.read();
  const tools: Tool[] = ids.map((id, i) => {
    const entry = lock.tools[id]!;
    const { tool, findings } = readToolAt(root, entry.source, ctx.cacheDir);
    assertNoReadErrors(findings, id);
    if (!tool) {
      throw new KiwiError("E_LOCK_STALE", `link ${i + 1} of ${renderIds(ids)}: ${id} is locked from ${entry.source}, which no longer holds a tool`, {
        // A remote tool's folder is not committed: install places it from the lockfile's digest.
        hint: lock.remote?.[id] ? `run "kiwi install" to place the remote tool from ${lock.remote[id]!.source}` : 'restore the file, or run "kiwi lock" to update tool.lock.json',
        details: { link: i + 1, tool: id, source: entry.source },
      });
    }
    if (tool.id !== id) {
      throw new KiwiError("E_LOCK_STALE", `link ${i + 1} of ${renderIds(ids)}: ${entry.source} now defines ${tool.id}, not ${id}`, {
        hint: 'run "kiwi lock" to update tool.lock.json',
        details: { link: i + 1, tool: id, source: entry.source },
      });
    }
    return tool;
  });
  const hashed = hashChainTools(root, tools, statCache);
  const warnings: string[] = [];
  const links: VerifiedLink[] = hashed.map((h, i) => {
    const packages = lock.dependencies?.[ids[i]!];
    return { tool: tools[i]!, hashed: h, integrity: formatDigest(h.integrity), locked: lock.tools[ids[i]!], ...(packages ? { packages } : {}) };
  });
  const mismatches = links.map((l, i) => describeMismatch(l, i, links)).filter((m): m is Mismatch => m !== undefined);
  if (mismatches.length > 0) {
    const first = mismatches[0]!;
    throw new KiwiError("E_INTEGRITY_MISMATCH", [`${renderIds(ids)} does not match ${LOCKFILE_NAME}; nothing was run`, ...mismatches.map((m) => `  ${m.text}`)].join("\n"), {
      // A remote tool's files are its registry's: kiwi lock refuses an edit to them, install restores them.
      hint: lock.remote?.[first.tool]
        ? `${first.tool} is a remote tool, read-only: run "kiwi install" to restore its files (kiwi update ${first.tool} moves it to a newer version)`
        : 'if the change is intended, run "kiwi lock" and review the diff; otherwise restore the file',
      details: { link: first.link, tool: first.tool, file: first.file, locked: first.locked, actual: first.actual, mismatches },
    });
  }
  return { root, mode: "locked", links, warnings };
}

interface Mismatch {
  link: number;
  tool: string;
  file: string;
  locked: string;
  actual: string;
  text: string;
}

function describeMismatch(link: VerifiedLink, i: number, links: VerifiedLink[]): Mismatch | undefined {
  const locked = link.locked!;
  if (locked.integrity === link.integrity) return undefined;
  const next = links[i + 1];
  const now = load.build().lockedToolOf(link.hashed, next ? `${next.tool.id}@${next.tool.version}` : null);
  const change = load.diff().diffTool(link.tool.id, locked, now);
  const where = link.tool.form === "builtin" ? `${link.tool.manifestFile} (built into this kiwi)` : link.tool.manifestFile;
  const parts: string[] = [];
  let file = link.tool.manifestFile;
  for (const f of change?.files ?? []) {
    parts.push(renderFileChange(f, link.tool.root));
    file = link.tool.root ? `${link.tool.root}/${f.path}` : f.path;
  }
  if (change?.fields.includes("manifest_digest") || change?.fields.includes("version")) {
    parts.unshift(`the manifest ${where} changed`);
    file = link.tool.manifestFile;
  }
  if (parts.length === 0) parts.push("its integrity differs");
  return {
    link: i + 1,
    tool: link.tool.id,
    file,
    locked: locked.integrity,
    actual: link.integrity,
    text: `link ${i + 1} (${link.tool.id}@${link.tool.version}): ${parts.join("; ")}; locked ${locked.integrity}, tree ${link.integrity}`,
  };
}

function renderFileChange(f: FileChange, root: string): string {
  const path = root ? `${root}/${f.path}` : f.path;
  const d = (h?: string) => (h ? `sha256:${shortDigest(h)}` : "");
  switch (f.kind) {
    case "added":
      return `${path} was added (${d(f.after?.sha256)})`;
    case "removed":
      return `${path} was removed (locked ${d(f.before?.sha256)})`;
    case "mode":
      return `${path} changed its executable bit`;
    default:
      return `${path} changed (locked ${d(f.before?.sha256)}, now ${d(f.after?.sha256)})`;
  }
}

function notLocked(root: string, toolId: string, lockedIds: string[]): KiwiError {
  const project = load.discover().readProject(root);
  const tool = project.tools.find((t) => t.id === toolId);
  if (tool) {
    // Unlocked in .ai/tools/.remote/: most often what another checkout's kiwi remove left there.
    const hint = isRemoteTool(tool)
      ? `${tool.root} holds no remote tool ${LOCKFILE_NAME} records: if a kiwi remove elsewhere took it out, "kiwi install" removes the folder; "kiwi add <reference>" takes it from its registry again`
      : 'run "kiwi lock" to lock it (or pass --unlocked while developing)';
    return new KiwiError("E_LOCK_STALE", `${toolId} is not in ${LOCKFILE_NAME}`, { hint, details: { tool: toolId } });
  }
  return unknownTool(toolId, [...new Set([...project.tools.map((t) => t.id), ...lockedIds])]);
}

/** E_TOOL_NOT_FOUND with the nearest ids. */
export function unknownTool(toolId: string, ids: string[]): KiwiError {
  const near = nearest(toolId, ids);
  return new KiwiError("E_TOOL_NOT_FOUND", `no tool has the id "${toolId}"`, {
    hint: near.length > 0 ? `did you mean ${near.map((n) => `"${n}"`).join(" or ")}?` : 'run "kiwi list" to see the project\'s tools',
    details: { tool: toolId, suggestions: near },
  });
}

function nearest(input: string, ids: string[]): string[] {
  const best = load.suggest().suggest(input, ids);
  const prefix = ids.filter((id) => id !== best && (id.startsWith(input) || input.startsWith(id)) && input.length >= 3);
  return [...(best ? [best] : []), ...prefix].slice(0, 3);
}

function resolveUnlocked(ctx: Context, root: string, toolId: string): VerifiedChain {
  const project = load.discover().readProject(root, { cacheDir: ctx.cacheDir });
  const { indexTools, resolveChain } = load.chain();
  const { assertGatePassed, checkBeforeLock } = load.gate();
  const tool = project.tools.find((t) => t.id === toolId);
  if (!tool) throw unknownTool(toolId, project.tools.map((t) => t.id));
  // The tool's own chain first, so a broken link is named precisely; then "validates everything":
  // the same gate kiwi lock applies before it writes anything.
  const resolved = resolveChain(indexTools(project.tools), tool);
  if (!resolved.ok) {
    throw new KiwiError("E_CHAIN", `the chain of ${toolId} is broken: ${resolved.findings.map((f) => f.message).join("; ")}`, {
      hint: resolved.findings[0]?.hint ?? 'run "kiwi check"',
      details: { findings: resolved.findings },
    });
  }
  assertGatePassed(checkBeforeLock(project), `kiwi exec --unlocked ${toolId}`);
  const { hashChainTools, readLockfileMemo } = load.read();
  const hashed = hashChainTools(root, resolved.chain, readOnlyStatCache(ctx, root));
  const warnings: string[] = [];
  // Packages are never fetched at exec time, unlocked or not: the lockfile's installed ones are used.
  const dependencies = resolved.chain.some((t) => load.requirements().declaresPackages(t)) ? (readLockfileMemo(root, ctx.cacheDir)?.lock.dependencies ?? {}) : {};
  const links = hashed.map((h, i) => {
    const tool = resolved.chain[i]!;
    const packages = dependencies[tool.id];
    return { tool, hashed: h, integrity: formatDigest(h.integrity), ...(packages ? { packages } : {}) };
  });
  return { root, mode: "unlocked", links, warnings };
}

function assertChildSchemas(links: VerifiedLink[], strict: boolean, warnings: string[], cacheDir: string): void {
  for (let i = 0; i + 1 < links.length; i++) {
    const child = links[i]!;
    const parent = links[i + 1]!;
    // A verdict is a pure function of both manifests, which their integrities pin: a pass is memoised.
    const key = memoKey("verdicts", parent.integrity, child.integrity);
    if (readMemo(cacheDir, "verdicts", key) === "ok") continue;
    const verdict = load.schema().checkChildSchemas(parent.tool, child.tool);
    if (verdict.ok) {
      writeMemo(cacheDir, "verdicts", key, "ok");
      continue;
    }
    if (verdict.rule === "child-schema/missing" && !strict) {
      warnings.push(`${verdict.message}, so ${child.tool.id} is not checked against it`);
      continue;
    }
    throw new KiwiError("E_CHAIN", `link ${i + 1} -> ${i + 2} (${child.tool.id} -> ${parent.tool.id}): ${verdict.message}; nothing was run`, {
      hint: verdict.rule === "child-schema/missing" ? "add validation.child_schemas to the executor, or drop --strict" : "fix the tool's manifest to fit its executor, or pick another executor",
      details: { link: i + 1, child: child.tool.id, parent: parent.tool.id, rule: verdict.rule },
    });
  }
}

/**
 * The project's stat cache, read but never saved: exec sees only its chain's files, and saving
 * would drop every other tool's entries (kiwi lock and install keep the cache whole).
 */
export function readOnlyStatCache(ctx: Pick<Context, "cacheDir" | "now">, root: string) {
  return loadStatCache(ctx.cacheDir, root, ctx.now());
}

function renderIds(ids: string[]): string {
  return ids.join(" -> ");
}

