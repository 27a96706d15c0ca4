// `kiwi show <tool>`: one tool's parameters (with contracts and defaults), permissions, chain and
// MCP pin: what an agent or a person needs to call it.
import { defineCommand } from "./_define.ts";
import { showTool } from "../ops/inventory-io.ts";
import { renderShow } from "../ui/inventory.ts";
import { colors, showJson, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

export default defineCommand({
  meta: { name: "show", description: "Show a tool's parameters with their contracts and defaults, its permissions, chain and MCP pin" },
  args: {
    tool: { type: "positional", required: true, description: "Id of the tool", valueHint: "tool" },
    ...projectFlags,
  },
  run({ args }) {
    const ctx = contextFromArgs(args);
    const report = showTool(ctx, args.tool);
    if (args.json) showJson({ ok: true, ...report });
    else showResult(renderShow(report, colors(ctx)));
    return 0;
  },
});
