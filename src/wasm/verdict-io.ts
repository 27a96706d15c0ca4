// exec's end of the WASI host's verdict (wasi-host-io.ts reportEnd): a file beside the
// instrumented module that the host, through a descriptor it inherits (WASM_VERDICT_FD_ENV), says
// `fuel` or `memory` in when that limit ended the run, or `trap` and the trap's message when the
// module trapped on its own. A module may exit 250, 251 or 134 itself, so the status is believed
// only when no verdict file could be made (and then only for the limits).
import { openSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { WASM_EXIT } from "./wasi-command.ts";

export type WasmLimit = "fuel" | "memory";

/** What ended a run, when it was not the module's own exit: a limit, or a trap of the module's. */
export type WasmEnding = { limit: WasmLimit } | { trap: string };

export interface Verdict {
  /** The descriptor to hand the host. */
  fd: number;
  /** The host's word, read once; the file is then removed. */
  read(): WasmEnding | undefined;
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
        const text = readFileSync(path, "utf8");
        const [word, ...rest] = text.split("\n");
        if (word === "fuel" || word === "memory") return { limit: word };
        return word === "trap" ? { trap: rest.join("\n").trim() } : undefined;
      } catch {
        return undefined;
      } finally {
        discard();
      }
    },
  };
}

/** What ended a run: the verdict's word, or without a verdict file, the limit the status says. */
export function howItEnded(verdict: Verdict | undefined, exitCode: number | null): WasmEnding | undefined {
  if (verdict) return verdict.read();
  return exitCode === WASM_EXIT.fuel ? { limit: "fuel" } : exitCode === WASM_EXIT.memory ? { limit: "memory" } : undefined;
}
