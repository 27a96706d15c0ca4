// `kiwi tree [tool]`: a tool's executor chain with versions, integrities, sources and lock status;
// without a tool, the chain of every top-level tool of the project (as npm ls and cargo tree show
// the whole project).
import { defineCommand } from "./_define.ts";
import { resolveTree, resolveTrees } from "../ops/tree-io.ts";
import { colors, showJson, showNote, showResult } from "../ui/output.ts";
import { renderTree, renderTrees, treeDocument, treeExitCode, treesDocument, treesExitCode } from "../ui/plan-render.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

export default defineCommand({
  meta: { name: "tree", description: "Show executor chains (a tool's, or every top-level tool's): versions, integrities, sources, lock status" },
  args: {
    tool: { type: "positional", required: false, description: "Id of the tool (default: every tool no other tool runs on)", valueHint: "tool" },
    ...projectFlags,
  },
  run({ args }) {
    const ctx = contextFromArgs(args);
    if (args.tool !== undefined) {
      const report = resolveTree(ctx, args.tool);
      if (args.json) showJson(treeDocument(report));
      else showResult(renderTree(report, colors(ctx)));
      return treeExitCode(report);
    }
    const reports = resolveTrees(ctx);
    if (args.json) showJson(treesDocument(reports));
    else if (reports.length === 0) showNote("no tools in .ai/tools/ yet: kiwi init makes examples, kiwi add takes one from a registry");
    else showResult(renderTrees(reports, colors(ctx)));
    return treesExitCode(reports);
  },
});
