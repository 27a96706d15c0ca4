// `kiwi add <registry>/<repository>:<tag>|@sha256:<digest>`: pull, verify, validate, place in
// .ai/tools/.remote/<id>/ and lock with its oci:// source.
import { defineCommand } from "./_define.ts";
import { KiwiError } from "../errors.ts";
import { addRemoteTool } from "../registry/pull-io.ts";
import { showJson, showResult } from "../ui/output.ts";
import { renderAdded } from "../ui/registry-render.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";
import { insecureList, registryFlags } from "./_registry-flags.ts";

export default defineCommand({
  meta: { name: "add", description: "Add a tool from an OCI registry: verify every digest and the integrity, validate, lock" },
  args: {
    reference: { type: "positional", required: true, description: "registry/repository:tag or registry/repository@sha256:<digest>", valueHint: "reference" },
    ...registryFlags,
    ...projectFlags,
  },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    if (!args.reference) throw new KiwiError("E_USAGE", "kiwi add needs a reference", { hint: "kiwi add <registry>/<repository>:<tag>" });
    const result = await addRemoteTool(ctx, String(args.reference), { insecure: insecureList(args.insecureRegistry) });
    if (args.json) {
      showJson({ ok: true, ...result });
      return 0;
    }
    showResult(renderAdded(result));
    return 0;
  },
});
