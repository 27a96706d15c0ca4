// Human text for the MCP commands: hashes, drift diffs, scan findings, verify reports. Pure
// renderers (value -> string); the commands print them through ui/output.ts.
import type { Context } from "../context.ts";
import { shortDigest } from "../integrity/digest.ts";
import type { ComponentChange, DiffSeverity, InterfaceDiff } from "../mcp/interface-diff.ts";
import type { WireListing } from "../mcp/listing.ts";
import type { McpPin } from "../mcp/pin.ts";
import type { LockPinReport } from "../ops/mcp-lock-io.ts";
import type { ScanFinding, ScanResult } from "../mcp/scan.ts";
import { renderVisible } from "../mcp/visible.ts";
import { colors } from "./output.ts";

type Colors = ReturnType<typeof colors>;

/** The two hashes, one per line, as `kiwi mcp hash` prints them. */
export function renderHashes(pin: Pick<McpPin, "interface_hash" | "full_hash">): string {
  return `interface_hash ${pin.interface_hash}\nfull_hash      ${pin.full_hash}\n`;
}

/** `weather 1.2.0, protocol 2025-06-18: 3 tools, 1 prompt, 2 resources, 0 resource templates`. */
export function renderListingSummary(listing: WireListing): string {
  const name = typeof listing.serverInfo?.name === "string" ? renderVisible(listing.serverInfo.name) : "(unnamed server)";
  const version = typeof listing.serverInfo?.version === "string" ? ` ${renderVisible(listing.serverInfo.version)}` : "";
  const protocol = listing.protocolVersion ? `, protocol ${listing.protocolVersion}` : "";
  const n = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;
  return `${name}${version}${protocol}: ${n(listing.tools.length, "tool")}, ${n(listing.prompts.length, "prompt")}, ${n(listing.resources.length, "resource")}, ${n(listing.resourceTemplates.length, "resource template")}${listing.skills.length ? `, ${n(listing.skills.length, "skill")}` : ""}${listing.instructions ? ", instructions" : ""}`;
}

/** The counts a JSON document reports for a listing. */
export function listingCounts(listing: WireListing): Record<string, number> {
  return { tools: listing.tools.length, prompts: listing.prompts.length, resources: listing.resources.length, resourceTemplates: listing.resourceTemplates.length, ...(listing.skills.length ? { skills: listing.skills.length } : {}) };
}

/** A drift diff: one block per changed component, unified diffs indented below. */
export function renderDiff(server: string, diff: InterfaceDiff, ctx: Pick<Context, "color">): string {
  const c = colors(ctx);
  if (diff.changes.length === 0) return `MCP server "${server}": no changes since it was pinned\n`;
  const lines = [`MCP server "${server}": ${diff.changes.length} change${diff.changes.length === 1 ? "" : "s"} since it was pinned (${severityText(diff.severity!, c)})`];
  for (const change of diff.changes) {
    lines.push(`  ${changeMark(change, c)} ${componentName(change)} ${c.dim("[")}${severityText(change.severity, c)}${c.dim("]")}`);
    for (const field of change.fields) {
      if (field.field !== "*") lines.push(`      ${field.field} ${c.dim("[")}${severityText(field.severity, c)}${c.dim("]")}`);
      for (const line of field.patch.replace(/\n$/, "").split("\n")) lines.push(`        ${colorPatchLine(line, c)}`);
    }
  }
  if (diff.credential) {
    lines.push(`  note: pinned with credential ${diff.credential.pinned}, listed now with ${diff.credential.live}: a server may list different tools for different authorizations; pin it with the credential you run it with`);
  }
  if (diff.sandbox) {
    lines.push(`  note: pinned with sandbox "${diff.sandbox.pinned}", running now with sandbox "${diff.sandbox.live}": some servers describe themselves differently inside and outside a sandbox; if that is all that changed, pin it under the mode you run it with`);
  }
  return `${lines.join("\n")}\n`;
}

/** The one-line-per-component summary a refused drift shows before its error. */
export function renderDriftSummary(server: string, changes: readonly { kind: string; name: string; change: string; severity: string; fields: string[] }[]): string {
  const lines = changes.map((c) => `  ${c.change === "added" ? "+" : c.change === "removed" ? "-" : "~"} ${c.kind}${c.name ? ` ${renderVisible(JSON.stringify(c.name))}` : ""} [${c.severity}]${c.fields.length && c.fields[0] !== "*" ? `: ${c.fields.join(", ")}` : ""}`);
  return `MCP server "${server}" changed:\n${lines.join("\n")}`;
}

/** Scan findings, one block each: rule, where, the visible excerpt, the hint. */
export function renderFindings(scan: ScanResult, ctx: Pick<Context, "color">): string {
  const c = colors(ctx);
  const lines: string[] = [];
  for (const f of scan.findings) lines.push(...renderFinding(f, c));
  if (scan.truncated) lines.push(c.dim(`(more findings were left out; the report stops at ${scan.findings.length})`));
  return lines.length ? `${lines.join("\n")}\n` : "";
}

