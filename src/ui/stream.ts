// Forwards a running tool's output to kiwi's own stdout and stderr as it arrives, with
// backpressure. A closed reader (`kiwi exec … | head`) is passed on to the tool: the sink answers
// "closed" and the subprocess primitive stops reading that stream, so the tool's next write fails.
// Bun.write on Bun.stdout/Bun.stderr rather than process.stdout: the Node stream objects cost
// ~9 ms to create, a large share of a warm kiwi exec.
import { fstatSync } from "node:fs";
import type { BunFile } from "bun";
import type { OutputSinks, SinkResult } from "../exec/subprocess.ts";
import { decodeCharset } from "../exec/charset.ts";

/**
 * Sinks that keep a tool's output for one JSON document (`kiwi exec --json`); the subprocess
 * primitive already caps what a tool may write (limits.output_bytes).
 */
export function collectingSinks(): { sinks: OutputSinks; text: () => { stdout: string; stderr: string } } {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  // An http_client body is read in the charset it declared, as the transform reads it.
  let charset: string | undefined;
  const decode = (chunks: Uint8Array[], label?: string) => decodeCharset(Buffer.concat(chunks), label);
  return {
    sinks: { stdout: (chunk) => void out.push(chunk.slice()), stderr: (chunk) => void err.push(chunk.slice()), charset: (label) => void (charset = label) },
    text: () => ({ stdout: decode(out, charset), stderr: decode(err) }),
  };
}

/** `kiwi exec --json`'s one document for a tool that ran: its exit code, its collected output, how long it ran. */
export function ranDocument(tool: string, exitCode: number, output: { stdout: string; stderr: string }, durationMs: number, refusals: readonly unknown[] = []): Record<string, unknown> {
  return { ok: exitCode === 0, tool, exitCode, ...output, durationMs, ...(refusals.length ? { refusals } : {}) };
}

/**
 * Sinks that write to kiwi's stdout / stderr. Each file is opened on its first chunk, while the
 * tool already runs, not before it starts: a warm call's set-up is what kiwi adds to it.
 */
export function terminalSinks(): OutputSinks {
  return { stdout: forward(1, () => Bun.stdout), stderr: forward(2, () => Bun.stderr) };
}

/** The descriptor the tool wrote to last and whether its last byte there was not a newline. */
let lastWrite: { fd: 1 | 2; open: boolean } | undefined;

/**
 * True once, when the tool's output left a line open where kiwi writes its own messages: on its
 * stderr, or on its stdout when stdout and stderr are one file (a terminal, `2>&1`). kiwi's warning
 * or error then starts on a new line instead of mid-line.
 */
export function takeOpenToolLine(): boolean {
  const last = lastWrite;
  lastWrite = undefined;
  if (!last?.open) return false;
  if (last.fd === 2) return true;
  try {
    const [out, err] = [fstatSync(1), fstatSync(2)];
    return out.dev === err.dev && out.ino === err.ino;
  } catch {
    return false;
  }
}

function forward(fd: 1 | 2, open: () => BunFile): (chunk: Uint8Array) => Promise<SinkResult> {
  let closed = false;
  let target: BunFile | undefined;
  return async (chunk) => {
    if (closed) return "closed";
    try {
      await Bun.write((target ??= open()), chunk);
      lastWrite = { fd, open: chunk[chunk.byteLength - 1] !== 0x0a };
    } catch {
      // EPIPE: the reader went away.
      closed = true;
      return "closed";
    }
  };
}
