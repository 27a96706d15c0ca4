// What `kiwi lock` and `kiwi install` do for MCP servers once tool.lock.json is written: every
// locked mcp_server without a pin is started, listed, scanned and pinned (trust on first use),
// so the committed lockfile carries each server's name, both hashes and a snapshot. Existing pins
// are never touched here (that is `kiwi mcp pin`/`approve`); a server that cannot be reached is
// reported, not fatal, because the tool hashes in the lockfile are still right.
import type { Context } from "../context.ts";
import { type KiwiError, toKiwiError } from "../errors.ts";
import { assertScanPasses, pinnedMeanwhile, scanFor, writePin } from "./mcp-gate-io.ts";
import { inspectServer } from "./mcp-inspect-io.ts";
import { lockTimeSkipReason, resolveMcpMode } from "../mcp/modes.ts";
import type { McpPin } from "../mcp/pin.ts";
import { readMcpProject } from "../mcp/mcp-project-io.ts";
import type { ScanResult } from "../mcp/scan.ts";
import { limitsFor } from "../mcp/target.ts";
import { probeSandbox } from "../exec/sandbox-io.ts";
import { resolveSandboxMode } from "../exec/sandbox-plan.ts";
import { fetchingLauncher } from "../validate/types.ts";

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
  const unpinned = project.servers.filter((s) => !Object.hasOwn(project.pins, s.id));
  if (unpinned.length === 0 || !project.hasLockfile) return [];
  const skip = lockTimeSkipReason(resolveMcpMode(undefined, ctx.env));
  if (skip !== undefined) return unpinned.map((s) => ({ server: s.id, result: "skipped", reason: skip }));
  // Servers whose launcher downloads them at start but which declare no network cannot start in
  // the sandbox: each would only wait out its timeout. `kiwi check` says why (fetches-at-start).
  const sandboxed = willRunSandboxed(ctx.env);
  const reports = new Map<string, LockPinReport>();
  const runnable = unpinned.filter((server) => {
    // A server run from its package (config.package) cannot start before kiwi install puts it in the cache.
    if (project.packagesNotInstalled.includes(server.id)) {
      reports.set(server.id, { server: server.id, result: "skipped", reason: `its packages are locked but not installed; "kiwi install" installs them, then pins the server` });
      return false;
    }
    const command = fetchingLauncher(server.config);
    if (!sandboxed || command === undefined || server.capabilities.some((c) => c.name === "net.outbound")) return true;
    reports.set(server.id, { server: server.id, result: "skipped", reason: `${command} downloads the server when it starts, and ${server.id} declares no net.outbound for the sandbox; use config.package, or declare the registry` });
    return false;
  });
  // A server that cannot start costs one timeout for every server launched the same way, not one
  // each: the first failure of a launch stands for the rest.
  const failedLaunches = new Map<string, LockPinReport>();
  const launchKey = (server: (typeof unpinned)[number]) => JSON.stringify([server.config, server.capabilities.map((c) => [c.name, c.paths, c.hosts]), server.limits]);
  // Pins are written one at a time (tool.lock.json is rewritten for each).
  let writes = Promise.resolve();
  const pinOne = async (server: (typeof unpinned)[number]): Promise<LockPinReport> => {
    const known = failedLaunches.get(launchKey(server));
    if (known) return { ...known, server: server.id, reason: `launched as ${known.server}, which failed: ${known.reason}` };
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
      const written = writes.then(() => writePin(project, live, warnings, true));
      writes = written.then(() => undefined, () => undefined);
      const now = await written;
      if (pinnedMeanwhile(now, live)) {
        const reason = `another kiwi pinned it while kiwi lock listed it, and the interface it pinned differs from the one listed now; review with "kiwi mcp diff ${server.id}"`;
        return { server: server.id, result: "failed", reason, pin: now, scan, warnings };
      }
      return { server: server.id, result: "pinned", pin: live.live, scan, warnings };
    } catch (error) {
      const e = toKiwiError(error);
      const report: LockPinReport = { server: server.id, result: "failed", reason: e.message, error: e };
      if (e.code === "E_MCP") failedLaunches.set(launchKey(server), report);
      return report;
    }
  };
  // Bounded concurrency, a handful of launches at a time; within one launch the first server goes
  // alone, so the others either reuse its failure or start once it is known to work.
  const groups = new Map<string, (typeof unpinned)[number][]>();
  for (const server of runnable) groups.set(launchKey(server), [...(groups.get(launchKey(server)) ?? []), server]);
  const queue = [...groups.values()];
  const worker = async () => {
    for (let group = queue.shift(); group; group = queue.shift()) for (const server of group) reports.set(server.id, await pinOne(server));
  };
  await Promise.all(Array.from({ length: Math.min(PIN_CONCURRENCY, queue.length) }, worker));
  return unpinned.map((s) => reports.get(s.id)!);
}

/** Servers kiwi lock starts at once. */
const PIN_CONCURRENCY = 4;

/** Whether a server started now would run in bubblewrap (KIWI_SANDBOX and a usable bwrap). */
function willRunSandboxed(env: Context["env"]): boolean {
  const mode = resolveSandboxMode(undefined, env);
  return mode !== "off" && probeSandbox(env).usable;
}
