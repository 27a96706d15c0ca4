// Renders a KiwiError once, for humans (stderr) or as the single JSON document (--json).
import type { Context } from "../context.ts";
import type { KiwiError } from "../errors.ts";
import { colors, showJson, showNote } from "./output.ts";

/** Human form: `error[E_CODE]: message` then an indented hint. */
export function renderError(error: KiwiError, ctx: Pick<Context, "color">, debug = false): string {
  const c = colors(ctx);
  const lines = [`${c.red(c.bold(`error[${error.code}]`))}: ${error.message}`];
  if (error.hint) lines.push(`  ${c.dim("hint:")} ${error.hint}`);
  if (debug && error.cause instanceof Error && error.cause.stack) lines.push(c.dim(error.cause.stack));
  return `${lines.join("\n")}\n`;
}

/** JSON form: `{ ok: false, error: { code, message, hint, exitCode, details } }`. */
export function errorDocument(error: KiwiError): Record<string, unknown> {
  return {
    ok: false,
    error: {
      code: error.code,
      message: error.message,
      ...(error.hint ? { hint: error.hint } : {}),
      exitCode: error.exitCode,
      ...(error.details ? { details: error.details } : {}),
    },
  };
}

/** Shows a failed command's error (and, with --json, its document); returns the exit code. */
export function showError(error: KiwiError, ctx: Pick<Context, "color" | "env">, json: boolean): number {
  if (json) showJson(errorDocument(error));
  showNote(renderError(error, ctx, ctx.env.KIWI_DEBUG === "1"));
  return error.exitCode;
}
