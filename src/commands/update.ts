// `kiwi update <tool>`: moves a remote tool's lock to what its tag points to now, showing what changed.
import { defineCommand } from "./_define.ts";
import { VARIADIC } from "./_args.ts";
import { KiwiError } from "../errors.ts";
import { updateRemoteTool } from "../ops/registry-add-io.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { renderRefetched, renderUpdateDiff, short } from "../ui/registry-render.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";
import { insecureList, registryFlags } from "./_registry-flags.ts";

export default defineCommand({
  meta: { name: "update", description: "Move a remote tool to what its tag points to now, with a diff of files, manifest and permissions" },
  args: {
    tool: { type: "positional", ...VARIADIC, required: true, description: "The remote tool's id", valueHint: "tool-id" },
    ...registryFlags,
    ...projectFlags,
  },
  async run({ args, rawArgs }) {
    const ctx = contextFromArgs(args);
    if (!args.tool) throw new KiwiError("E_USAGE", "kiwi update needs a tool id", { hint: "kiwi update <tool>; kiwi outdated lists them" });
    const tools = (args._ ?? []).map(String);
    if (tools.length > 1) throw new KiwiError("E_USAGE", `kiwi update takes one tool, not ${tools.length} (${tools.join(", ")}); nothing was updated`, { hint: `run kiwi update once per tool: ${tools.map((t) => `kiwi update ${t}`).join(" && ")}` });
    const result = await updateRemoteTool(ctx, String(args.tool), { insecure: insecureList(rawArgs, args.insecureRegistry) });
    if (args.json) {
      showJson({ ok: true, ...result });
      return 0;
    }
    for (const e of result.evicted ?? []) showNote(renderRefetched(e));
    if (!result.updated || !result.to) showResult(`${result.tool} is up to date (${short(result.from.digest)})`);
    else showResult(`updated ${result.tool}: ${renderUpdateDiff(result.from, result.to)}`);
    return 0;
  },
});
