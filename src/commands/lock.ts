// `kiwi lock`: flags -> ops/lock-tools-io.ts (the --from check, validate, hash, write tool.lock.json
// only if it changed, pin new MCP servers) -> ui/: which tools were added, removed or changed.
import { plural } from "../ui/plural.ts";
import { defineCommand } from "./_define.ts";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings/verdict.ts";
import { lockTools } from "../ops/lock-tools-io.ts";
import { LOCKFILE_NAME } from "../lockfile/parse.ts";
import { createProgress } from "../ui/lock-progress.ts";
import { summarizeDiff } from "../lockfile/lock-diff.ts";
import { findingsJson, renderFindingsHuman } from "../ui/findings-render.ts";
import { renderResolution, renderToolSummary } from "../ui/lock-render.ts";
import { lockPinsDocument, renderLockPins, renderPinStart } from "../ui/mcp-render.ts";
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
    const progress = createProgress(ctx, !args.json);
    let result;
    try {
      result = await lockTools(ctx, {
        from: args.from,
        strict: args.strict,
        onProgress: (d, t) => progress.update("hashing", d, t),
        // What the lock step says comes before the MCP step starts any server.
        onLocked: (locked) => {
          progress.end();
          for (const w of locked.warnings) showNote(`warning: ${w}`);
          showCheckNotes(locked.findings, ctx, args.json === true);
          if (!args.json) for (const r of locked.resolutions ?? []) showNote(renderResolution(r));
        },
        onMcpStart: args.json ? undefined : (server) => showNote(renderPinStart(server)),
      });
    } catch (error) {
      progress.end();
      if (!args.json) showGateFindings(error, ctx);
      throw error;
    }
    if (!args.json) for (const note of renderLockPins(result.mcpPins, ctx)) showNote(note);
    const mcpPins = lockPinsDocument(result.mcpPins);
    const { added, removed, changed } = result.diff;
    const summary = summarizeDiff(result.diff, { addedFiles: args.json === true });
    if (args.json) {
      showJson({ ok: true, lockfile: result.lockfile, written: result.written, ...summary, stats: result.stats, ...(result.findings.length ? { findings: findingsJson(result.findings) } : {}), ...(result.resolutions ? { resolutions: result.resolutions } : {}), ...(mcpPins.length ? { mcp_pins: mcpPins } : {}) });
      return 0;
    }
    const counts = `${added.length} added, ${removed.length} removed, ${changed.length} changed`;
    showResult(
      renderToolSummary(summary, ctx) +
        (result.written ? `wrote ${LOCKFILE_NAME}: ${counts} (${plural(result.stats.tools, "tool")})` : `${LOCKFILE_NAME} is up to date (${plural(result.stats.tools, "tool")})`),
    );
    return 0;
  },
});

/**
 * The warnings and infos of the check a lock or install ran (none when it remembered the tree's
 * verdict, or judged only what changed and that had none), on stderr, as kiwi check prints them:
 * what did not stop it is still said, as a compiler's warnings are. --json lists them instead.
 */
export function showCheckNotes(findings: readonly Finding[], ctx: { color: boolean }, json: boolean): void {
  if (json || findings.length === 0) return;
  showNote(renderFindingsHuman(findings, ctx).trimEnd());
}

/** Shows the check report that stopped a lock or install, on stderr, before the error itself. */
export function showGateFindings(error: unknown, ctx: { color: boolean }): void {
  if (error instanceof KiwiError && error.code === "E_CHECK_FAILED" && Array.isArray(error.details?.findings)) {
    showNote(renderFindingsHuman(error.details.findings as Finding[], ctx));
  }
}
