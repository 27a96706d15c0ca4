// Runs a prepared plan through its primitive and turns the outcome into kiwi's exit code. Errors
// leave here with every secret value redacted.
import { KiwiError, toKiwiError } from "../errors.ts";
import type { PreparedExec } from "./prepared.ts";
// The subprocess primitive is imported, not loaded on first use: most calls run one, and a dynamic
// import of its chunk cost a warm exec ~0.02 ms more than loading it with exec.
import { type OutputSinks, resolveOutcome, runSubprocess } from "./subprocess.ts";
import type { HttpProxy } from "./http.ts";

/** What a run needs of a prepared call. */
export type Runnable = Pick<PreparedExec, "plan" | "redact" | "checkUrl" | "refusals" | "cleanup" | "netPolicy">;

/** Runs the plan; resolves to the exit code (the tool's own for a subprocess, 0 for HTTP success). */
export async function runPrepared(prepared: Runnable, sinks: OutputSinks): Promise<number> {
  const { plan } = prepared;
  try {
    if (plan.primitive === "subprocess") {
      if (plan.subprocess.wasm) await (await import("../wasm/prepare-io.ts")).ensureInstrumented(plan.subprocess.wasm, plan.tool);
      return await withPlanProxy(prepared, async () => resolveOutcome(plan, await runSubprocess(plan, sinks)));
    }
    const { runHttp } = await import("./http.ts");
    const outcome = await withHttpProxy(prepared, (proxy) => runHttp(plan, { redact: prepared.redact, checkUrl: prepared.checkUrl, ...(proxy ? { proxy } : {}) }));
    if (outcome.charset) sinks.charset?.(outcome.charset);
    if (outcome.output.byteLength > 0) await sinks.stdout(outcome.output);
    return 0;
  } catch (error) {
    throw redactError(toKiwiError(error), prepared.redact);
  } finally {
    prepared.cleanup();
  }
}

/**
 * Runs `fn` while kiwi's filtering proxy serves a host-filtered subprocess plan (a sandbox whose
 * only way out is the proxy); what the proxy refused is added to `prepared.refusals`.
 */
export async function withPlanProxy<T>(prepared: Pick<PreparedExec, "plan" | "netPolicy" | "refusals">, fn: () => Promise<T>): Promise<T> {
  const spec = prepared.plan.primitive === "subprocess" ? prepared.plan.subprocess.proxy : undefined;
  if (!spec || !prepared.netPolicy) return fn();
  const { startNetProxy } = await import("./net-proxy-io.ts");
  const proxy = await startNetProxy({ path: spec.socket, ...(spec.uid !== undefined ? { uid: spec.uid } : {}) }, prepared.netPolicy);
  try {
    return await fn();
  } finally {
    await proxy.close();
    prepared.refusals.push(...proxy.refusals());
  }
}

/**
 * Runs an http_client call (or an HTTP MCP server's session) with kiwi's proxy on 127.0.0.1 when
 * the host policy is enforced, so fetch connects to the address the policy checked (DNS pinning);
 * without a policy, directly.
 */
export async function withHttpProxy<T>(prepared: Pick<PreparedExec, "netPolicy">, fn: (proxy?: HttpProxy) => Promise<T>): Promise<T> {
  if (!prepared.netPolicy) return fn();
  const { startNetProxy } = await import("./net-proxy-io.ts");
  const proxy = await startNetProxy({ loopback: true }, prepared.netPolicy);
  try {
    return await fn({ url: proxy.address, refusals: proxy.refusals, failures: proxy.failures });
  } finally {
    await proxy.close();
  }
}

/**
 * The same error with secret values removed from its message, hint and details. Details are
 * redacted value by value, not as JSON text: a secret ending in `\` or holding a newline, matched in
 * its JSON escape, would have left text JSON.parse cannot read, and a short one would hit keys.
 */
export function redactError(error: KiwiError, redact: (text: string) => string): KiwiError {
  const details = error.details === undefined ? undefined : (redactValue(error.details, redact) as Record<string, unknown>);
  return new KiwiError(error.code, redact(error.message), { hint: error.hint === undefined ? undefined : redact(error.hint), details, exitCode: error.exitCode, cause: error.cause });
}

function redactValue(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redact));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: redactValue(v, redact), enumerable: true, writable: true, configurable: true });
  return out;
}
