// Forwards a running tool's output to kiwi's own stdout and stderr as it arrives, with
// backpressure; a closed reader (`kiwi exec … | head`) stops the forwarding, not kiwi.
import type { OutputSinks } from "../exec/subprocess.ts";

/** Sinks that write to process.stdout / process.stderr. */
export function terminalSinks(): OutputSinks {
  return { stdout: forward(process.stdout), stderr: forward(process.stderr) };
}

function forward(stream: NodeJS.WriteStream): (chunk: Uint8Array) => void | Promise<void> {
  let closed = false;
  stream.on("error", () => {
    closed = true;
  });
  return (chunk) => {
    if (closed) return;
    if (stream.write(chunk)) return;
    return new Promise<void>((resolve) => {
      const done = () => {
        stream.off("drain", done);
        stream.off("error", done);
        resolve();
      };
      stream.once("drain", done);
      stream.once("error", done);
    });
  };
}
