// What `kiwi lock` and `kiwi install` do for MCP servers once tool.lock.json is written: every
// locked mcp_server without a pin is started, listed, scanned and pinned (trust on first use),
// so the committed lockfile carries each server's name, both hashes and a snapshot. Existing pins
// are never touched here (that is `kiwi mcp pin`/`approve`); a server that cannot be reached is
// reported, not fatal, because the tool hashes in the lockfile are still right.
import type { Context } from "../context.ts";
import { type KiwiError, toKiwiError } from "../errors.ts";
import { assertScanPasses, scanFor, writePin } from "./gate-io.ts";
import { inspectServer } from "./inspect-io.ts";
import { resolveMcpMode } from "./modes.ts";
import type { McpPin } from "./pin.ts";
import { readMcpProject } from "./mcp-project-io.ts";
import type { ScanResult } from "./scan.ts";
import { limitsFor } from "./target.ts";

/** How long `kiwi lock` waits for each answer of a server whose manifest sets no config.timeout. */
export const LOCK_TIME_TIMEOUT_MS = 10_000;

export interface LockPinReport {
  server: string;
  result: "pinned" | "skipped" | "failed";
  /** Why it was skipped or failed. */
  reason?: string;
  pin?: McpPin;
  scan?: ScanResult;
  error?: KiwiError;
  /** What the session tolerated and the pin step could not do, for the command to show. */
  warnings?: string[];
}

/** Pins the project's unpinned servers (modes off/verify/approval pin nothing here). */
export async function pinUnpinnedServers(ctx: Context, options: { strict: boolean; onStart?: (server: string) => void }): Promise<LockPinReport[]> {
  const project = readMcpProject(ctx);
  const unpinned = project.servers.filter((s) => !project.pins[s.id]);
  if (unpinned.length === 0 || !project.hasLockfile) return [];
  const mode = resolveMcpMode(undefined, ctx.env);
  if (mode !== "auto" && mode !== "pin") {
    const reason = mode === "approval" ? `KIWI_MCP_MODE=approval: pin it with "kiwi mcp approve <server>"` : `KIWI_MCP_MODE=${mode} never pins on its own`;
    return unpinned.map((s) => ({ server: s.id, result: "skipped", reason }));
  }
  const reports: LockPinReport[] = [];
  for (const server of unpinned) {
    try {
      // Pinning at lock time is a convenience (auto mode pins on first use anyway), so a server that
      // does not answer soon is reported rather than allowed to stall every `kiwi lock`.
      const timeout = server.limits.timeoutMs ?? LOCK_TIME_TIMEOUT_MS;
      options.onStart?.(server.id);
      const declared = limitsFor(server);
      const live = await inspectServer(ctx, server.id, { unlocked: false, limits: { ...declared, requestTimeoutMs: timeout, sessionTimeoutMs: timeout * 3 + (declared.startTimeoutMs ?? 0) } });
      const scan = scanFor(project, live, options.strict);
      assertScanPasses(server.id, scan);
      const warnings: string[] = [...live.warnings];
      await writePin(project, live, warnings);
      reports.push({ server: server.id, result: "pinned", pin: live.live, scan, warnings });
    } catch (error) {
      const e = toKiwiError(error);
      reports.push({ server: server.id, result: "failed", reason: e.message, error: e });
    }
  }
  return reports;
}
