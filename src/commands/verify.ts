// `kiwi verify`: the tree and the cache against tool.lock.json, re-reading every byte. Exit codes:
// 5 lockfile invalid, 4 cache corrupted (or missing entries), 3 tree differs (README "Exit codes").
import { defineCommand } from "citty";
import { verifyOutcomeError, verifyProject } from "../lockfile/verify-io.ts";
import { createProgress } from "../ui/lock-progress.ts";
import { summarizeDiff } from "../lockfile/diff.ts";
import { renderVerifyReport } from "../ui/lock-render.ts";
import { showJson, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

export default defineCommand({
  meta: { name: "verify", description: "Check the tool tree and the cache against tool.lock.json" },
  args: { ...projectFlags },
  run({ args }) {
    const ctx = contextFromArgs(args);
    const progress = createProgress(ctx, !args.json);
    let report;
    try {
      report = verifyProject(ctx, (d, t) => progress.update("verifying", d, t));
    } finally {
      progress.end();
    }
    const document = {
      outcome: report.outcome,
      lockfile: report.lockfile,
      tools: report.tools,
      files: report.files,
      handEdited: report.handEdited,
      tree: summarizeDiff(report.tree),
      cache: report.cache,
    };
    const error = verifyOutcomeError(report, document);
    if (!args.json) showResult(renderVerifyReport(report, ctx));
    if (error) throw error;
    if (args.json) showJson({ ok: true, ...document });
    return 0;
  },
});
