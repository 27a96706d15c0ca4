// Executor chains: tool -> executor -> ... -> primitive, over an index of tools. Missing executors,
// version ranges, cycles (with their path) and depth are verdicts, not exceptions. Pure.
import type { Finding } from "../findings/verdict.ts";
import type { Tool } from "../manifest/model.ts";
import { SEMVER_PATTERN, isSemverRange } from "../schema/vocabulary.ts";
import { toolFinding } from "../findings/finding.ts";
import { suggest } from "./suggest.ts";

/** Longest chain accepted, counting the tool itself (data_processor -> python_runtime -> subprocess is 3). */
export const MAX_CHAIN_DEPTH = 16;

/**
 * Each tool's executor id (the range, or the locked version, left off; null for a tool that runs on
 * nothing): from the lockfile's entries (`id@version`), then from the tree's tools it lacks.
 */
export function executorIds(locked: Readonly<Record<string, { executor: string | null }>>, tools: readonly Pick<Tool, "id" | "executor">[]): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const [id, entry] of Object.entries(locked)) out.set(id, entry.executor === null ? null : entry.executor.slice(0, entry.executor.lastIndexOf("@")));
  for (const t of tools) if (!out.has(t.id)) out.set(t.id, t.executor?.id ?? null);
  return out;
}

/** Tools by id; the first tool with an id wins (duplicates are a separate finding). */
export interface ToolIndex {
  get(id: string): Tool | undefined;
  ids(): string[];
  tools: readonly Tool[];
}

export interface ChainResult {
  ok: boolean;
  /** The tool, its executor, that one's executor, ... as far as resolution got. */
  chain: Tool[];
  /** Problems, each located at the tool where the link breaks (`finding.tool`). */
  findings: Finding[];
}

/** Indexes tools by id (project tools come before built-ins, so a project override wins). */
export function indexTools(tools: readonly Tool[]): ToolIndex {
  const byId = new Map<string, Tool>();
  for (const tool of tools) if (!byId.has(tool.id)) byId.set(tool.id, tool);
  return { get: (id) => byId.get(id), ids: () => [...byId.keys()], tools };
}

/** Resolves a tool's executor chain down to a primitive. */
export function resolveChain(index: ToolIndex, start: string | Tool): ChainResult {
  const first = typeof start === "string" ? index.get(start) : start;
  if (!first) return { ok: false, chain: [], findings: [] };
  const chain: Tool[] = [first];
  const findings: Finding[] = [];
  const fail = (f: Finding): ChainResult => {
    findings.push(f);
    return { ok: false, chain, findings };
  };
  let current = first;
  for (;;) {
    const ref = current.executor;
    const at = current.pointers.executor ?? "/executor";
    if (!ref) {
      if (current.type === "primitive" || (chain.length === 1 && current.type === "knowledge")) return { ok: true, chain, findings };
      const previous = chain[chain.length - 2];
      if (!previous) return fail(toolFinding(current, "chain/no-primitive", at, `${current.id} has no executor, so it cannot run`, "set executor to a runtime or primitive"));
      return fail(
        toolFinding(previous, "chain/no-primitive", previous.pointers.executor ?? "/executor", `executor ${current.id} of ${previous.id} is a ${current.type || "untyped"} tool with no executor, not a primitive`, "point the executor at a runtime, subprocess or http_client"),
      );
    }
    const next = index.get(ref.id);
    if (!next) {
      // Never the tool itself (it cannot run on itself), and nothing for an empty id (every short id is "near" it).
      const near = ref.id.trim() === "" ? undefined : suggest(ref.id, index.ids().filter((id) => id !== current.id));
      return fail(toolFinding(current, "chain/missing-executor", at, `executor "${ref.id}" of ${current.id} does not exist`, near ? `did you mean "${near}"?` : "add the executor tool under .ai/tools/ or use a built-in runtime"));
    }
    if (ref.range !== null) {
      if (!isSemverRange(ref.range)) return fail(toolFinding(current, "chain/version-range", at, `"${ref.range}" in executor "${ref.raw}" of ${current.id} is not a semver range`, "write a range such as ^1.4, ~1.2.3 or >=1 <2"));
      if (!isSemver(next.version) || !Bun.semver.satisfies(next.version, ref.range)) {
        return fail(toolFinding(current, "chain/version-mismatch", at, `executor ${next.id} is version ${next.version || "(none)"}, which does not satisfy "${ref.range}" required by ${current.id}`, `change the range or update ${next.id}`));
      }
    }
    const seenAt = chain.findIndex((t) => t.id === next.id);
    if (seenAt !== -1) {
      const cycle = [...chain.slice(seenAt).map((t) => t.id), next.id];
      return fail(toolFinding(current, "chain/cycle", at, `executors form a cycle: ${renderCycle(cycle)}`, "break the cycle: the chain must end in subprocess or http_client"));
    }
    chain.push(next);
    if (chain.length > MAX_CHAIN_DEPTH) {
      return fail(toolFinding(first, "chain/too-deep", first.pointers.executor ?? "/executor", `the executor chain of ${first.id} is longer than ${MAX_CHAIN_DEPTH} links (${chain.map((t) => t.id).join(" -> ")} -> ...)`, "shorten the chain"));
    }
    current = next;
  }
}

/** A cycle path rotated to start at its smallest id, so the same cycle reads the same from anywhere. */
export function renderCycle(path: string[]): string {
  const ring = path.slice(0, -1);
  let best = 0;
  for (let i = 1; i < ring.length; i++) if (ring[i]! < ring[best]!) best = i;
  const rotated = [...ring.slice(best), ...ring.slice(0, best)];
  return [...rotated, rotated[0]].join(" -> ");
}

/** Semantic version 2.0.0, end-anchored (the one pattern lives in schema/manifest.ts). */
export const SEMVER = new RegExp(SEMVER_PATTERN);

/** True for a full semantic version such as 1.4.0 or 2.0.0-rc.1. */
export function isSemver(version: string): boolean {
  return version.length <= 256 && SEMVER.test(version);
}

