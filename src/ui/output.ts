// The only place that writes to the terminal. stdout carries results; stderr carries logs,
// progress, warnings and rendered errors.
import { writeSync } from "node:fs";
import type { Context } from "../context.ts";
import { renderLosslessJson } from "../integrity/canonical.ts";
import { takeOpenToolLine } from "./stream.ts";

/** Writes result text to stdout. */
export function showResult(text: string): void {
  writeFully(1, text.endsWith("\n") || text === "" ? text : `${text}\n`);
}

/** Writes exactly one JSON document to stdout (integers past 2^53 and 1.0 exactly as written). */
export function showJson(value: unknown): void {
  writeFully(1, `${renderJson(value)}\n`);
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes all of `text` to a file descriptor before returning. process.stdout.write queues data
 * that is lost when the process exits with a pipe still full (`kiwi lock --json | wc -c` saw only
 * 64 KiB), so results and errors are written synchronously, waiting out EAGAIN on non-blocking
 * pipes. A reader that went away (EPIPE) ends the write quietly.
 */
export function writeFully(fd: 1 | 2, text: string): void {
  const bytes = Buffer.from(text);
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") Atomics.wait(pause, 0, 0, 1);
      else if (code === "EPIPE") return;
      else throw error;
    }
  }
}

/** Pretty JSON for humans and machines; lossless numbers keep every digit and their `.0`. */
export function renderJson(value: unknown): string {
  return renderLosslessJson(value, 2);
}

type Colors = ReturnType<typeof import("picocolors").createColors>;
let picocolors: typeof import("picocolors") | undefined;

/** What picocolors.createColors(false) gives: every colour is String (a no-op), built without loading it. */
const NO_COLORS = new Proxy({} as Colors, { get: (_target, key) => (key === "isColorSupported" ? false : String) });

/**
 * Colour functions that are no-ops unless the context allows colour. picocolors is loaded only for
 * colour: at import it reads process.stdout.isTTY (loading node:tty and node:stream), which costs
 * a warm kiwi exec ~9 ms of start-up and a warm kiwi lock ~2 ms.
 */
export function colors(ctx: Pick<Context, "color">): Colors {
  if (!ctx.color) return NO_COLORS;
  picocolors ??= require("picocolors") as typeof import("picocolors");
  return picocolors.createColors(ctx.color);
}

/**
 * Writes a line to stderr (warnings, summaries that are not results), on a line of its own when a
 * running tool's output left the line open.
 */
export function showNote(text: string): void {
  writeFully(2, `${takeOpenToolLine() ? "\n" : ""}${text.endsWith("\n") ? text : `${text}\n`}`);
}
