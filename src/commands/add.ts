// `kiwi add <registry>/<repository>:<tag>|@sha256:<digest>`: pull, verify, validate, place in
// .ai/tools/.remote/<id>/ and lock with its oci:// source.
import { defineCommand } from "citty";
import { KiwiError } from "../errors.ts";
import { addRemoteTool } from "../registry/pull-io.ts";
import { showJson, showResult } from "../ui/output.ts";
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
    const lines = [`added ${result.tool}@${result.version} from ${result.source}`, `integrity ${result.integrity}`, `placed in ${result.path} (${result.files} files, ${result.fetched} downloaded)`];
    if (result.replaced) lines.push(`replaced ${result.tool}@${result.replaced.version} (${result.replaced.integrity})`);
    if (result.signedBy) lines.push(`signature verified: ${result.signedBy}`);
    showResult(lines.join("\n"));
    return 0;
  },
});
