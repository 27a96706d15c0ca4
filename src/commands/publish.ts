// `kiwi publish <tool> <registry>/<repository>:<tag>`: one tool version as an OCI artifact.
import { defineCommand } from "./_define.ts";
import { VARIADIC } from "./_args.ts";
import { KiwiError } from "../errors.ts";
import { publishTool } from "../ops/publish-io.ts";
import { showJson, showResult } from "../ui/output.ts";
import { renderPublished } from "../ui/registry-render.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";
import { insecureList, registryFlags } from "./_registry-flags.ts";
import { showGateFindings } from "./_check-notes.ts";

export default defineCommand({
  meta: { name: "publish", description: "Push a tool (which must pass kiwi check --strict) to an OCI registry, optionally signed" },
  args: {
    tool: { type: "positional", required: true, description: "The tool id to publish", valueHint: "tool-id" },
    target: { type: "positional", ...VARIADIC, required: true, description: "Where: registry/repository:tag", valueHint: "registry/repo:tag" },
    sign: { type: "string", description: "Sign the artifact with this ed25519 private key file (kiwi key generate)", valueHint: "key-file" },
    ...registryFlags,
    ...projectFlags,
  },
  async run({ args, rawArgs }) {
    const ctx = contextFromArgs(args);
    if (!args.tool || !args.target) throw new KiwiError("E_USAGE", "kiwi publish needs a tool id and a target reference", { hint: "kiwi publish <tool> <registry>/<repository>:<tag>" });
    const extra = ((args._ ?? []) as unknown[]).map(String).slice(2);
    if (extra.length > 0) {
      throw new KiwiError("E_USAGE", `kiwi publish takes one tool and one target; ${extra.join(", ")} would be left out, so nothing was published`, { hint: `run kiwi publish once per target: kiwi publish ${args.tool} ${args.target}` });
    }
    let result: Awaited<ReturnType<typeof publishTool>>;
    try {
      result = await publishTool(ctx, String(args.tool), String(args.target), { insecure: insecureList(rawArgs, args.insecureRegistry), signKey: args.sign });
    } catch (error) {
      // The findings that stopped it, as kiwi lock shows its gate's (with --json they are in the error's details).
      if (!args.json) showGateFindings(error, ctx);
      throw error;
    }
    if (args.json) {
      showJson({ ok: true, ...result });
      return 0;
    }
    showResult(renderPublished(result));
    return 0;
  },
});
