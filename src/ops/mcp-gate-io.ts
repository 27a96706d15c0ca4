// Applies a pin decision: compares a live interface with its pin under the mode, runs the
// poisoning scan when a pin is about to be written, asks when the mode says so, and writes pins
// through lockfile/fs.ts (the only writer of tool.lock.json).
import { KiwiError } from "../errors.ts";
import { NO_FAULTS } from "../cache/faults-io.ts";
import { writeMcpPin } from "../lockfile/fs.ts";
import type { InterfaceDiff } from "../mcp/interface-diff.ts";
import type { LiveInterface } from "./mcp-inspect-io.ts";
import { type McpMode, type PinDecision, decidePin } from "../mcp/modes.ts";
import { type McpPin, parsePin, pinMatches } from "../mcp/pin.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { type McpProject, otherServersOf } from "../mcp/mcp-project-io.ts";
import { type ScanResult, scanListing } from "../mcp/scan.ts";

export interface GateOptions {
  mode: McpMode;
  warnOnly: boolean;
  strict: boolean;
  /** Whether a person can be asked (stdin and stderr are terminals). */
  interactive: boolean;
  /** Shows the diff and scan and asks to approve; only called when `interactive`. */
  ask?: (question: AskInput) => Promise<boolean>;
}

export interface AskInput {
  server: string;
  reason: "changed" | "unpinned";
  diff?: InterfaceDiff;
  scan: ScanResult;
}

export interface GateOutcome {
  server: string;
  decision: PinDecision["action"];
  /** What happened, for the report: matches, off, pinned, re-pinned, approved, refused-but-warned. */
  result: "matches" | "off" | "pinned" | "repinned" | "approved" | "warned";
  diff?: InterfaceDiff;
  scan?: ScanResult;
  /** Things to tell the user on stderr (never fatal here). */
  warnings: string[];
}

/** Checks one live interface against the project's pin; throws the refusal, or returns what was done. */
export async function gateServer(project: McpProject, live: LiveInterface, options: GateOptions): Promise<GateOutcome> {
  const server = live.server.id;
  const decision = decidePin({
    mode: options.mode,
    server,
    pin: project.pins[server],
    live: live.live,
    liveListing: live.listing,
    interactive: options.interactive && options.ask !== undefined,
    warnOnly: options.warnOnly,
  });
  const warnings: string[] = [...live.warnings];
  switch (decision.action) {
    case "accept":
      return { server, decision: "accept", result: decision.reason, warnings };
    case "refuse":
      if (!decision.warnOnly) throw decision.error;
      warnings.push(`${decision.error.message} (continuing: --warn-only)`);
      return { server, decision: "refuse", result: "warned", diff: decision.diff, warnings };
    case "ask": {
      const scan = scanFor(project, live, options.strict);
      const yes = await options.ask!({ server, reason: decision.reason, diff: decision.diff, scan });
      if (!yes) throw new KiwiError(decision.refusal.code, `${decision.refusal.message}; not approved`, { hint: decision.refusal.hint, details: decision.refusal.details });
      // Approved as a first pin, but pinned by another kiwi meanwhile: decide (and ask) again against that pin.
      if (pinnedMeanwhile(await writePin(project, live, warnings, decision.reason === "unpinned"), live)) return gateServer(project, live, options);
      return { server, decision: "ask", result: "approved", diff: decision.diff, scan, warnings };
    }
    case "pin": {
      const scan = scanFor(project, live, options.strict);
      assertScanPasses(server, scan);
      // Trust on first use holds for the first pin only: one another kiwi (a parallel exec, kiwi
      // lock) wrote since the project was read is what this listing must match, as in a later run.
      if (pinnedMeanwhile(await writePin(project, live, warnings, decision.reason === "first-use"), live)) return gateServer(project, live, options);
      return { server, decision: "pin", result: decision.reason === "first-use" ? "pinned" : "repinned", diff: decision.diff, scan, warnings };
    }
  }
}

/** The poisoning scan of a live interface, with the project's other servers for cross-references. */
export function scanFor(project: McpProject, live: LiveInterface, strict: boolean): ScanResult {
  return scanListing(live.listing, { server: live.server.id, file: live.server.manifestFile, strict, otherServers: otherServersOf(project, live.server.id) });
}

/** With --strict, scan findings are errors and stop a pin from being written. */
export function assertScanPasses(server: string, scan: ScanResult): void {
  if (scan.ok) return;
  const errors = scan.findings.filter((f) => f.severity === "error");
  throw new KiwiError("E_CHECK_FAILED", `the poisoning scan of MCP server "${server}" found ${errors.length} problem${errors.length === 1 ? "" : "s"}; not pinning it`, {
    hint: `review them with "kiwi mcp scan ${server}"; without --strict they are warnings`,
    details: { findings: errors },
  });
}

/**
 * Writes the live pin and returns the server's pin now in tool.lock.json; without a lockfile
 * (unlocked runs) it is reported, not written, and undefined is returned. With `firstUse` a pin
 * another kiwi wrote since the project was read is kept (and returned) instead of overwritten.
 */
export async function writePin(project: McpProject, live: LiveInterface, warnings: string[], firstUse = false): Promise<McpPin | undefined> {
  if (!project.hasLockfile) {
    warnings.push(`MCP server "${live.server.id}" was not pinned: there is no tool.lock.json (run "kiwi lock", then "kiwi mcp pin ${live.server.id}")`);
    return undefined;
  }
  const lock = await writeMcpPin(project.root, live.server.id, live.live, NO_FAULTS, { firstUse });
  const stored = lock.mcp_servers[live.server.id] as unknown;
  // Another kiwi's pin is read as any pin is: re-verified against its own snapshot.
  const now = stored === undefined || stored === live.live ? live.live : parsePin(stored as CanonicalValue, live.server.id);
  project.pins[live.server.id] = now;
  return now;
}

/** True when the pin in tool.lock.json is not the live one: another kiwi pinned the server first, differently. */
export function pinnedMeanwhile(now: McpPin | undefined, live: LiveInterface): now is McpPin {
  return now !== undefined && now !== live.live && !pinMatches(now, live.live);
}
