// `kiwi install`: flags -> ops/install-io.ts (remote tools, lock or --frozen-lockfile / CI set
// proof, the cache, MCP pins) -> ui/. The command only renders what the use case reports.
import { plural } from "../ui/plural.ts";
import { defineCommand } from "./_define.ts";
import { KiwiError } from "../errors.ts";
import { type DiffSummary, summarizeDiff } from "../lockfile/lock-diff.ts";
import { installProject } from "../ops/install-io.ts";
import { LOCKFILE_NAME } from "../lockfile/parse.ts";
import { createProgress } from "../ui/lock-progress.ts";
import { renderFileDiff, renderLockWait, renderResolution, renderToolSummary } from "../ui/lock-render.ts";
import { lockPinsDocument, renderLockPins, renderPinStart } from "../ui/mcp-render.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { renderRefetched } from "../ui/registry-render.ts";
import { contextFromArgs, projectFlags, strictFlag } from "./_flags.ts";
import { showCheckNotes, showGateFindings } from "./_check-notes.ts";
import { findingsJson } from "../ui/findings-render.ts";
import { insecureList, registryFlags } from "./_registry-flags.ts";
import { interruptibleCommand } from "../mcp/reaper-io.ts";

export default defineCommand({
  meta: { name: "install", description: "Lock the tools (unless frozen) and put every tool file into the cache" },
  args: {
    ...projectFlags,
    ...strictFlag,
    ...registryFlags,
    "frozen-lockfile": {
      type: "boolean",
      description: `Never write ${LOCKFILE_NAME}; fail if the tree differs from it (default when CI is set: CI=true, CI=1, …; not CI=false or CI=0)`,
      negativeDescription: "Lock even when CI is set",
    },
  },
  async run({ args, rawArgs }) {
    const ctx = contextFromArgs(args);
    const flag = args["frozen-lockfile"];
    const frozen = typeof flag === "boolean" ? flag : ctx.ci;
    const progress = createProgress(ctx, !args.json);
    let result;
    try {
      result = await interruptibleCommand("kiwi install", () => installProject(ctx, {
        frozen,
        strict: args.strict,
        insecure: insecureList(rawArgs, args.insecureRegistry),
        onProgress: (phase, d, t) => progress.update(phase, d, t),
        onWait: (holder, lockFile) => showNote(renderLockWait(holder, lockFile)),
        // What the lock step says comes before the MCP step starts any server.
        onInstalled: (installed) => {
          progress.end();
          for (const w of installed.warnings) showNote(`warning: ${w}`);
          showCheckNotes(installed.findings, ctx, args.json === true);
          if (args.json) return;
          for (const r of installed.resolutions ?? []) showNote(renderResolution(r));
          for (const id of installed.remote.removed) showNote(`removed .ai/tools/.remote/${id}: ${LOCKFILE_NAME} records no remote tool "${id}" (a kiwi remove elsewhere)`);
          for (const e of installed.remote.evicted) showNote(renderRefetched(e));
          if (installed.remote.placed > 0) showNote(`placed ${plural(installed.remote.placed, "remote tool")} (${plural(installed.remote.fetched, "file")} downloaded)`);
        },
        onMcpStart: args.json ? undefined : (server) => showNote(renderPinStart(server)),
      }));
    } catch (error) {
      progress.end();
      if (!args.json) {
        showGateFindings(error, ctx);
        if (error instanceof KiwiError && error.code === "E_LOCK_STALE" && error.details?.diff) showNote(renderFileDiff(error.details.diff as DiffSummary, ctx));
      }
      throw error;
    }
    if (!args.json) for (const note of renderLockPins(result.mcpPins, ctx)) showNote(note);
    for (const e of result.evicted) showNote(`warning: evicted a corrupt cached ${e.kind} sha256:${e.expected.slice(0, 12)} (it held sha256:${e.actual.slice(0, 12)}) to ${e.quarantined}; restored from the tree`);
    const { stats, remote } = result;
    const mcpPins = lockPinsDocument(result.mcpPins);
    if (args.json) {
      showJson({ ok: true, remote, lockfile: result.lockfile, frozen: result.frozen, written: result.written, ...summarizeDiff(result.diff), stats, ...(result.packages ? { packages: result.packages } : {}), evicted: result.evicted, ...(result.findings.length ? { findings: findingsJson(result.findings) } : {}), ...(result.resolutions ? { resolutions: result.resolutions } : {}), ...(mcpPins.length ? { mcp_pins: mcpPins } : {}) });
      return 0;
    }
    const lockLine = result.frozen ? `${LOCKFILE_NAME} matches the tree (frozen)` : result.written ? `wrote ${LOCKFILE_NAME}` : `${LOCKFILE_NAME} is up to date`;
    // Package sets (a tool's npm or Python packages; tools with the same ones share a set): said only when the project has some.
    const { installed, reused } = result.packages ?? { installed: 0, reused: 0 };
    const packages = installed + reused > 0 ? `; ${plural(installed + reused, "package set")} (${installed} installed, ${reused} already cached)` : "";
    showResult(`${renderToolSummary(summarizeDiff(result.diff), ctx)}${lockLine}\ninstalled ${plural(stats.tools, "tool")}, ${plural(stats.files, "file")} (${stats.stored} stored, ${stats.present} already cached)${packages}`);
    return 0;
  },
});
