// `kiwi mcp hash|verify|pin|approve|diff|scan`: MCP server interfaces, their pins in
// tool.lock.json, drift diffs and the poisoning scan. Flags -> ops/mcp-*-io.ts -> ui/mcp-render.ts.
import { join } from "node:path";
import { defineCommand } from "./_define.ts";
import { VARIADIC } from "./_args.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import type { GateOutcome } from "../ops/mcp-gate-io.ts";
import type { LiveInterface } from "../ops/mcp-inspect-io.ts";
import { diffServer, liveOrListing, scanServers } from "../ops/mcp-interface-io.ts";
import { approveServer, pinServers } from "../ops/mcp-pin-io.ts";
import { verifyMcpServers } from "../ops/mcp-verify-io.ts";
import { interruptibleCommand } from "../mcp/reaper-io.ts";
import { renderDiff, renderFindings, renderHashes, renderListingSummary, renderVerifyLine, listingCounts } from "../ui/mcp-render.ts";
import { askApproval, canAsk } from "../ui/mcp-prompt.ts";
import { renderError } from "../ui/error.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags, strictFlag } from "./_flags.ts";

const unlockedFlag = {
  unlocked: { type: "boolean", description: "Start the server without comparing its chain with tool.lock.json (development)" },
} as const;
const listingFlag = {
  listing: { type: "string", description: "Work offline on a wire listing file (MCP wire JSON) instead of a live server", valueHint: "file" },
} as const;

const hash = defineCommand({
  meta: { name: "hash", description: "Print a server's interface hash (kiji-safeguard compatible) and kiwi's full hash" },
  args: { server: { type: "positional", required: false, description: "mcp_server tool id" }, ...listingFlag, ...unlockedFlag, ...projectFlags },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const { live, source } = await interruptibleCommand("kiwi mcp hash", () => liveOrListing(ctx, args.server, args.listing, args.unlocked === true));
    showWarnings(live.warnings);
    const doc = { ok: true, ...source, name: live.live.name, version: live.live.version ?? null, protocol_version: live.live.protocol_version ?? null, ...(live.live.credential ? { credential: live.live.credential } : {}), interface_hash: live.live.interface_hash, full_hash: live.live.full_hash, counts: listingCounts(live.listing) };
    if (args.json) showJson(doc);
    else {
      showNote(renderListingSummary(live.listing));
      showResult(renderHashes(live.live));
    }
    return 0;
  },
});

