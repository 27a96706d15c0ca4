// Runs a prepared plan through its primitive and turns the outcome into kiwi's exit code. Errors
// leave here with every secret value redacted.
import { KiwiError, toKiwiError } from "../errors.ts";
import type { PreparedExec } from "./prepare-io.ts";
import type { OutputSinks } from "./subprocess.ts";

/** Runs the plan; resolves to the exit code (the tool's own for a subprocess, 0 for HTTP success). */
export async function runPrepared(prepared: PreparedExec, sinks: OutputSinks): Promise<number> {
  const { plan } = prepared;
  try {
    if (plan.primitive === "subprocess") {
      const { runSubprocess, resolveOutcome } = await import("./subprocess.ts");
      return resolveOutcome(plan, await runSubprocess(plan, sinks));
    }
    const { runHttp } = await import("./http.ts");
    const outcome = await runHttp(plan, { redact: prepared.redact, checkUrl: prepared.checkUrl });
    if (outcome.output.byteLength > 0) await sinks.stdout(outcome.output);
    return 0;
  } catch (error) {
    throw redactError(toKiwiError(error), prepared.redact);
  } finally {
    prepared.cleanup();
  }
}

/** The same error with secret values removed from its message, hint and details. */
export function redactError(error: KiwiError, redact: (text: string) => string): KiwiError {
  const details = error.details === undefined ? undefined : (JSON.parse(redact(JSON.stringify(error.details))) as Record<string, unknown>);
  return new KiwiError(error.code, redact(error.message), { hint: error.hint === undefined ? undefined : redact(error.hint), details, exitCode: error.exitCode, cause: error.cause });
}
