// `kiwi verify`: the tree and the cache against tool.lock.json, re-reading every byte. Exit codes:
// 5 lockfile invalid, 4 cache corrupted (or missing entries), 3 tree differs (README "Exit codes").
import { defineCommand } from "./_define.ts";
import { verifyTree } from "../ops/verify-io.ts";
import { createProgress } from "../ui/lock-progress.ts";
import { renderVerifyReport } from "../ui/lock-render.ts";
import { showJson, showResult } from "../ui/output.ts";
import type { Context } from "../context.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

export default defineCommand({
  meta: { name: "verify", description: "Check the tool tree and the cache against tool.lock.json (or a kiwi_mcp lockfile)" },
  args: {
    lockfile: { type: "positional", required: false, description: "A kiwi_mcp lockfile, or its .ai/lockfiles store, to check the tree against instead", valueHint: "file" },
    ...projectFlags,
  },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    if (args.lockfile !== undefined) return verifyKiwiMcp(ctx, args.lockfile, args.json === true);
    const progress = createProgress(ctx, !args.json);
    let verified;
    try {
      verified = verifyTree(ctx, (d, t) => progress.update("verifying", d, t));
    } finally {
      progress.end();
    }
    const { report, document, error } = verified;
    if (!args.json) showResult(renderVerifyReport(report, ctx));
    if (error) throw error;
    if (args.json) showJson({ ok: true, ...document });
    return 0;
  },
});

/** `kiwi verify <kiwi_mcp lockfile>`: kiwi_mcp's verdicts, per lockfile; exit 3 when one fails. */
async function verifyKiwiMcp(ctx: Context, target: string, json: boolean): Promise<number> {
  const { verifyKiwiMcpLockfiles } = await import("../ops/kiwi-mcp-verify-io.ts");
  const { reports, error } = verifyKiwiMcpLockfiles(ctx, target, "kiwi verify");
  if (!json) showResult(reports.map((r) => (r.issues.length ? [`${r.file}  FAILED  ${r.root}`, ...r.issues.map((i) => `    ${i}`)] : [`${r.file}  ok  ${r.root} (${r.links} links)`]).join("\n")).join("\n"));
  if (error) throw error;
  if (json) showJson({ ok: true, lockfiles: reports });
  return 0;
}
