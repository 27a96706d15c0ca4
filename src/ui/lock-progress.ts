// Progress for long hashing and storing runs: one self-rewriting line on stderr, only on a
// terminal (never in pipes, CI logs or --json runs), throttled so drawing costs nothing.
import type { Context } from "../context.ts";

export interface Progress {
  update(label: string, done: number, total: number): void;
  /** Clears the line. */
  end(): void;
}

const QUIET: Progress = { update() {}, end() {} };

/** A progress line when stderr is a terminal, else a no-op. */
export function createProgress(ctx: Pick<Context, "interactive">, enabled = true): Progress {
  if (!ctx.interactive || !enabled) return QUIET;
  let last = 0;
  let drawn = false;
  return {
    update(label, done, total) {
      const now = performance.now();
      if (done !== total && now - last < 80) return;
      last = now;
      drawn = true;
      const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
      process.stderr.write(`\r\x1b[2K${label} ${done}/${total} files (${pct}%)`);
    },
    end() {
      if (drawn) process.stderr.write("\r\x1b[2K");
      drawn = false;
    },
  };
}
