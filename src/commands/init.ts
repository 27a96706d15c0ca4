// `kiwi init`: scaffolds .ai/tools/ with a working example of each everyday tool type and locks it.
// It never overwrites: in a tree that already has some of it, only what is missing is added.
import { defineCommand } from "./_define.ts";
import type { Finding } from "../findings/verdict.ts";
import { initProject } from "../ops/init-io.ts";
import { TEMPLATES } from "../init/templates.ts";
import { errorDocument, renderError } from "../ui/error.ts";
import { renderFindingsHuman } from "../ui/findings-render.ts";
import { findingsFromHere } from "./_relocate.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

/** What to run first, by the example file it runs (the README's tour). */
const NEXT_STEPS = [
  { path: ".ai/tools/word_count.py", command: "kiwi exec word_count --param text='to be or not to be'" },
  { path: ".ai/tools/greet.sh", command: "kiwi exec greet --param name=Ada --param times=2" },
] as const;

export default defineCommand({
  meta: { name: "init", description: "Create .ai/tools/ with an example of each tool type, and tool.lock.json; never overwrites" },
  args: {
    ...projectFlags,
    lock: { type: "boolean", default: true, description: "Write tool.lock.json when the project has none", negativeDescription: "Do not write tool.lock.json (run \"kiwi lock\" later)" },
  },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const result = await initProject(ctx, { lock: args.lock !== false });
    const { lockfile } = result;
    if (args.json) {
      showJson({
        ok: lockfile.status !== "failed",
        root: result.root,
        created: result.created,
        skipped: result.skip.map(({ path, reason }) => ({ path, reason })),
        lockfile: { status: lockfile.status, ...(lockfile.error ? { error: errorDocument(lockfile.error).error } : {}) },
      });
    } else if (result.created.length > 0) showResult(result.created.join("\n"));
    // "kept" only for a file that is there: an example left out for its tool id has no file to keep.
    for (const skip of result.skip) showNote(`${skip.kept ? "kept" : "did not write"} ${skip.path}: ${skip.reason}`);
    if (result.created.length === 0) showNote(result.skip.every((s) => s.kept) ? `nothing to add: all ${TEMPLATES.length} examples are already there` : `nothing to add: each of the ${TEMPLATES.length} examples is there, or its tool id is already defined`);
    const added = result.created.some((p) => p.startsWith(".ai/"));
    if (lockfile.status === "kept" && added) showNote('tool.lock.json was left as it is; run "kiwi lock" to add the new tools');
    if (lockfile.status === "failed" && lockfile.error) {
      if (!args.json) {
        const findings = lockfile.error.details?.findings;
        if (Array.isArray(findings)) showNote(renderFindingsHuman(findingsFromHere(findings as Finding[], ctx.cwd), ctx));
        showNote(renderError(lockfile.error, ctx).trimEnd());
      }
      return lockfile.error.exitCode;
    }
    // The first example this run wrote: one it kept or skipped may not be kiwi's word_count at all.
    const next = NEXT_STEPS.find((n) => result.created.includes(n.path));
    if (next && !args.json) showNote(`next: "${next.command}"`);
    return 0;
  },
});
