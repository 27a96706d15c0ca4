// Human text and --json documents for lock, install and verify: added/removed/changed tools, and
// per tool which files changed with short hashes. Pure rendering; commands print the result.
import { plural } from "./plural.ts";
import type { Context } from "../context.ts";
import { shortDigest } from "../integrity/digest.ts";
import { inCodePointOrder } from "../integrity/canonical.ts";
import { type DiffSummary, type ToolChangeSummary } from "../lockfile/lock-diff.ts";
import type { VerifyReport } from "../ops/verify-io.ts";
import { colors } from "./output.ts";
import { renderVisible } from "../mcp/visible.ts";

type Colors = ReturnType<typeof colors>;

const MARK = { added: "+", removed: "-", changed: "~" } as const;

/** One line per changed tool: `+ id version`, `- id version`, `~ id (what changed)`. */
export function renderToolSummary(diff: DiffSummary, ctx: Pick<Context, "color">): string {
  const c = colors(ctx);
  return changesOf(diff)
    .map((ch) => `${paint(c, ch.change, MARK[ch.change])} ${ch.id} ${versionOf(ch)}${ch.change === "changed" ? ` ${c.dim(`(${whatChanged(ch)})`)}` : ""}\n`)
    .join("");
}

/** Per tool, each differing file with short hashes; used when the tree must match the lockfile. */
export function renderFileDiff(diff: DiffSummary, ctx: Pick<Context, "color">): string {
  const c = colors(ctx);
  const out: string[] = [];
  for (const ch of changesOf(diff)) {
    const note = ch.change === "added" ? " (not in the lockfile)" : ch.change === "removed" ? " (no longer in the tree)" : "";
    out.push(`${paint(c, ch.change, MARK[ch.change])} ${ch.id} ${versionOf(ch)}${note}\n`);
    for (const f of ch.fields) {
      const shown = (v: string | null) => (v === null ? "null" : f.field === "manifest" ? shortDigest(v) : renderVisible(v));
      out.push(`    ${c.yellow("~")} ${f.field}: ${shown(f.before)} -> ${shown(f.after)}\n`);
    }
    const files = ch.change === "changed" || ch.files.length <= 20 ? ch.files : [];
    for (const f of files) out.push(`    ${renderFileChange(f, c)}\n`);
    for (const p of ch.packages ?? []) out.push(`    ${c.yellow("~")} requires (${p.ecosystem}): ${p.changes.join(", ")}\n`);
    if (files.length < ch.files.length) out.push(`    ${ch.files.length} files\n`);
  }
  return out.join("");
}

function renderFileChange(f: ToolChangeSummary["files"][number], c: Colors): string {
  switch (f.change) {
    case "added":
      return `${c.green("+")} ${f.path}  ${shortDigest(f.after!)}`;
    case "removed":
      return `${c.red("-")} ${f.path}  ${shortDigest(f.before!)}`;
    case "changed":
      return `${c.yellow("~")} ${f.path}  ${shortDigest(f.before!)} -> ${shortDigest(f.after!)}${f.lineEndings ? "  (only its line endings differ: CRLF)" : ""}`;
    case "mode":
      return `${c.yellow("~")} ${f.path}  ${f.executable ? "now executable" : "no longer executable"}`;
  }
}

/** The verify report for humans: one line per check, then the problems. */
export function renderVerifyReport(report: VerifyReport, ctx: Pick<Context, "color">): string {
  const c = colors(ctx);
  const ok = (b: boolean) => (b ? c.green("ok") : c.red("FAILED"));
  const out: string[] = [];
  out.push(`lockfile  ${ok(report.handEdited.length === 0)}  ${plural(report.tools, "tool")}, ${plural(report.files, "file")}\n`);
  for (const h of report.handEdited) out.push(`    ${c.red("!")} ${h.message}\n`);
  const treeOk = report.tree.added.length + report.tree.removed.length + report.tree.changed.length === 0 && report.notInstalled.length === 0;
  out.push(`tree      ${ok(treeOk)}\n`);
  if (!treeOk) out.push(indent(renderFileDiff(report.treeSummary, ctx), "    "));
  for (const id of report.notInstalled) out.push(`    ${c.yellow("?")} ${id}  a remote tool this checkout has not installed (kiwi install places it)\n`);
  const cacheOk = report.cache.corrupt.length === 0 && report.cache.missing.length === 0;
  out.push(`cache     ${ok(cacheOk)}  ${report.cache.checked} entries checked\n`);
  const what = (p: VerifyReport["cache"]["missing"][number]) => p.path ?? (p.kind === "tree" ? `(installed ${p.ecosystem} packages)` : "(tool index entry)");
  for (const p of report.cache.corrupt) {
    out.push(`    ${c.red("!")} ${p.tool} ${what(p)}  sha256:${shortDigest(p.sha256!)} held sha256:${shortDigest(p.evicted!.actual)}; evicted\n`);
  }
  for (const p of report.cache.missing) out.push(`    ${c.yellow("?")} ${p.tool} ${what(p)}  ${p.sha256 === undefined ? "locked, not installed" : `sha256:${shortDigest(p.sha256)} not cached`}\n`);
  return out.join("");
}

function indent(text: string, pad: string): string {
  return text.replace(/^(?=.)/gm, pad);
}

function changesOf(diff: DiffSummary): ToolChangeSummary[] {
  // Each list is in id order already (lockfile/lock-diff.ts): one alone needs no sort (a cold lock adds 1,000).
  return inCodePointOrder([...diff.added, ...diff.removed, ...diff.changed], (ch) => ch.id);
}

/** The version, or both: as written in a manifest the check may not have passed, so shown visibly. */
function versionOf(ch: ToolChangeSummary): string {
  if (ch.change === "changed" && ch.before !== ch.after) return `${renderVisible(ch.before ?? "")} -> ${renderVisible(ch.after ?? "")}`;
  return renderVisible((ch.after ?? ch.before)!);
}

function whatChanged(ch: ToolChangeSummary): string {
  const parts: string[] = ch.fields.filter((f) => f.field !== "version").map((f) => f.field);
  if (ch.files.length) parts.push(`${ch.files.length} file${ch.files.length === 1 ? "" : "s"}`);
  return parts.join(", ") || "integrity";
}

function paint(c: Colors, kind: ToolChangeSummary["change"], text: string): string {
  return kind === "added" ? c.green(text) : kind === "removed" ? c.red(text) : c.yellow(text);
}

/** `resolved pad: 2 npm packages from https://registry.npmjs.org (npm_config_registry)`: where a lock's packages came from. */
export function renderResolution(r: { tools: string[]; ecosystem: string; packages: number; sources: string[]; setting: string }): string {
  const kind = r.ecosystem === "npm" ? "npm" : "Python";
  // Nothing was fetched from anywhere: pip's environment markers left out every requirement on this machine.
  if (r.packages === 0) return `resolved ${r.tools.join(", ")}: no ${kind} packages to install${r.ecosystem === "npm" ? "" : " (the requirements' environment markers exclude every one on this machine)"}`;
  const what = `${r.packages} ${kind} ${r.packages === 1 ? "package" : "packages"}`;
  return `resolved ${r.tools.join(", ")}: ${what} from ${r.sources.join(", ") || "nowhere"} (${r.setting})`;
}

/** The note shown once when another kiwi holds the lockfile's lock: who, the lock file, how long kiwi waits. */
export function renderLockWait(holder: string, lockFile: string): string {
  return `waiting for ${holder}, which holds ${lockFile} (up to 2 minutes; if no kiwi is running, delete that file)`;
}
