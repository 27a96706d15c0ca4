// An mcp_tool's config.tool_name against its server's pinned interface: a typo (read_grpah) passed
// every check and failed only when the server was asked. Pure: the pins come from tool.lock.json.
import type { Finding } from "../findings/verdict.ts";
import type { Tool } from "../manifest/model.ts";
import { suggest } from "../resolve/suggest.ts";
import { toolFinding } from "../findings/finding.ts";

/** The tool names each pinned server listed, by server tool id. */
export type PinnedToolNames = ReadonlyMap<string, readonly string[]>;

/** Findings for mcp_tools whose tool_name their server's pin does not list (servers without a pin are not judged). */
export function checkMcpToolNames(tools: readonly Tool[], pinned: PinnedToolNames): Finding[] {
  const out: Finding[] = [];
  for (const tool of tools) {
    if (tool.type !== "mcp_tool" || !tool.executor) continue;
    const names = pinned.get(tool.executor.id);
    const name = tool.config.tool_name;
    if (!names || typeof name !== "string" || names.includes(name)) continue;
    const near = suggest(name, [...names]);
    out.push(
      toolFinding(tool, "mcp_tool/unknown-name", tool.pointers.toolName ?? "/config/tool_name", `the pinned interface of ${tool.executor.id} lists no tool named ${JSON.stringify(name)}`, near ? `did you mean "${near}"?` : `its tools: ${names.slice(0, 20).join(", ")}`),
    );
  }
  return out;
}

/** The tool names in the `interface` snapshot of each pin. */
export function pinnedToolNames(pins: Readonly<Record<string, { interface?: unknown }>>): PinnedToolNames {
  const out = new Map<string, string[]>();
  for (const [server, pin] of Object.entries(pins)) {
    const tools = (pin.interface as { tools?: unknown } | undefined)?.tools;
    out.set(server, Array.isArray(tools) ? tools.map((t) => String((t as { name?: unknown }).name)) : []);
  }
  return out;
}
