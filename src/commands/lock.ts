// `kiwi lock`: flags -> ops/lock-tools-io.ts (the --from check, validate, hash, write tool.lock.json
// only if it changed, pin new MCP servers) -> ui/: which tools were added, removed or changed.
import { plural } from "../ui/plural.ts";
import { defineCommand } from "./_define.ts";
import { lockTools } from "../ops/lock-tools-io.ts";
import { interruptibleCommand } from "../mcp/reaper-io.ts";
import { LOCKFILE_NAME } from "../lockfile/parse.ts";
import { createProgress } from "../ui/lock-progress.ts";
import { summarizeDiff } from "../lockfile/lock-diff.ts";
import { findingsJson } from "../ui/findings-render.ts";
import { showCheckNotes, showGateFindings } from "./_check-notes.ts";
import { renderLockWait, renderResolution, renderToolSummary } from "../ui/lock-render.ts";
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
      result = await interruptibleCommand("kiwi lock", () => lockTools(ctx, {
        from: args.from,
        strict: args.strict,
        onProgress: (d, t) => progress.update("hashing", d, t),
        onWait: (holder, lockFile) => showNote(renderLockWait(holder, lockFile)),
        // What the lock step says comes before the MCP step starts any server.
        onLocked: (locked) => {
          progress.end();
          for (const w of locked.warnings) showNote(`warning: ${w}`);
          showCheckNotes(locked.findings, ctx, args.json === true);
          if (!args.json) for (const r of locked.resolutions ?? []) showNote(renderResolution(r));
        },
        onMcpStart: args.json ? undefined : (server) => showNote(renderPinStart(server)),
      }));
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
      showJson({ ok: true, lockfile: result.lockfile, written: result.written, ...(result.lineEndings ? { lineEndings: result.lineEndings } : {}), ...summary, stats: result.stats, ...(result.findings.length ? { findings: findingsJson(result.findings) } : {}), ...(result.resolutions ? { resolutions: result.resolutions } : {}), ...(mcpPins.length ? { mcp_pins: mcpPins } : {}) });
      return 0;
    }
    const counts = `${added.length} added, ${removed.length} removed, ${changed.length} changed`;
    showResult(
      renderToolSummary(summary, ctx) +
        (result.written ? `wrote ${LOCKFILE_NAME}: ${result.lineEndings ? "only its line endings changed (CRLF to LF)" : counts} (${plural(result.stats.tools, "tool")})` : `${LOCKFILE_NAME} is up to date (${plural(result.stats.tools, "tool")})`),
    );
    return 0;
  },
});
