// `kiwi outdated`: remote tools whose tag now points to another artifact. Exit 1 when any does.
import { defineCommand } from "./_define.ts";
import { listOutdated } from "../ops/registry-add-io.ts";
import { type ErrorCode, KiwiError } from "../errors.ts";
import { renderError } from "../ui/error.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { renderOutdated } from "../ui/registry-render.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";
import { insecureList, registryFlags } from "./_registry-flags.ts";

export default defineCommand({
  meta: { name: "outdated", description: "List remote tools whose tag now points to a different artifact (exit 1 if any)" },
  args: { ...registryFlags, ...projectFlags },
  async run({ args, rawArgs }) {
    const ctx = contextFromArgs(args);
    const entries = await listOutdated(ctx, { insecure: insecureList(rawArgs, args.insecureRegistry) });
    const stale = entries.filter((e) => e.outdated);
    const failed = entries.filter((e) => e.error);
    if (args.json) showJson({ ok: stale.length === 0 && failed.length === 0, tools: entries });
    else showResult(renderOutdated(entries));
    for (const e of failed) showNote(renderError(new KiwiError(e.error!.code as ErrorCode, `${e.tool}: ${e.error!.message}`, { hint: e.error!.hint }), ctx));
    // A tool that could not be checked outranks one that moved: exit 0 or 1 would claim an answer.
    return failed.length > 0 ? failed[0]!.error!.exitCode : stale.length === 0 ? 0 : 1;
  },
});
