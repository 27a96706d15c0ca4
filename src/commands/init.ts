// `kiwi init`: scaffolds .ai/tools/ with a working example of each everyday tool type and locks it.
// It never overwrites: in a tree that already has some of it, only what is missing is added.
import { defineCommand } from "citty";
import { contextFromArgs, projectFlags } from "./_flags.ts";
import { writeScaffold } from "../init/scaffold-io.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";

export default defineCommand({
  meta: { name: "init", description: "Create .ai/tools/ with an example of each tool type, and tool.lock.json" },
  args: {
    ...projectFlags,
    lock: { type: "boolean", default: true, description: "Write tool.lock.json for the new tree", negativeDescription: "Leave tool.lock.json alone (run \"kiwi lock\" later)" },
  },
  run({ args }) {
    const ctx = contextFromArgs(args);
    const result = writeScaffold(ctx.cwd);
    for (const skip of result.skip) showNote(`kept ${skip.path}: ${skip.reason}`);
    if (args.json) showJson({ ok: true, root: result.root, created: result.created, skipped: result.skip });
    else if (result.created.length > 0) showResult(result.created.join("\n"));
    if (result.created.length === 0) showNote("nothing to add: every example is already there");
    return 0;
  },
});