function renderFinding(f: ScanFinding, c: Colors): string[] {
  const head = f.severity === "error" ? c.red(c.bold(`error[${f.rule}]`)) : c.yellow(`warning[${f.rule}]`);
  return [`${head} ${f.message}`, `  ${c.dim("at")} ${f.file} ${c.dim("server")} ${f.server} ${c.dim("pointer")} ${renderVisible(f.pointer ?? "")}`, `  ${c.dim("excerpt:")} ${f.excerpt}`, ...(f.hint ? [`  ${c.dim("hint:")} ${f.hint}`] : [])];
}

/** One line per server of `kiwi mcp verify`. */
export function renderVerifyLine(row: { server: string; status: string; pin?: McpPin; live?: McpPin; message?: string }, ctx: Pick<Context, "color">): string {
  const c = colors(ctx);
  const status = row.status === "ok" ? c.green("ok      ") : row.status === "warned" ? c.yellow("warned  ") : c.red(row.status.toUpperCase().padEnd(8));
  const hashes = row.live ? ` interface ${shortDigest(row.live.interface_hash)} full ${shortDigest(row.live.full_hash)}` : "";
  return `${status} ${row.server}${hashes}${row.message ? ` ${c.dim("—")} ${row.message}` : ""}`;
}

function componentName(change: ComponentChange): string {
  if (change.kind === "server") return "server";
  if (change.kind === "instructions") return "instructions";
  return `${change.kind.replace("_", " ")} ${renderVisible(JSON.stringify(change.name))}`;
}

function changeMark(change: ComponentChange, c: Colors): string {
  return change.change === "added" ? c.green("+") : change.change === "removed" ? c.red("-") : c.yellow("~");
}

function severityText(severity: DiffSeverity, c: Colors): string {
  return severity === "security" ? c.red(c.bold("security")) : severity === "notice" ? c.yellow("notice") : c.dim("info");
}

function colorPatchLine(line: string, c: Colors): string {
  if (line.startsWith("+++") || line.startsWith("---")) return c.bold(line);
  if (line.startsWith("+")) return c.green(line);
  if (line.startsWith("-")) return c.red(line);
  if (line.startsWith("@@")) return c.cyan(line);
  return line;
}

/** A tool result as text: text content as is, other content as one bracketed line each. */
export function renderToolResult(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  const parts = content.map((item) => {
    const type = String(item?.type ?? "unknown");
    if (type === "text") return String(item.text ?? "");
    if (type === "image" || type === "audio") {
      const bytes = typeof item.data === "string" ? Math.floor((item.data.length * 3) / 4) : 0;
      return `[${type} ${String(item.mimeType ?? "")}, ${bytes} bytes]`;
    }
    if (type === "resource") {
      const resource = (item.resource ?? {}) as Record<string, unknown>;
      return typeof resource.text === "string" ? resource.text : `[resource ${String(resource.uri ?? "")}]`;
    }
    if (type === "resource_link") return `[resource link ${String(item.uri ?? "")}]`;
    return `[${type}]`;
  });
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent, null, 2);
  return parts.join("\n");
}

/** The note `kiwi lock` and `kiwi install` show while an unpinned MCP server starts. */
export function renderPinStart(server: string): string {
  return `starting MCP server "${server}" to pin its interface…`;
}

/** The notes of the MCP step of `kiwi lock` / `kiwi install`, one string per note, in order. */
export function renderLockPins(reports: readonly LockPinReport[], ctx: Pick<Context, "color">): string[] {
  const notes: string[] = [];
  for (const r of reports) {
    for (const w of r.warnings ?? []) notes.push(`warning: ${w}`);
    if (r.result === "pinned") {
      if (r.scan?.findings.length) notes.push(renderFindings(r.scan, ctx).trimEnd());
      notes.push(`pinned MCP server "${r.server}" (${renderVisible(r.pin!.name)}): interface ${r.pin!.interface_hash}`);
    } else if (r.result === "failed") {
      // The failure's own hint says what to fix (config.headers for a 401, the sandbox for npx…).
      const fix = r.error?.hint ? `${r.error.hint}; then` : "fix it, then";
      notes.push(`warning: MCP server "${r.server}" was not pinned: ${r.reason}\n  hint: ${fix} run "kiwi mcp pin ${r.server}"`);
    }
    else notes.push(`note: MCP server "${r.server}" was not pinned (${r.reason})`);
  }
  return notes;
}

/** The `mcp_pins` rows of the `--json` document of `kiwi lock` / `kiwi install`. */
export function lockPinsDocument(reports: readonly LockPinReport[]): { server: string; result: string; reason?: string; hint?: string; interface_hash?: string; full_hash?: string }[] {
  return reports.map((r) => ({ server: r.server, result: r.result, ...(r.reason ? { reason: r.reason } : {}), ...(r.error?.hint ? { hint: r.error.hint } : {}), ...(r.pin ? { interface_hash: r.pin.interface_hash, full_hash: r.pin.full_hash } : {}) }));
}
