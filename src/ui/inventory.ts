// `kiwi list` and `kiwi show` as text: a table of tools, and one tool's parameters, permissions,
// chain and pin. The JSON documents are the reports themselves (src/ops/inventory-io.ts).
import type { ListReport, ShowReport } from "../ops/inventory-io.ts";
import type { colors } from "./output.ts";
import { renderVisible } from "../mcp/visible.ts";

type Colors = ReturnType<typeof colors>;
import { renderTree } from "./plan-render.ts";

/**
 * A manifest's text (a description, written by whoever published the tool) as one line of the
 * terminal: a block scalar's lines joined, and a control character (an escape sequence that would
 * recolour, move the cursor or rewrite what is shown) made visible instead of sent to the terminal.
 */
function oneLine(text: string): string {
  return renderVisible(text.trim().replace(/[ \t\r\n]*[\t\r\n][ \t\r\n]*/g, " "));
}

/** One line per tool: id, type, version, lock status, description (built-ins after the project's). */
export function renderList(report: ListReport, c: Colors): string {
  const rows = report.tools.map((t) => [renderVisible(t.id), renderVisible(t.type || "?"), renderVisible(t.version || "?"), t.builtin ? "built-in" : t.notInstalled ? "not installed" : t.locked ? "locked" : "not locked", typeof t.description === "string" ? oneLine(t.description) : (t.notInstalled ? 'a remote tool: run "kiwi install" to place it' : "")]);
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r, i) => {
    const cells = r.slice(0, 4).map((cell, j) => cell.padEnd(widths[j]!));
    const t = report.tools[i]!;
    const status = t.builtin ? c.dim(cells[3]!) : t.notInstalled ? c.red(cells[3]!) : t.locked ? c.green(cells[3]!) : c.yellow(cells[3]!);
    return `${c.bold(cells[0]!)}  ${cells[1]}  ${cells[2]}  ${status}  ${c.dim(r[4]!)}`.trimEnd();
  });
  const project = report.tools.filter((t) => !t.builtin).length;
  const note = report.lockfile ? "" : "; no tool.lock.json yet (run \"kiwi lock\")";
  return `${lines.join("\n")}\n${c.dim(`${project} project tool${project === 1 ? "" : "s"}, ${report.tools.length - project} built-in${note}`)}\n`;
}

/** A tool's card: what it is, what it takes (with contracts and defaults), may do, runs on. */
export function renderShow(report: ShowReport, c: Colors): string {
  const t = report.tool;
  const out = [`${c.bold(renderVisible(t.id))} ${renderVisible(t.version)} ${c.dim(`(${renderVisible(t.type || "untyped")}, ${renderVisible(t.source)})`)}`];
  // Its own lines, each indented under the heading, none reaching the terminal raw.
  if (t.description) out.push(...t.description.trimEnd().split(/\r?\n/).map((line) => `  ${renderVisible(line)}`));
  out.push("", c.bold("parameters"));
  if (report.parameters.length === 0) out.push(c.dim("  none"));
  for (const p of report.parameters) {
    const contracts = Object.entries(p.contracts).map(([k, v]) => `${k} ${JSON.stringify(v)}`);
    const extra = [...(p.default !== undefined ? [`default ${JSON.stringify(p.default)}`] : []), ...contracts].join(", ");
    out.push(`  ${c.bold(renderVisible(p.name))}: ${renderVisible(p.type ?? "any")}${p.required ? " (required)" : ""}${extra ? `  ${c.dim(extra)}` : ""}${p.description ? `  ${oneLine(p.description)}` : ""}`);
  }
  out.push("", c.bold("permissions"));
  if (report.permissions.length === 0) out.push(c.dim("  none declared"));
  for (const p of report.permissions) out.push(`  ${renderVisible(p.name)}${p.targets.length ? `: ${renderVisible(p.targets.join(", "))}` : ""}`);
  out.push("", c.bold("chain"), ...renderTree(report.chain, c).trimEnd().split("\n").map((l) => `  ${l}`));
  if (report.pin) {
    const sandbox = report.pin.sandbox ? `, taken with sandbox ${report.pin.sandbox}` : "";
    out.push("", c.bold("MCP pin"), `  ${report.pin.server} (${report.pin.name}): interface ${report.pin.interface_hash}${sandbox}`);
  }
  return `${out.join("\n")}\n`;
}
