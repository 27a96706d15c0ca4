// The approval question of `--mcp-mode approval` and `kiwi mcp approve`: the diff and the scan
// on stderr, then one y/N answer read from the terminal. Only ever called on a TTY.
import { createInterface } from "node:readline";
import type { Context } from "../context.ts";
import type { AskInput } from "../ops/mcp-gate-io.ts";
import { renderDiff, renderFindings } from "./mcp-render.ts";

/**
 * Shows what changed and asks whether to (re-)pin; anything but y/yes is no. Ctrl-C is not an
 * answer: readline holds the terminal in raw mode, so the keypress reaches it instead of becoming
 * a signal; it is raised as the SIGINT it would have been (the caller's interrupt handling then
 * ends the command as E_INTERRUPTED) and the question is left unanswered.
 */
export async function askApproval(question: AskInput, ctx: Pick<Context, "color">): Promise<boolean> {
  if (question.diff) process.stderr.write(renderDiff(question.server, question.diff, ctx));
  else process.stderr.write(`MCP server "${question.server}" has no pin yet.\n`);
  process.stderr.write(renderFindings(question.scan, ctx));
  const verb = question.reason === "unpinned" ? "Pin" : "Approve and re-pin";
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    const answer = await new Promise<string>((resolve) => {
      let interrupted = false;
      rl.question(`${verb} MCP server "${question.server}"? [y/N] `, resolve);
      rl.once("close", () => {
        if (!interrupted) resolve("");
      });
      rl.once("SIGINT", () => {
        interrupted = true;
        rl.close();
        process.stderr.write("\n");
        process.kill(process.pid, "SIGINT");
      });
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** True when a question can be asked: stdin and stderr are terminals. */
export function canAsk(ctx: Pick<Context, "interactive">): boolean {
  return ctx.interactive && Boolean(process.stdin.isTTY);
}
