// Renders exec plans and `kiwi tree` chains for humans and as JSON documents. Pure: value in,
// string out; the commands print through ui/output.ts.
import { renderVisible } from "../mcp/visible.ts";
import type { Plan } from "../exec/plan.ts";
import type { TreeReport } from "../ops/tree-io.ts";
import { ERROR_CODES } from "../errors.ts";
import { shortDigest } from "../integrity/digest.ts";
import type { colors } from "./output.ts";

type Colors = ReturnType<typeof colors>;

/** The --dry-run document: the plan as shown (secrets already `***`), with `ok` first. */
export function planDocument(plan: Plan, warnings: readonly string[]): Record<string, unknown> {
  const run =
    plan.primitive === "subprocess"
      ? { subprocess: plan.subprocess, ...(plan.sandbox ? { sandbox: plan.sandbox } : {}) }
      : { http: plan.http, ...(plan.network ? { network: plan.network } : {}) };
  return {
    ok: true,
    dryRun: true,
    plan: plan.plan,
    tool: plan.tool,
    mode: plan.mode,
    primitive: plan.primitive,
    chain: plan.chain,
    params: plan.params,
    config: plan.config,
    secrets: plan.secrets,
    ...run,
    limits: plan.limits,
    warnings: [...warnings],
  };
}

/** `kiwi tree --json`. */
export function treeDocument(report: TreeReport): Record<string, unknown> {
  return { ok: treeExitCode(report) === 0, ...report };
}

/** `kiwi tree --json` without a tool: every top-level tool's chain. */
export function treesDocument(reports: readonly TreeReport[]): Record<string, unknown> {
  return { ok: treesExitCode(reports) === 0, tools: reports.map(treeDocument) };
}

/**
 * What `kiwi tree` exits with, so a script can tell a chain that would run from one that would
 * be refused: 0 when every link is verified, E_INTEGRITY_MISMATCH's code when one changed since
 * the lock, E_CHAIN's when the chain is broken, E_LOCK_STALE's when one is missing from the tree or
 * not locked.
 */
export function treeExitCode(report: TreeReport): number {
  if (report.broken) return ERROR_CODES.E_CHAIN.exit;
  if (report.links.some((l) => l.status === "changed")) return ERROR_CODES.E_INTEGRITY_MISMATCH.exit;
  if (report.links.some((l) => l.status !== "verified")) return ERROR_CODES.E_LOCK_STALE.exit;
  return 0;
}

/** Of several chains, the most serious exit: a changed or broken chain (6) before a stale one (3). */
export function treesExitCode(reports: readonly TreeReport[]): number {
  return reports.reduce((worst, r) => Math.max(worst, treeExitCode(r)), 0);
}

/** Every top-level tool's chain, a blank line between them; what is not locked is said once, after them. */
export function renderTrees(reports: readonly TreeReport[], c: Colors): string {
  const chains = reports.map((r) => renderTree(r, c, false)).join("\n");
  const unlocked = reports.filter((r) => r.mode === "unlocked" && !r.broken).map((r) => r.tool);
  if (unlocked.length === 0) return chains;
  const note = reports[0]!.lockfile === null ? "no tool.lock.json; integrities are computed from the tree" : `not in ${reports[0]!.lockfile}: ${unlocked.join(", ")}; their integrities are computed from the tree`;
  return `${chains}\n${c.dim(note)}\n`;
}

/** The chain as an indented tree, one link per line; `note`: say below it when it is not locked. */
export function renderTree(report: TreeReport, c: Colors, note = true): string {
  // Versions, types and messages quote manifests as written: a control character in one is shown.
  const v = (text: string) => renderVisible(text);
  if (report.broken) return `${c.bold(report.tool)}  ${c.red("chain broken")}: ${v(report.broken.message)}\n${report.broken.hint ? `  ${c.dim(`hint: ${v(report.broken.hint)}`)}\n` : ""}`;
  const lines: string[] = [];
  report.links.forEach((link, i) => {
    const indent = i === 0 ? "" : `${"   ".repeat(i - 1)}└─ `;
    const integrity = link.locked ?? link.tree;
    const status = renderStatus(link.status, c);
    const changed = link.status === "changed" && link.tree ? ` ${c.dim(`(tree sha256:${shortDigest(link.tree)})`)}` : "";
    lines.push(
      `${indent}${c.bold(v(link.id))} ${v(link.version)} ${c.dim(`(${v(link.type || "untyped")})`)}  ${integrity ? `sha256:${shortDigest(integrity)}` : "-"}  ${v(link.source)}  ${status}${changed}`,
    );
  });
  if (note && report.mode === "unlocked") {
    lines.push(c.dim(report.lockfile ? `${report.tool} is not in ${report.lockfile}; integrities are computed from the tree` : "no tool.lock.json; integrities are computed from the tree"));
  }
  return `${lines.join("\n")}\n`;
}

function renderStatus(status: TreeReport["links"][number]["status"], c: Colors): string {
  switch (status) {
    case "verified":
      return c.green("verified");
    case "changed":
      return c.red("changed since lock");
    case "missing":
      return c.red("missing from the tree");
    default:
      return c.yellow("not locked");
  }
}
