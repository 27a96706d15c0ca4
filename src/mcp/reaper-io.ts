// Keeps track of the MCP server process groups kiwi started, so that none outlives kiwi: on
// Ctrl-C, SIGTERM or SIGHUP every live group is killed before kiwi itself exits, and on any exit
// path the 'exit' hook kills what is left. Each server runs in its own group (setsid), so its
// children die with it and the terminal's Ctrl-C reaches kiwi only, which then cleans up.
// While a caller intercepts interruptions (kiwi exec of an mcp_tool), the first signal kills every
// live group as above and is handed to it, so kiwi reports E_INTERRUPTED as for any tool instead of
// dying of the signal; a second signal then ends kiwi at once.
import { interruptedError } from "../exec/interrupt.ts";

const live = new Set<number>();
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
let installed = false;
let interceptor: ((signal: NodeJS.Signals) => void) | undefined;

/** Registers a started server's process group (its leader's pid). */
export function trackGroup(pid: number): void {
  live.add(pid);
  if (!installed) install();
}

/** Forgets a group once it has been reaped. */
export function untrackGroup(pid: number): void {
  live.delete(pid);
  if (live.size === 0 && installed && !interceptor) uninstall();
}

/**
 * Until the returned release is called, the first SIGINT, SIGTERM or SIGHUP kills every live
 * server group and calls `handler` with the signal instead of ending kiwi; the handlers are then
 * removed, so a second signal ends kiwi the way the signal says.
 */
export function interceptInterrupts(handler: (signal: NodeJS.Signals) => void): () => void {
  interceptor = handler;
  if (!installed) install();
  return () => {
    if (interceptor !== handler) return;
    interceptor = undefined;
    if (live.size === 0 && installed) uninstall();
  };
}

/** Sends a signal to a whole process group; false when the group no longer exists. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    try {
      // Not a group leader after all (setsid failed): signal the process itself.
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/** Number of server groups still alive (tests use it to prove nothing leaked). */
export function liveGroups(): number {
  return live.size;
}

function killAll(): void {
  for (const pid of live) signalGroup(pid, "SIGKILL");
  live.clear();
}

const onSignal = (signal: NodeJS.Signals) => {
  killAll();
  uninstall();
  const handler = interceptor;
  interceptor = undefined;
  if (handler) {
    handler(signal);
    return;
  }
  // Re-raise with our handlers gone, so kiwi ends the way the signal says (exit 130 for Ctrl-C).
  process.kill(process.pid, signal);
};

function install(): void {
  installed = true;
  for (const s of SIGNALS) process.on(s, onSignal);
  process.on("exit", killAll);
}

function uninstall(): void {
  installed = false;
  for (const s of SIGNALS) process.off(s, onSignal);
  process.off("exit", killAll);
}

/**
 * Runs a command that may start MCP servers (kiwi mcp hash/verify/pin/approve/diff/scan, kiwi lock and
 * install) so that Ctrl-C (SIGINT, SIGTERM, SIGHUP) ends it as an interrupted `kiwi exec` ends: the
 * servers it started are killed and it fails with E_INTERRUPTED (exit 128+N, and with --json the
 * one error document) instead of dying of the signal with nothing printed. Every write it may be
 * doing is a temp file renamed into place, so the exit that follows leaves no half-written pin or
 * lockfile; a second signal ends kiwi at once.
 */
export async function interruptibleCommand<T>(command: string, run: () => Promise<T>): Promise<T> {
  let interrupt: (signal: NodeJS.Signals) => void = () => {};
  const interrupted = new Promise<never>((_, reject) => {
    interrupt = (signal) => reject(interruptedError(command, signal, "stopped it and any MCP server it had started", { command }));
  });
  const release = interceptInterrupts((signal) => interrupt(signal));
  try {
    return await Promise.race([interrupted, run()]);
  } finally {
    release();
  }
}
