// From hashed tools to a Lockfile value: one entry per tool, the resolved executor as id@version,
// and the MCP pins of servers that still exist. Pure; hashing of bytes happens in cache/hash-io.ts.
import { KiwiError } from "../errors.ts";
import { formatDigest, hashCanonical, sha256Hex } from "../integrity/digest.ts";
import { type FileEntry, hashToolIntegrity, hashToolIntegrityAround, sortFileEntries } from "../integrity/tool.ts";
import type { Tool } from "../manifest/model.ts";
import { type LockedTool, type Lockfile, type McpPin, type RemoteTool, type ToolDependencies } from "../schema/lockfile.ts";
import { LOCKFILE_VERSION } from "../schema/vocabulary.ts";

/** The parts of a tool the lockfile records. */
export type LockableTool = Pick<Tool, "id" | "version" | "type" | "manifestFile" | "manifest" | "executor">;

/** A tool with its file entries hashed, its integrity and its manifest digest (hex). */
export interface HashedTool {
  tool: LockableTool;
  files: FileEntry[];
  integrity: string;
  manifestDigest: string;
}

/** Where integrities of unchanged tools are remembered (the stat cache), keyed by tool. */
export interface IntegrityMemo {
  lookupTool(key: string, inputDigest: string): { integrity: string; manifestDigest: string } | undefined;
  recordTool(key: string, inputDigest: string, integrity: string, manifestDigest: string): void;
}

export interface MemoOptions {
  key: string;
  memo: IntegrityMemo;
  /**
   * The manifest file's stat identity (size, mtime, ctime, inode), when known: the manifest
   * value is a function of its bytes, so this stands in for its digest without rendering it.
   */
  manifestIdentity?: string;
}

/**
 * Computes a tool's integrity and manifest digest from its already-hashed file entries. With a
 * memo, an unchanged tool (same id, version, manifest and file entries) reuses both instead of
 * rebuilding canonical texts: they are pure functions of those inputs.
 */
export function hashTool(tool: LockableTool, files: readonly FileEntry[], memo?: MemoOptions, rendered?: { canonical: string; hex: string }): HashedTool {
  const sorted = sortFileEntries(files).map((f) => ({ path: f.path, sha256: f.sha256, is_executable: f.is_executable === true }));
  // `rendered`: the manifest's canonical text, when the caller rendered it already (a cold lock).
  let manifestDigest = memo?.manifestIdentity === undefined ? (rendered?.hex ?? hashCanonical(tool.manifest).hex) : undefined;
  // A cache key only (never published): JSON.stringify is exact and injective for these values.
  const manifestKey = manifestDigest ?? `stat:${memo!.manifestIdentity}`;
  const inputDigest = memo ? sha256Hex(JSON.stringify([tool.id, tool.version, manifestKey, sorted.map((f) => [f.path, f.sha256, f.is_executable])])) : "";
  const known = memo?.memo.lookupTool(memo.key, inputDigest);
  if (known) return { tool, files: sorted, integrity: known.integrity, manifestDigest: known.manifestDigest };
  manifestDigest ??= rendered?.hex ?? hashCanonical(tool.manifest).hex;
  const integrity = (rendered ? hashToolIntegrityAround(rendered.canonical, { tool_id: tool.id, version: tool.version, files: sorted }) : hashToolIntegrity({ tool_id: tool.id, version: tool.version, manifest: tool.manifest, files: sorted })).hex;
  memo?.memo.recordTool(memo.key, inputDigest, integrity, manifestDigest);
  return { tool, files: sorted, integrity, manifestDigest };
}

/** The canonical text a hashed tool's integrity is the sha256 of (the cache's tool index entry). */
export function integrityText(h: HashedTool): string {
  return hashToolIntegrity({ tool_id: h.tool.id, version: h.tool.version, manifest: h.tool.manifest, files: h.files }).canonical;
}

/**
 * The lockfile for a set of hashed tools; pins of servers no longer present are dropped, and so
 * are `remote` records of tools no longer present. `notInstalled`: the locked entries of remote
 * tools whose folder this checkout does not have (a fresh clone before `kiwi install`): they are
 * kept as they were, with their record, pin and packages, since only `kiwi remove` drops a remote tool.
 */
