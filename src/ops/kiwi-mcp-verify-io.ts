// kiwi_mcp lockfiles against the tool tree: `kiwi verify <file|.ai/lockfiles>` and the check
// `kiwi lock --from` runs before it writes tool.lock.json. Each lockfile's root chain is resolved
// from the tree and hashed as kiwi hashes tools (the same digest as kiwi_mcp's content_hash), then
// judged with kiwi_mcp's verdicts (lockfile/kiwi-mcp.ts). The store's `.index.json` must name files that
// exist and record each lockfile's chain hash.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { isRecord } from "../integrity/value.ts";
import { readProject } from "../manifest/discover-io.ts";
import { indexTools, resolveChain } from "../resolve/chain.ts";
import { hashProjectTools } from "../lockfile/hash-tree-io.ts";
import { type KiwiMcpLockfile, type ResolvedLink, kiwiMcpChainHash, kiwiMcpVerdicts, parseKiwiMcpLockfile, parseStoreFileName } from "../lockfile/kiwi-mcp.ts";

/** One kiwi_mcp lockfile's verdict. */
export interface KiwiMcpReport {
  /** The lockfile, relative to the working directory. */
  file: string;
  /** `tool@version` of its root. */
  root: string;
  links: number;
  /** kiwi_mcp's verdicts and the store's own; empty when it holds. */
  issues: string[];
}

/**
 * Verifies a kiwi_mcp lockfile, or every lockfile of a store directory (`.ai/lockfiles`), against
 * the project's tree. Throws E_LOCK_INVALID for a file kiwi_mcp could not load either; the caller
 * decides what issues mean.
 */
export function checkKiwiMcpLockfiles(ctx: Context, target: string): KiwiMcpReport[] {
  const abs = resolve(ctx.cwd, target);
  if (!existsSync(abs)) throw new KiwiError("E_INPUT_INVALID", `cannot read ${target}: ENOENT`, { hint: "name a kiwi_mcp lockfile (*.lock.json) or its store folder (.ai/lockfiles)" });
  const shown = (p: string) => relative(ctx.cwd, p) || ".";
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const index = indexTools(project.tools);
  const resolveRoot = (lock: KiwiMcpLockfile): { links: ResolvedLink[]; missing?: string } => {
    const tool = index.get(lock.root.tool_id);
    if (!tool) return { links: [], missing: `Tool not found: ${lock.root.tool_id}@${lock.root.version}` };
    const chain = resolveChain(index, tool).chain;
    const hashed = hashProjectTools({ ...project, tools: chain });
    return { links: chain.map((t, i) => ({ tool_id: t.id, version: t.version, integrity: hashed[i]!.integrity })) };
  };
  const judge = (file: string, raw: unknown): KiwiMcpReport => {
    const lock = parseKiwiMcpLockfile(raw, shown(file));
    const { links, missing } = resolveRoot(lock);
    return { file: shown(file), root: `${lock.root.tool_id}@${lock.root.version}`, links: lock.chain.length, issues: missing ? [missing] : kiwiMcpVerdicts(lock, links) };
  };
  if (!statSync(abs).isDirectory()) return [judge(abs, readJson(abs, shown(abs)))];

  const reports: KiwiMcpReport[] = [];
  const byKey = new Map<string, { raw: Record<string, unknown>; report: KiwiMcpReport }>();
  for (const category of readdirSync(abs, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
    for (const name of readdirSync(join(abs, category)).filter((n) => n.endsWith(".lock.json")).sort()) {
      const file = join(abs, category, name);
      const raw = readJson(file, shown(file));
      const report = judge(file, raw);
      const named = parseStoreFileName(name);
      if (named && `${named.tool_id}@${named.version}` !== report.root) report.issues.push(`File name says ${named.tool_id}@${named.version}, but its root is ${report.root}`);
      reports.push(report);
      if (named) byKey.set(`${category}/${named.tool_id}@${named.version}`, { raw: raw as Record<string, unknown>, report });
    }
  }
  const indexFile = join(abs, ".index.json");
  if (existsSync(indexFile)) {
    const doc = readJson(indexFile, shown(indexFile));
    const entries = isRecord(doc) && isRecord(doc.lockfiles) ? doc.lockfiles : undefined;
    if (!entries) throw new KiwiError("E_LOCK_INVALID", `${shown(indexFile)}: /lockfiles must be an object`, { hint: 'kiwi_mcp\'s store index is {"version": "1", "lockfiles": {...}}', details: { file: shown(indexFile) } });
    for (const [key, entry] of Object.entries(entries)) {
      const path = isRecord(entry) && typeof entry.path === "string" ? entry.path : undefined;
      const problem = (what: string) => reports.push({ file: shown(indexFile), root: key, links: 0, issues: [what] });
      if (!path || !existsSync(join(abs, path))) {
        problem(`Index entry ${key} names ${JSON.stringify(path ?? null)}, which does not exist`);
        continue;
      }
      const listed = byKey.get(key);
      const recorded = isRecord(entry) ? entry.chain_hash : undefined;
      const chain = listed && Array.isArray(listed.raw.resolved_chain) ? (listed.raw.resolved_chain as { tool_id: unknown; version: unknown; integrity: unknown }[]) : undefined;
      if (chain && recorded !== kiwiMcpChainHash(chain)) problem(`Index entry ${key} records chain_hash ${JSON.stringify(recorded)}, but the lockfile's chain hashes to ${kiwiMcpChainHash(chain)}`);
    }
  }
  if (reports.length === 0) throw new KiwiError("E_INPUT_INVALID", `${shown(abs)} holds no kiwi_mcp lockfiles ({category}/{tool}@{version}.lock.json)`, { hint: "name a kiwi_mcp lockfile, or the .ai/lockfiles folder that holds them" });
  return reports;
}

/** The error a run with issues ends with: the tree differs from the kiwi_mcp lockfiles (exit 3). */
export function kiwiMcpIssuesError(reports: readonly KiwiMcpReport[], action: string): KiwiError | undefined {
  const failing = reports.filter((r) => r.issues.length > 0);
  if (failing.length === 0) return undefined;
  const first = failing[0]!;
  return new KiwiError("E_LOCK_STALE", `${action}: ${failing.length} kiwi_mcp lockfile${failing.length === 1 ? "" : "s"} do${failing.length === 1 ? "es" : ""} not hold for the tree (first: ${first.file}: ${first.issues[0]})`, {
    hint: "the tree changed since kiwi_mcp locked it: restore the tools it pins, or lock the tree as it is with plain \"kiwi lock\"",
    details: { lockfiles: reports },
  });
}

function readJson(abs: string, shown: string): unknown {
  let text: string;
  try {
    text = readFileSync(abs, "utf8");
  } catch (error) {
    throw new KiwiError("E_INPUT_INVALID", `cannot read ${shown}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { hint: "check the path" });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new KiwiError("E_LOCK_INVALID", `${shown}: invalid JSON: ${(error as Error).message}`, { hint: "kiwi_mcp writes its lockfiles as JSON", details: { file: shown } });
  }
}

/** `kiwi verify <kiwi_mcp lockfile>`: a report per lockfile, and the error to raise when one does not hold. */
export function verifyKiwiMcpLockfiles(ctx: Context, target: string, action: string): { reports: KiwiMcpReport[]; error?: KiwiError } {
  const reports = checkKiwiMcpLockfiles(ctx, target);
  const error = kiwiMcpIssuesError(reports, action);
  return { reports, ...(error ? { error } : {}) };
}
