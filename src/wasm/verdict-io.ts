// exec's end of the WASI host's verdict (wasi-host-io.ts reportLimit): a file beside the
// instrumented module that the host, through a descriptor it inherits (WASM_VERDICT_FD_ENV), says
// `fuel` or `memory` in when that limit ended the run. A module may exit 250 or 251 itself, so the
// status is believed only when no verdict file could be made.
import { openSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { WASM_EXIT } from "./wasi-command.ts";

export type WasmLimit = "fuel" | "memory";

export interface Verdict {
  /** The descriptor to hand the host. */
  fd: number;
  /** The host's word, read once; the file is then removed. */
  read(): WasmLimit | undefined;
  /** Removes the file unread (the run never started). */
  discard(): void;
}

/** A verdict file in `dir` (where kiwi has just written the instrumented module); undefined when it cannot be made. */
export function openVerdict(dir: string): Verdict | undefined {
  const path = join(dir, `.verdict-${process.pid}-${Math.random().toString(36).slice(2, 10)}`);
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch {
    return undefined;
  }
  const discard = () => rmSync(path, { force: true });
  return {
    fd,
    discard,
    read: () => {
      try {
        const text = readFileSync(path, "utf8").trim();
        return text === "fuel" || text === "memory" ? text : undefined;
      } catch {
        return undefined;
      } finally {
        discard();
      }
    },
  };
}

/** The limit that ended a run: the verdict's word, or without a verdict file, what the status says. */
export function limitThatEnded(verdict: Verdict | undefined, exitCode: number | null): WasmLimit | undefined {
  if (verdict) return verdict.read();
  return exitCode === WASM_EXIT.fuel ? "fuel" : exitCode === WASM_EXIT.memory ? "memory" : undefined;
}
