// `kiwi install`: lock (or, with --frozen-lockfile / CI=true, require the lockfile to match the
// tree and never write it), then put every tool file into the content-addressed cache.
import { defineCommand } from "./_define.ts";
import { KiwiError } from "../errors.ts";
import { type DiffSummary, summarizeDiff } from "../lockfile/lock-diff.ts";
import { installProject } from "../ops/install-io.ts";
import { LOCKFILE_NAME } from "../lockfile/parse.ts";
import { createProgress } from "../ui/lock-progress.ts";
import { renderFileDiff, renderResolution, renderToolSummary } from "../ui/lock-render.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags, strictFlag } from "./_flags.ts";
import { showGateFindings } from "./lock.ts";
import { syncRemoteTools } from "../ops/remote-install-io.ts";
import { insecureList, registryFlags } from "./_registry-flags.ts";

export default defineCommand({
  meta: { name: "install", description: "Lock the tools (unless frozen) and put every tool file into the cache" },
  args: {
    ...projectFlags,
    ...strictFlag,
    ...registryFlags,
    "frozen-lockfile": {
      type: "boolean",
      description: `Never write ${LOCKFILE_NAME}; fail if the tree differs from it (default when CI=true)`,
      negativeDescription: "Lock even when CI=true",
    },
  },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const flag = args["frozen-lockfile"];
    const frozen = typeof flag === "boolean" ? flag : ctx.ci;
    const progress = createProgress(ctx, !args.json);
    // Remote tools first: their folders must hold the locked bytes before the tree is hashed.
    const remote = await syncRemoteTools(ctx, { insecure: insecureList(args.insecureRegistry) });
    let result;
    try {
      result = await installProject(ctx, { frozen, strict: args.strict, onProgress: (phase, d, t) => progress.update(phase, d, t) });
    } catch (error) {
      progress.end();
      if (!args.json) {
        showGateFindings(error, ctx);
        if (error instanceof KiwiError && error.code === "E_LOCK_STALE" && error.details?.diff) showNote(renderFileDiff(error.details.diff as DiffSummary, ctx));
      }
      throw error;
    }
    progress.end();
    for (const w of result.warnings) showNote(`warning: ${w}`);
    if (!args.json) for (const r of result.resolutions ?? []) showNote(renderResolution(r));
    if (remote.placed > 0 && !args.json) showNote(`placed ${remote.placed} remote tools (${remote.fetched} files downloaded)`);
    // Only a project with MCP servers pays for loading the MCP step.
    const mcpPins = result.mcpServers.length > 0 ? await (await import("./_mcp-lock.ts")).pinServersAfterLock(ctx, { strict: args.strict === true, json: args.json === true }) : [];
    for (const e of result.evicted) showNote(`warning: evicted a corrupt cached ${e.kind} sha256:${e.expected.slice(0, 12)} (it held sha256:${e.actual.slice(0, 12)}) to ${e.quarantined}; restored from the tree`);
    const { stats } = result;
    if (args.json) {
      showJson({ ok: true, remote, lockfile: result.lockfile, frozen: result.frozen, written: result.written, ...summarizeDiff(result.diff), stats, evicted: result.evicted, ...(result.resolutions ? { resolutions: result.resolutions } : {}), ...(mcpPins.length ? { mcp_pins: mcpPins } : {}) });
      return 0;
    }
    const lockLine = result.frozen ? `${LOCKFILE_NAME} matches the tree (frozen)` : result.written ? `wrote ${LOCKFILE_NAME}` : `${LOCKFILE_NAME} is up to date`;
    showResult(`${renderToolSummary(summarizeDiff(result.diff), ctx)}${lockLine}\ninstalled ${stats.tools} tools, ${stats.files} files (${stats.stored} stored, ${stats.present} already cached)`);
    return 0;
  },
});