const verify = defineCommand({
  meta: { name: "verify", description: "Check every pinned server's live interface against its pin (a CI gate: 0 ok, 10 drift or unpinned, 9 server failure, 1 scan errors with --strict)" },
  args: { servers: { type: "positional", ...VARIADIC, required: false, description: "mcp_server tool ids (default: all)" }, ...strictFlag, ...projectFlags },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const { rows, exitCode: code } = await interruptibleCommand("kiwi mcp verify", () => verifyMcpServers(ctx, args._, { strict: args.strict === true }));
    const doc = rows.map((r) => ({ server: r.server, status: r.status, pinned: r.pin ? hashesOf(r.pin) : null, live: r.live ? hashesOf(r.live) : null, severity: r.diff?.severity ?? null, changes: r.diff?.changes ?? [], findings: r.scan?.findings ?? [], ...(r.error ? { error: { code: r.error.code, message: r.error.message, hint: r.error.hint } } : {}) }));
    if (!args.json) {
      const lines = rows.map((r) => renderVerifyLine({ server: r.server, status: r.status, pin: r.pin, live: r.live, message: r.status === "ok" ? "matches its pin" : r.error?.message }, ctx));
      showResult(lines.join("\n") || "no MCP servers in this project");
      for (const r of rows) {
        for (const w of r.warnings ?? []) showNote(`warning: ${w}`);
        if (r.diff) showNote(renderDiff(r.server, r.diff, ctx));
        if (r.scan) noteIf(renderFindings(r.scan, ctx));
      }
    }
    if (code === 0) {
      if (args.json) showJson({ ok: true, servers: doc });
      return 0;
    }
    const failing = rows.filter((r) => r.status !== "ok" || (r.scan && !r.scan.ok)).map((r) => r.server);
    // A server that failed sets the exit code with its own error (E_MCP, or E_CACHE_MISSING for a package not installed): so do its code and hint.
    const failed = code === 10 || code === 1 ? undefined : rows.find((r) => r.status === "error")?.error;
    // Exit 10 is a drift, or only servers with no pin yet: those have nothing to diff against.
    const drifted = rows.filter((r) => r.status === "drift").map((r) => r.server);
    const unpinned = rows.filter((r) => r.status === "unpinned").map((r) => r.server);
    const one = (servers: string[]) => (servers.length === 1 ? servers[0]! : "<server>");
    const refusal =
      drifted.length > 0
        ? { code: "E_MCP_DRIFT" as const, hint: `review with "kiwi mcp diff ${one(drifted)}", then "kiwi mcp approve ${one(drifted)}"${unpinned.length ? `; pin the unpinned with "kiwi mcp approve ${one(unpinned)}"` : ""}` }
        : { code: "E_MCP_UNPINNED" as const, hint: `review with "kiwi mcp scan ${one(unpinned)}", then pin with "kiwi mcp approve ${one(unpinned)}"` };
    throw new KiwiError(code === 1 ? "E_CHECK_FAILED" : code === 10 ? refusal.code : (failed?.code ?? "E_MCP"), `kiwi mcp verify failed for ${failing.join(", ")}`, {
      hint: code === 10 ? refusal.hint : code === 1 ? 'review the findings with "kiwi mcp scan <server>"' : (failed?.hint ?? "run the server's command by hand to see why it fails"),
      exitCode: code,
      details: { servers: doc },
    });
  },
});

const pin = defineCommand({
  meta: { name: "pin", description: "Pin (or re-pin) servers' live interfaces in tool.lock.json, after a poisoning scan" },
  args: { servers: { type: "positional", ...VARIADIC, required: false, description: "mcp_server tool ids (default: all)" }, ...strictFlag, ...projectFlags },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const { project, outcomes, failures } = await interruptibleCommand("kiwi mcp pin", () => pinServers(ctx, args._, args.strict === true, (outcome, live) => reportOutcome(ctx, outcome, live, args.json === true)));
    const done = outcomes.map((o) => ({ server: o.server, result: o.result, ...hashesOf(project.pins[o.server]!) }));
    assertNoServerFailed(ctx, "pin", "pinned", failures, done, args.json === true);
    if (args.json) showJson({ ok: true, servers: outcomes.map((o) => ({ server: o.server, result: o.result, ...hashesOf(project.pins[o.server]!), findings: o.scan?.findings ?? [], changes: o.diff?.changes ?? [] })) });
    return 0;
  },
});

