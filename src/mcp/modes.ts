// The pin modes and the one decision they drive: given a server's pin (if any) and its live
// interface, accept, pin, ask, or refuse. Pure: the caller connects, prompts and writes.
import { KiwiError } from "../errors.ts";
import { shortDigest } from "../integrity/digest.ts";
import type { InterfaceDiff } from "./interface-diff.ts";
import type { WireListing } from "./listing.ts";
import { type McpPin, diffFromPin, pinMatches } from "./pin.ts";
import { renderVisible } from "./visible.ts";

/** Every mode, with what it does; `--mcp-mode` and KIWI_MCP_MODE take these names. */
export const MCP_MODES = {
  auto: "trust on first use: pin an unpinned server and report it; refuse a changed one",
  verify: "never pin: an unpinned or changed server is refused (CI, production)",
  pin: "re-pin the live interface (an explicit act)",
  approval: "show the diff of a changed (or unpinned) server; on a TTY ask, approve re-pins; without a TTY refuse",
  off: "no pin check at all",
} as const;
export type McpMode = keyof typeof MCP_MODES;

/** The mode from `--mcp-mode`, else KIWI_MCP_MODE, else auto; an unknown name is a usage error. */
export function resolveMcpMode(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): McpMode {
  const raw = flag ?? env.KIWI_MCP_MODE;
  if (raw === undefined || raw === "") return "auto";
  if (Object.hasOwn(MCP_MODES, raw)) return raw as McpMode;
  throw new KiwiError("E_USAGE", `unknown MCP mode ${JSON.stringify(raw)}${flag === undefined ? " (from KIWI_MCP_MODE)" : ""}`, {
    hint: `use one of ${Object.keys(MCP_MODES).join(", ")}`,
  });
}

/** Why `kiwi lock` (or install) leaves an unpinned server unpinned in `mode`; undefined in the modes that pin it. */
export function lockTimeSkipReason(mode: McpMode): string | undefined {
  if (mode === "auto" || mode === "pin") return undefined;
  return mode === "approval" ? `KIWI_MCP_MODE=approval: pin it with "kiwi mcp approve <server>"` : `KIWI_MCP_MODE=${mode} never pins on its own`;
}

export type PinDecision =
  /** Go ahead: the live interface matches its pin, or the mode is off. */
  | { action: "accept"; reason: "matches" | "off" }
  /** Go ahead and write the live pin: first use in auto, or an explicit re-pin. */
  | { action: "pin"; reason: "first-use" | "repin"; diff?: InterfaceDiff }
  /** Approval mode on a TTY: show the diff, ask; yes re-pins, no refuses. */
  | { action: "ask"; reason: "changed" | "unpinned"; diff?: InterfaceDiff; refusal: KiwiError }
  /** Stop, unless --warn-only turned it into a warning (then go ahead without pinning). */
  | { action: "refuse"; error: KiwiError; diff?: InterfaceDiff; warnOnly: boolean };

export interface DecideInput {
  mode: McpMode;
  /** The server's kiwi tool id. */
  server: string;
  pin: McpPin | undefined;
  live: McpPin;
  liveListing: WireListing;
  /** A person can answer a question (stdin and stderr are terminals). */
  interactive: boolean;
  warnOnly: boolean;
}

/** Decides what to do with a server whose live interface has just been extracted. */
export function decidePin(input: DecideInput): PinDecision {
  const { mode, server, pin, live } = input;
  if (mode === "off") return { action: "accept", reason: "off" };
  const diff = pin ? diffFromPin(pin, live, input.liveListing, server) : undefined;
  if (mode === "pin") return { action: "pin", reason: pin ? "repin" : "first-use", diff };
  if (pin && pinMatches(pin, live)) return { action: "accept", reason: "matches" };
  if (!pin) {
    if (mode === "auto") return { action: "pin", reason: "first-use" };
    const error = unpinnedError(server, mode);
    if (mode === "approval" && input.interactive) return { action: "ask", reason: "unpinned", refusal: error };
    return { action: "refuse", error, warnOnly: input.warnOnly };
  }
  const error = driftError(server, pin, live, diff!, mode === "approval" && !input.interactive ? "no terminal to ask on" : undefined);
  if (mode === "approval" && input.interactive) return { action: "ask", reason: "changed", diff, refusal: error };
  return { action: "refuse", error, diff, warnOnly: input.warnOnly };
}

/** E_MCP_DRIFT naming the server, both pairs of hashes and the fix. */
export function driftError(server: string, pin: McpPin, live: McpPin, diff: InterfaceDiff, note?: string): KiwiError {
  const renamed = pin.name !== live.name;
  const what = renamed
    ? `now calls itself ${renderVisible(JSON.stringify(live.name))} but was pinned as ${renderVisible(JSON.stringify(pin.name))}`
    : `changed its interface since it was pinned (interface ${shortDigest(pin.interface_hash)} → ${shortDigest(live.interface_hash)}, full ${shortDigest(pin.full_hash)} → ${shortDigest(live.full_hash)})`;
  return new KiwiError("E_MCP_DRIFT", `MCP server "${server}" ${what}`, {
    hint: `review the change with "kiwi mcp diff ${server}", then accept it with "kiwi mcp approve ${server}"${note ? ` (${note})` : ""}`,
    details: {
      server,
      pinned: { name: pin.name, interface_hash: pin.interface_hash, full_hash: pin.full_hash },
      live: { name: live.name, interface_hash: live.interface_hash, full_hash: live.full_hash },
      severity: diff.severity,
      changes: diff.changes.map((c) => ({ kind: c.kind, name: c.name, change: c.change, severity: c.severity, fields: c.fields.map((f) => f.field) })),
    },
  });
}

/** E_MCP_UNPINNED for modes that never pin on their own. */
export function unpinnedError(server: string, mode: McpMode): KiwiError {
  return new KiwiError("E_MCP_UNPINNED", `MCP server "${server}" has no pin in tool.lock.json and the mode "${mode}" does not pin on first use`, {
    hint: `review it with "kiwi mcp scan ${server}", then pin it with "kiwi mcp approve ${server}" (or "kiwi mcp pin ${server}")`,
    details: { server, mode },
  });
}
