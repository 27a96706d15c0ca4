// Forwards a running tool's output to kiwi's own stdout and stderr as it arrives, with
// backpressure. A closed reader (`kiwi exec … | head`) is passed on to the tool: the sink answers
// "closed" and the subprocess primitive stops reading that stream, so the tool's next write fails.
// Bun.write on Bun.stdout/Bun.stderr rather than process.stdout: the Node stream objects cost
// ~9 ms to create, a large share of a warm kiwi exec.
import type { BunFile } from "bun";
import type { OutputSinks, SinkResult } from "../exec/subprocess.ts";

/**
 * Sinks that keep a tool's output for one JSON document (`kiwi exec --json`); the subprocess
 * primitive already caps what a tool may write (limits.output_bytes).
 */
export function collectingSinks(): { sinks: OutputSinks; text: () => { stdout: string; stderr: string } } {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const decode = (chunks: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(chunks));
  return {
    sinks: { stdout: (chunk) => void out.push(chunk.slice()), stderr: (chunk) => void err.push(chunk.slice()) },
    text: () => ({ stdout: decode(out), stderr: decode(err) }),
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
  return { stdout: forward(() => Bun.stdout), stderr: forward(() => Bun.stderr) };
}

function forward(open: () => BunFile): (chunk: Uint8Array) => Promise<SinkResult> {
  let closed = false;
  let target: BunFile | undefined;
  return async (chunk) => {
    if (closed) return "closed";
    try {
      await Bun.write((target ??= open()), chunk);
    } catch {
      // EPIPE: the reader went away.
      closed = true;
      return "closed";
    }
  };
}
