// `kiwi remove <tool>...`: takes remote tools out of the project (ops/registry-remove-io.ts).
import { defineCommand } from "./_define.ts";
import { VARIADIC } from "./_args.ts";
import { summarizeDiff } from "../lockfile/lock-diff.ts";
import { removeRemoteTools } from "../ops/registry-remove-io.ts";
import { findingsJson } from "../ui/findings-render.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { renderRemoved } from "../ui/registry-render.ts";
import { showCheckNotes, showGateFindings } from "./_check-notes.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

export default defineCommand({
  meta: { name: "remove", description: "Remove remote tools: their folders, lock entries, records, MCP pins and packages" },
  args: {
    tools: { type: "positional", ...VARIADIC, required: true, description: "Ids of remote tools (added with kiwi add)", valueHint: "tool-id" },
    ...projectFlags,
  },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    // The parser has refused a call without one (the positional is required).
    const result = await removeRemoteTools(ctx, (args._ ?? []).map(String)).catch((error: unknown) => {
      // The report that stopped the lock step, as kiwi lock shows it (--json: the error's details).
      if (!args.json) showGateFindings(error, ctx);
      throw error;
    });
    if (args.json) {
      const { removed, changed } = summarizeDiff(result.diff, { addedFiles: false });
      showJson({ ok: true, removed: result.removed, lockfile: result.lockfile, lock: { removed, changed }, ...(result.warnings.length ? { warnings: result.warnings } : {}), ...(result.findings.length ? { findings: findingsJson(result.findings) } : {}) });
      return 0;
    }
    showCheckNotes(result.findings, ctx, false);
    for (const w of result.warnings) showNote(`warning: ${w}`);
    showResult(renderRemoved(result));
    return 0;
  },
});