const approve = defineCommand({
  meta: { name: "approve", description: "Review a server's change (diff and scan) and re-pin it when approved" },
  args: { server: { type: "positional", required: true, description: "mcp_server tool id" }, yes: { type: "boolean", description: "Approve without asking (the diff is still printed)" }, ...strictFlag, ...projectFlags },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const outcome = await interruptibleCommand("kiwi mcp approve", () => approveServer(ctx, args.server, {
      strict: args.strict === true,
      review: async (change) => {
        if (args.yes !== true && canAsk(ctx)) return askApproval(change, ctx);
        if (args.yes !== true || !args.json) {
          if (change.diff) showNote(renderDiff(change.server, change.diff, ctx));
          noteIf(renderFindings(change.scan, ctx));
        }
        if (args.yes === true) return true;
        throw new KiwiError(change.reason === "changed" ? "E_MCP_DRIFT" : "E_MCP_UNPINNED", `MCP server "${change.server}" was not approved: there is no terminal to ask on`, {
          hint: `review the diff above, then run "kiwi mcp approve ${change.server} --yes"`,
          details: { server: change.server, changes: change.diff?.changes ?? [], findings: change.scan.findings },
        });
      },
    }));
    if (outcome.result === "matches") {
      if (args.json) showJson({ ok: true, server: outcome.server, result: "matches", ...hashesOf(outcome.pinned) });
      else showResult(`MCP server "${outcome.server}" already matches its pin; nothing to approve`);
      return 0;
    }
    if (args.json) showJson({ ok: true, server: outcome.server, result: outcome.result, ...hashesOf(outcome.pinned), changes: outcome.review?.diff?.changes ?? [], findings: outcome.review?.scan.findings ?? [] });
    else showResult(`approved: pinned MCP server "${outcome.server}" (interface ${outcome.pinned.interface_hash})`);
    for (const w of outcome.warnings) showNote(`warning: ${w}`);
    return 0;
  },
});

const diff = defineCommand({
  meta: { name: "diff", description: "Show what changed in a server's interface since it was pinned (live, or from --listing)" },
  args: { server: { type: "positional", required: true, description: "mcp_server tool id" }, ...listingFlag, ...unlockedFlag, ...projectFlags },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const { server, pinned, live, diff: result } = await interruptibleCommand("kiwi mcp diff", () => diffServer(ctx, args.server, { ...(args.listing ? { listing: args.listing } : {}), unlocked: args.unlocked === true }));
    showWarnings(live.warnings);
    if (args.json) showJson({ ok: true, server: server.id, changed: result.changes.length > 0, severity: result.severity, pinned: hashesOf(pinned), live: hashesOf(live.live), changes: result.changes });
    else showResult(renderDiff(server.id, result, ctx));
    return 0;
  },
});

const scan = defineCommand({
  meta: { name: "scan", description: "Scan servers' interfaces for poisoning (hidden Unicode, injection, secrets, cross-server references, blobs)" },
  args: { server: { type: "positional", required: false, description: "mcp_server tool id (default: all)" }, ...listingFlag, ...unlockedFlag, ...strictFlag, ...projectFlags },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const { results, failures } = await interruptibleCommand("kiwi mcp scan", () => scanServers(ctx, { ...(args.server ? { server: args.server } : {}), ...(args.listing ? { listing: args.listing } : {}), unlocked: args.unlocked === true, strict: args.strict === true }));
    if (!args.json) for (const r of results) showWarnings(r.warnings);
    const failed = results.filter((r) => !r.scan.ok);
    if (!args.json) {
      for (const r of results) showResult(r.scan.findings.length ? renderFindings(r.scan, ctx) : `MCP server "${r.server}": no findings`);
    }
    const doc = results.map((r) => ({ server: r.server, ok: r.scan.ok, truncated: r.scan.truncated, findings: r.scan.findings }));
    assertNoServerFailed(ctx, "scan", "scanned", failures, doc, args.json === true);
    if (failed.length > 0) {
      throw new KiwiError("E_CHECK_FAILED", `the poisoning scan found errors in ${failed.map((r) => r.server).join(", ")}`, { hint: "without --strict the findings are warnings", details: { servers: doc } });
    }
    if (args.json) showJson({ ok: true, servers: doc });
    return 0;
  },
});

