// `kiwi mcp verify` as a core operation: every selected server is started, listed and compared
// with its pin, and scanned. Returns one row per server; the command turns rows into exit codes.
import type { Context } from "../context.ts";
import { ERROR_CODES, KiwiError, toKiwiError } from "../errors.ts";
import type { InterfaceDiff } from "../mcp/interface-diff.ts";
import { scanFor } from "./mcp-gate-io.ts";
import { inspectServer, negotiationFor } from "./mcp-inspect-io.ts";
import { driftError, unpinnedError } from "../mcp/modes.ts";
import { type McpPin, diffFromPin, pinMatches } from "../mcp/pin.ts";
import { readMcpProject, selectServers } from "../mcp/mcp-project-io.ts";
import type { ScanResult } from "../mcp/scan.ts";

export type VerifyStatus = "ok" | "drift" | "unpinned" | "error";

export interface VerifyRow {
  server: string;
  status: VerifyStatus;
  pin?: McpPin;
  live?: McpPin;
  diff?: InterfaceDiff;
  scan?: ScanResult;
  error?: KiwiError;
  /** What the session tolerated (banner lines), for the command to show. */
  warnings?: string[];
}

/** `kiwi mcp verify`: a row per server and the exit code the rows add up to (verifyExitCode). */
export async function verifyMcpServers(ctx: Context, ids: readonly string[], options: { strict: boolean }): Promise<{ rows: VerifyRow[]; exitCode: number }> {
  const rows = await verifyServers(ctx, ids, options);
  return { rows, exitCode: verifyExitCode(rows) };
}

/** Verifies each named server (default: all) against its pin; never throws for one server's failure (it becomes a row). */
export async function verifyServers(ctx: Context, ids: readonly string[], options: { strict: boolean }): Promise<VerifyRow[]> {
  const project = readMcpProject(ctx);
  const rows: VerifyRow[] = [];
  for (const server of selectServers(project, ids)) {
    const pin = project.pins[server.id];
    if (!pin) {
      rows.push({ server: server.id, status: "unpinned", error: unpinnedError(server.id, "verify") });
      continue;
    }
    try {
      const live = await inspectServer(ctx, server.id, { unlocked: false, negotiation: negotiationFor(pin) });
      const scan = scanFor(project, live, options.strict);
      if (pinMatches(pin, live.live)) {
        rows.push({ server: server.id, status: "ok", pin, live: live.live, scan, warnings: live.warnings });
        continue;
      }
      const diff = diffFromPin(pin, live.live, live.listing, server.id);
      rows.push({ server: server.id, status: "drift", pin, live: live.live, diff, scan, error: driftError(server.id, pin, live.live, diff), warnings: live.warnings });
    } catch (error) {
      rows.push({ server: server.id, status: "error", pin, error: toKiwiError(error) });
    }
  }
  return rows;
}

/**
 * The exit code of a verify run, as a CI gate: a drifted or unpinned server (10) outranks a server
 * that failed to answer (its own code, 9 for E_MCP), which outranks scan errors under --strict (1).
 */
export function verifyExitCode(rows: readonly VerifyRow[]): number {
  if (rows.some((r) => r.status === "drift" || r.status === "unpinned")) return ERROR_CODES.E_MCP_DRIFT.exit;
  const failed = rows.find((r) => r.status === "error");
  if (failed) return failed.error?.exitCode ?? ERROR_CODES.E_MCP.exit;
  if (rows.some((r) => r.scan && !r.scan.ok)) return ERROR_CODES.E_CHECK_FAILED.exit;
  return 0;
}
