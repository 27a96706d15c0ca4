// A call interrupted by the user or a supervisor: the signals that count as that, and the one error
// every primitive and the MCP call end with then (E_INTERRUPTED, exit 128 + the signal's number, as
// a shell reports a process the signal ended).
import { KiwiError } from "../errors.ts";

/** The signals kiwi takes for "stop this call": passed on to a tool, or ending its request. */
export const INTERRUPT_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * A signal's number, read only when a run ended by a signal: evaluating node:os costs every call
 * ~0.3 ms of start-up, and almost no run needs it.
 */
export function signalNumber(signal: string): number | undefined {
  return ((require("node:os") as typeof import("node:os")).constants.signals as Record<string, number>)[signal];
}

/** `tool` was interrupted by `signal`; `what` says what kiwi did about it ("passed it on to the tool"). */
export function interruptedError(tool: string, signal: string, what: string, details: Record<string, unknown> = {}): KiwiError {
  return new KiwiError("E_INTERRUPTED", `${tool} was interrupted: kiwi received ${signal} and ${what}`, {
    hint: "nothing to fix; run it again when you want it",
    exitCode: 128 + (signalNumber(signal) ?? 2),
    details: { tool, signal, ...details },
  });
}