export function buildLockfile(
  hashed: readonly HashedTool[],
  pins: Record<string, McpPin> = {},
  remote: Record<string, RemoteTool> = {},
  dependencies: Record<string, ToolDependencies> = {},
  notInstalled: Record<string, LockedTool> = {},
): Lockfile {
  const byId = new Map<string, HashedTool>();
  for (const h of hashed) {
    const clash = byId.get(h.tool.id);
    if (clash) {
      throw new KiwiError("E_CHECK_FAILED", `two tools have the id "${h.tool.id}": ${clash.tool.manifestFile} and ${h.tool.manifestFile}`, {
        hint: "rename one of them; tool ids are unique in a project",
      });
    }
    byId.set(h.tool.id, h);
  }
  const tools: Record<string, LockedTool> = {};
  for (const h of byId.values()) tools[h.tool.id] = lockedToolOf(h, resolveExecutor(h.tool, byId));
  for (const [id, entry] of Object.entries(notInstalled)) if (!byId.has(id) && remote[id]) tools[id] = entry;
  const present = (id: string) => tools[id] !== undefined;
  const keptPins: Record<string, McpPin> = {};
  for (const [id, pin] of Object.entries(pins)) if (present(id)) keptPins[id] = pin;
  const keptRemote = keepRemote(remote, tools);
  // Packages of tools no longer present go with them.
  const keptDependencies = Object.fromEntries(Object.entries(dependencies).filter(([id]) => present(id)));
  return {
    lockfileVersion: LOCKFILE_VERSION,
    tools,
    ...(keptRemote ? { remote: keptRemote } : {}),
    ...(Object.keys(keptDependencies).length > 0 ? { dependencies: keptDependencies } : {}),
    mcp_servers: keptPins,
  };
}

/**
 * The remote records of tools still present. A remote tool's files are the registry's bytes: one
 * that no longer hashes to the integrity it was added with was edited in place, and is refused.
 */
function keepRemote(remote: Record<string, RemoteTool>, tools: Record<string, LockedTool>): Record<string, RemoteTool> | undefined {
  const kept: Record<string, RemoteTool> = {};
  for (const [id, entry] of Object.entries(remote)) {
    const tool = tools[id];
    if (!tool) continue;
    if (tool.integrity !== entry.integrity) {
      throw new KiwiError("E_INTEGRITY_MISMATCH", `remote tool "${id}" (${tool.source}) hashes to ${tool.integrity}, but it was added from ${entry.source} with ${entry.integrity}`, {
        hint: `remote tools are read-only: run "kiwi install" to restore it, or "kiwi update ${id}" to move to a newer version`,
      });
    }
    kept[id] = entry;
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** One lockfile entry. */
export function lockedToolOf(h: HashedTool, executor: string | null): LockedTool {
  return {
    version: h.tool.version,
    type: h.tool.type,
    source: h.tool.manifestFile,
    executor,
    integrity: formatDigest(h.integrity),
    manifest_digest: formatDigest(h.manifestDigest),
    files: h.files.map((f) => ({ path: f.path, sha256: f.sha256, is_executable: f.is_executable === true })),
  };
}

/**
 * `id@version` of the tool a tool's executor names. Version ranges are the validator's concern
 * (resolve/, run before locking); here the id picks the one tool of that id in the project.
 */
export function resolveExecutor(tool: LockableTool, byId: ReadonlyMap<string, HashedTool>): string | null {
  if (!tool.executor) return null;
  const target = byId.get(tool.executor.id);
  if (!target) {
    throw new KiwiError("E_CHAIN", `tool "${tool.id}" (${tool.manifestFile}) names the executor "${tool.executor.raw}", which no tool provides`, {
      hint: `add a tool with tool_id "${tool.executor.id}", or fix the executor; run "kiwi check" for details`,
    });
  }
  return `${target.tool.id}@${target.tool.version}`;
}
