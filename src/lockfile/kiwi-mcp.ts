// kiwi_mcp's lockfiles, read and judged as kiwi_mcp judges them (kiwi_mcp/primitives/lockfile.py
// and runtime/lockfile_store.py): a single chain lockfile
//
//   { "lockfile_version": 1, "generated_at": "...", "root": { tool_id, version, integrity },
//     "resolved_chain": [{ tool_id, version, integrity, executor }, ...], "registry": {...} | null }
//
// and the per-tool store `.ai/lockfiles/{category}/{tool_id}@{version}[.{chain_hash}].lock.json`
// with its `.index.json` ({ version: "1", lockfiles: { "category/tool@version": { path,
// chain_hash, created_at, last_validated, scope } } }). Integrities are kiwi_mcp's content_hash:
// bare hex (or `sha256:` hex), the same digest as kiwi's (shared/specs/integrity.md). Pure.
import { KiwiError } from "../errors.ts";
import { sha256Hex } from "../integrity/digest.ts";
import { isRecord } from "../integrity/value.ts";

export interface KiwiMcpEntry {
  tool_id: string;
  version: string;
  /** Lowercase hex, without a prefix. */
  integrity: string;
  executor: string | null;
}

export interface KiwiMcpLockfile {
  generatedAt: string;
  root: { tool_id: string; version: string; integrity: string };
  chain: KiwiMcpEntry[];
}

/** A link as the tree resolves it now. */
export interface ResolvedLink {
  tool_id: string;
  version: string;
  integrity: string;
}

/** Reads a kiwi_mcp lockfile document; every shape problem is E_LOCK_INVALID naming the field. */
export function parseKiwiMcpLockfile(value: unknown, subject: string): KiwiMcpLockfile {
  const bad = (pointer: string, what: string) =>
    new KiwiError("E_LOCK_INVALID", `${subject}: ${pointer} ${what}`, { hint: "a kiwi_mcp lockfile has lockfile_version 1, root {tool_id, version, integrity} and resolved_chain [{tool_id, version, integrity, executor}]", details: { file: subject, pointer } });
  if (!isRecord(value)) throw bad("/", "must be an object");
  if (value.lockfile_version !== 1) throw bad("/lockfile_version", `is ${JSON.stringify(value.lockfile_version)}; kiwi reads kiwi_mcp lockfile version 1`);
  if (typeof value.generated_at !== "string") throw bad("/generated_at", "must be a string");
  const text = (v: unknown, pointer: string): string => {
    if (typeof v !== "string" || v === "") throw bad(pointer, "must be a non-empty string");
    return v;
  };
  const digest = (v: unknown, pointer: string): string => {
    // kiwi fails closed: kiwi_mcp skips the comparison when an integrity is empty; kiwi refuses.
    const hex = text(v, pointer).replace(/^sha256:/, "");
    if (!/^[0-9a-f]{64}$/.test(hex)) throw bad(pointer, `is ${JSON.stringify(v)}, not a sha256 digest (64 lowercase hex digits, optionally sha256:)`);
    return hex;
  };
  if (!isRecord(value.root)) throw bad("/root", "must be an object");
  const root = { tool_id: text(value.root.tool_id, "/root/tool_id"), version: text(value.root.version, "/root/version"), integrity: digest(value.root.integrity, "/root/integrity") };
  if (!Array.isArray(value.resolved_chain) || value.resolved_chain.length === 0) throw bad("/resolved_chain", "must be a non-empty array");
  const chain = value.resolved_chain.map((e, i): KiwiMcpEntry => {
    const at = `/resolved_chain/${i}`;
    if (!isRecord(e)) throw bad(at, "must be an object");
    if (e.executor !== undefined && e.executor !== null && typeof e.executor !== "string") throw bad(`${at}/executor`, "must be a string or null");
    return { tool_id: text(e.tool_id, `${at}/tool_id`), version: text(e.version, `${at}/version`), integrity: digest(e.integrity, `${at}/integrity`), executor: (e.executor as string | null | undefined) ?? null };
  });
  const first = chain[0]!;
  if (first.tool_id !== root.tool_id || first.version !== root.version || first.integrity !== root.integrity) {
    throw bad("/root", `(${root.tool_id}@${root.version}) is not the first link of resolved_chain (${first.tool_id}@${first.version})`);
  }
  // Each link's executor is the next link: a chain that skips or reorders is broken as written.
  chain.forEach((e, i) => {
    const next = chain[i + 1];
    if (next ? e.executor !== next.tool_id : e.executor !== null) {
      throw bad(`/resolved_chain/${i}/executor`, next ? `is ${JSON.stringify(e.executor)}, but the next link is ${next.tool_id}` : `is ${JSON.stringify(e.executor)}, but the last link must be a primitive (executor null)`);
    }
  });
  return { generatedAt: value.generated_at, root, chain };
}

/**
 * kiwi_mcp's validate_against_chain: the chain length, then per position the tool id, the version
 * and the integrity, in its own words. An empty list means the lockfile holds for the tree.
 */
export function kiwiMcpVerdicts(lock: KiwiMcpLockfile, resolved: readonly ResolvedLink[]): string[] {
  if (resolved.length !== lock.chain.length) return [`Chain length mismatch: lockfile has ${lock.chain.length}, resolved has ${resolved.length}`];
  const issues: string[] = [];
  lock.chain.forEach((expected, i) => {
    const actual = resolved[i]!;
    if (expected.tool_id !== actual.tool_id) issues.push(`Tool ID mismatch at position ${i}: lockfile=${expected.tool_id}, resolved=${actual.tool_id}`);
    if (expected.version !== actual.version) issues.push(`Version mismatch for ${expected.tool_id}: lockfile=${expected.version}, resolved=${actual.version}`);
    if (expected.integrity !== actual.integrity) issues.push(`Integrity mismatch for ${expected.tool_id}@${expected.version}: lockfile=${expected.integrity.slice(0, 12)}, resolved=${actual.integrity.slice(0, 12)}`);
  });
  return issues;
}

/** kiwi_mcp's _compute_chain_hash over resolved_chain as written: what `.index.json` records per lockfile. */
export function kiwiMcpChainHash(written: readonly { tool_id: unknown; version: unknown; integrity: unknown }[]): string {
  return sha256Hex(written.map((e) => `${e.tool_id}@${e.version}:${e.integrity}`).join("|")).slice(0, 12);
}

/** `{tool_id}@{version}[.{chain_hash}].lock.json`, as the store names lockfiles (undefined when not). */
export function parseStoreFileName(name: string): { tool_id: string; version: string } | undefined {
  const m = /^([^@/]+)@(.+)\.lock\.json$/.exec(name);
  if (!m) return undefined;
  const parts = m[2]!.split(".");
  return { tool_id: m[1]!, version: parts.length > 3 ? parts.slice(0, 3).join(".") : m[2]! };
}
