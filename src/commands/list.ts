// `kiwi list`: every tool of the project (then kiwi's built-ins): id, type, version, whether
// tool.lock.json holds it, description.
import { defineCommand } from "./_define.ts";
import { listTools } from "../ops/inventory-io.ts";
import { renderList } from "../ui/inventory.ts";
import { colors, showJson, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

export default defineCommand({
  meta: { name: "list", description: "List the project's tools and kiwi's built-ins: id, type, version, lock status, description" },
  args: { ...projectFlags },
  run({ args }) {
    const ctx = contextFromArgs(args);
    const report = listTools(ctx);
    if (args.json) showJson({ ok: true, ...report });
    else showResult(renderList(report, colors(ctx)));
    return 0;
  },
});
