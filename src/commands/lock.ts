// `kiwi lock`: validate, hash every tool, write tool.lock.json only if it changed, and say which
// tools were added, removed or changed.
import { defineCommand } from "./_define.ts";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings/verdict.ts";
import { lockProject } from "../ops/lock-io.ts";
import { LOCKFILE_NAME } from "../lockfile/parse.ts";
import { createProgress } from "../ui/lock-progress.ts";
import { summarizeDiff } from "../lockfile/lock-diff.ts";
import { renderFindingsHuman } from "../ui/findings-render.ts";
import { renderResolution, renderToolSummary } from "../ui/lock-render.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags, strictFlag } from "./_flags.ts";

export default defineCommand({
  meta: { name: "lock", description: `Validate the tools, hash them and write ${LOCKFILE_NAME} if anything changed` },
  args: {
    ...projectFlags,
    ...strictFlag,
    from: { type: "string", description: "Convert a kiwi_mcp lockfile (or its .ai/lockfiles store): refuse unless the tree still matches it, then lock", valueHint: "file" },
  },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    if (args.from !== undefined) {
      // Nothing is written unless every chain the kiwi_mcp lockfile pins still hashes the same.
      const { checkKiwiMcpLockfiles, kiwiMcpIssuesError } = await import("../ops/kiwi-mcp-verify-io.ts");
      const mismatch = kiwiMcpIssuesError(checkKiwiMcpLockfiles(ctx, args.from), `kiwi lock --from ${args.from} wrote nothing`);
      if (mismatch) throw mismatch;
    }
    const progress = createProgress(ctx, !args.json);
    let result;
    try {
      result = await lockProject(ctx, { strict: args.strict, onProgress: (d, t) => progress.update("hashing", d, t) });
    } catch (error) {
      progress.end();
      if (!args.json) showGateFindings(error, ctx);
      throw error;
    }
    progress.end();
    for (const w of result.warnings) showNote(`warning: ${w}`);
    if (!args.json) for (const r of result.resolutions ?? []) showNote(renderResolution(r));
    // Only a project with MCP servers pays for loading the MCP step.
    const hasServers = result.mcpServers.length > 0;
    const mcpPins = hasServers ? await (await import("./_mcp-lock.ts")).pinServersAfterLock(ctx, { strict: args.strict === true, json: args.json === true }) : [];
    const { added, removed, changed } = result.diff;
    const summary = summarizeDiff(result.diff);
    if (args.json) {
      showJson({ ok: true, lockfile: result.lockfile, written: result.written, ...summary, stats: result.stats, ...(result.resolutions ? { resolutions: result.resolutions } : {}), ...(mcpPins.length ? { mcp_pins: mcpPins } : {}) });
      return 0;
    }
    const counts = `${added.length} added, ${removed.length} removed, ${changed.length} changed`;
    showResult(
      renderToolSummary(summary, ctx) +
        (result.written ? `wrote ${LOCKFILE_NAME}: ${counts} (${result.stats.tools} tools)` : `${LOCKFILE_NAME} is up to date (${result.stats.tools} tools)`),
    );
    return 0;
  },
});

/** Shows the check report that stopped a lock or install, on stderr, before the error itself. */
export function showGateFindings(error: unknown, ctx: { color: boolean }): void {
  if (error instanceof KiwiError && error.code === "E_CHECK_FAILED" && Array.isArray(error.details?.findings)) {
    showNote(renderFindingsHuman(error.details.findings as Finding[], ctx));
  }
}