const skill = defineCommand({
  meta: { name: "skill", description: "Fetch one of a server's skills (SEP-2640): its entry must match the pin, every file its sha256 digest" },
  args: {
    server: { type: "positional", required: true, description: "mcp_server tool id" },
    uri: { type: "positional", required: true, description: "the skill's SKILL.md URI, e.g. skill://git-workflow/SKILL.md" },
    out: { type: "string", description: "Write the skill's verified files into this folder (else SKILL.md goes to stdout)", valueHint: "dir" },
    unlocked: { type: "boolean", description: "Fetch from a server that has no pin (the live entry alone is checked)" },
    ...projectFlags,
  },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const { getSkill } = await import("../ops/mcp-skill-get-io.ts");
    const fetched = await getSkill(ctx, args.server, args.uri, { unlocked: args.unlocked === true, ...(args.out ? { out: args.out } : {}) });
    const written = fetched.written;
    const files = fetched.files.map((f) => ({ uri: f.uri, path: f.uri.slice(fetched.root.length), size: f.size, digest: f.digest }));
    if (fetched.unpinned) showNote(`warning: MCP server "${fetched.server}" has no pin; the skill was checked against its live entry only`);
    if (args.json) {
      showJson({ ok: true, server: fetched.server, skill: args.uri, name: (fetched.entry.frontmatter as { name: string }).name, verified: true, files, ...(written ? { out: args.out } : {}) });
      return 0;
    }
    showNote(`verified ${files.length} file${files.length === 1 ? "" : "s"} of ${args.uri} against ${fetched.unpinned ? "its live entry" : "the pin"} (sha256)`);
    if (written) showResult(written.map((p) => join(args.out!, p)).join("\n"));
    else showResult(new TextDecoder().decode(fetched.files.find((f) => f.uri === args.uri)!.bytes).replace(/\n$/, ""));
    return 0;
  },
});

export default defineCommand({
  meta: { name: "mcp", description: "MCP server interfaces: hashes, pins, drift diffs, the poisoning scan and skills" },
  subCommands: { hash, verify, pin, approve, diff, scan, skill },
});

/** What a server session tolerated, on stderr. */
function showWarnings(warnings: readonly string[]): void {
  for (const w of warnings) showNote(`warning: ${w}`);
}

function hashesOf(p: { name: string; interface_hash: string; full_hash: string }) {
  return { name: p.name, interface_hash: p.interface_hash, full_hash: p.full_hash };
}

function reportOutcome(ctx: Context, outcome: GateOutcome, live: LiveInterface, json: boolean): void {
  if (json) return;
  if (outcome.diff && outcome.diff.changes.length > 0) showNote(renderDiff(outcome.server, outcome.diff, ctx));
  if (outcome.scan) noteIf(renderFindings(outcome.scan, ctx));
  for (const w of outcome.warnings) showNote(`warning: ${w}`);
  showResult(`${outcome.result} ${outcome.server} (${renderListingSummary(live.listing)}) interface ${live.live.interface_hash}`);
}


/**
 * A server that failed does not stop pin or scan from doing the others; the run still fails: with
 * the failure itself when no other server was done, else showing each failure, then a summary
 * naming the failed and the done servers (the --json error lists every server).
 */
function assertNoServerFailed(ctx: Context, verb: "pin" | "scan", did: string, failures: readonly { server: string; error: KiwiError }[], done: readonly ({ server: string } & Record<string, unknown>)[], json: boolean): void {
  if (failures.length === 0) return;
  if (failures.length === 1 && done.length === 0) throw failures[0]!.error;
  if (!json) for (const f of failures) showNote(renderError(f.error, ctx).trimEnd());
  const first = failures[0]!.error;
  const failed = failures.map((f) => f.server);
  throw new KiwiError(first.code, `kiwi mcp ${verb} could not ${verb} ${failed.join(", ")}${done.length ? ` (${did}: ${done.map((d) => d.server).join(", ")})` : ""}`, {
    hint: `fix ${failures.length === 1 ? "it" : "each"} as its error says, then run "kiwi mcp ${verb} ${failed.join(" ")}"`,
    exitCode: first.exitCode,
    details: { servers: [...done, ...failures.map((f) => ({ server: f.server, result: "failed", error: { code: f.error.code, message: f.error.message, hint: f.error.hint } }))] },
  });
}

function noteIf(text: string): void {
  if (text.trim() !== "") showNote(text);
}
