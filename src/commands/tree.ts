// `kiwi tree <tool>`: the executor chain with versions, integrities, sources and lock status.
import { defineCommand } from "./_define.ts";
import { resolveTree } from "../ops/tree-io.ts";
import { colors, showJson, showResult } from "../ui/output.ts";
import { renderTree, treeDocument, treeExitCode } from "../ui/plan-render.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

export default defineCommand({
  meta: { name: "tree", description: "Show a tool's executor chain: versions, integrities, sources, lock status" },
  args: {
    tool: { type: "positional", required: true, description: "Id of the tool", valueHint: "tool" },
    ...projectFlags,
  },
  run({ args }) {
    const ctx = contextFromArgs(args);
    const report = resolveTree(ctx, args.tool);
    if (args.json) showJson(treeDocument(report));
    else showResult(renderTree(report, colors(ctx)));
    return treeExitCode(report);
  },
});
