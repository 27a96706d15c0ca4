// A warm `kiwi exec <tool>` replayed from its launch memo (exec/launch-memo-io.ts): prove every
// input the memo stands on, gather the machine's facts again and plan the launch with them, then
// validate this call's parameters and run. Undefined when the memo does not hold; the call then
// goes the long way (ops/exec-io.ts), which nothing here has changed or read (stdin included).
// Once the memo holds, the call is this one: what fails is reported as the long way reports it.
import type { Context } from "../context.ts";
import { resolveCallParams, withStdinSource } from "../exec/call-params.ts";
import { type RememberedLaunch, recallLaunch } from "../exec/launch-memo-io.ts";
import { programFacts, settleLaunch } from "../exec/launch-io.ts";
import { type LaunchFacts, type LaunchNotes, launched } from "../exec/launch-plan.ts";
import type { ParamSources } from "../exec/params.ts";
import type { SubprocessPlan } from "../exec/plan.ts";
import { type Runnable, runPrepared } from "../exec/run-io.ts";
import { probeFor } from "../exec/sandbox-io.ts";
import type { SandboxMode } from "../exec/sandbox-plan.ts";
import type { OutputSinks } from "../exec/subprocess.ts";
import { makeRedactor } from "../exec/template.ts";

/** The call as given on the command line (only the forms a replay takes: commands/exec-remembered.ts). */
export interface RememberedCall {
  toolId: string;
  sandbox: SandboxMode;
  /**
   * The sources the call's flags give, read (a --params-file, stdin for `--params -`) only once the
   * memo holds: a call that goes the long way must find them unread.
   */
  readSources: () => ParamSources;
  /** Stdin's text when it carries data, read only when the call takes its parameters from it. */
  readStdin: () => string | undefined;
}

export interface RememberedHooks {
  warn: (message: string) => void;
  sinks: () => OutputSinks;
}

/** A tool that ran: its exit code, and how long it ran (as `kiwi exec --json` reports it). */
export interface RememberedRun {
  exitCode: number;
  durationMs: number;
}

/** Runs the call from its remembered launch; undefined when the memo does not hold. */
export async function execRemembered(ctx: Context, call: RememberedCall, hooks: RememberedHooks): Promise<RememberedRun | undefined> {
  const runnable = prepareRemembered(ctx, call, hooks);
  if (!runnable) return undefined;
  const started = performance.now();
  const exitCode = await runPrepared(runnable, hooks.sinks());
  return { exitCode, durationMs: Math.round(performance.now() - started) };
}

/** The call ready to run: planned, its parameters validated, its warnings shown; undefined when the memo does not hold. */
function prepareRemembered(ctx: Context, call: RememberedCall, hooks: RememberedHooks): Runnable | undefined {
  const planned = planRemembered(ctx, call);
  if (!planned) return undefined;
  const { memo, plan, facts, notes } = planned;
  const sources = withStdinSource(call.readSources(), memo.stdin, call.readStdin);
  const params = resolveCallParams({ ...memo.tool, locate: () => undefined }, sources, () => ({ ok: true, schema: memo.schema, findings: [] }));
  const launchCtx = { mode: call.sandbox, env: ctx.env, home: ctx.home, projectRoot: memo.root, cacheDir: ctx.cacheDir };
  const settled = settleLaunch(plan, facts, notes, () => {}, launchCtx);
  for (const warning of settled.warnings) hooks.warn(warning);
  // A subprocess plan: no URL to check; nothing filtered (a filtered launch is never remembered).
  return { plan: { ...plan, params }, redact: makeRedactor(plan.secrets.map((n) => ctx.env[n] ?? "")), checkUrl: async () => {}, refusals: [], cleanup: () => {} };
}

/**
 * The remembered launch planned with this machine's facts, as gatherLaunchFacts and buildPlans
 * plan it; undefined when the memo does not hold, a program cannot start (the long way says why)
 * or planning fails.
 */
function planRemembered(ctx: Context, call: RememberedCall): { memo: RememberedLaunch; plan: SubprocessPlan; facts: LaunchFacts; notes: LaunchNotes } | undefined {
  try {
    const memo = recallLaunch(ctx, call.toolId, call.sandbox);
    if (!memo) return undefined;
    const programs = programFacts([memo.bare], ctx.env);
    if (Object.values(programs).some((p) => p.problem !== undefined)) return undefined;
    const facts: LaunchFacts = { ...memo.facts, mode: call.sandbox, probe: probeFor(call.sandbox, ctx.env, ctx.cacheDir), programs };
    const notes: LaunchNotes = { warnings: [], writable: [] };
    return { memo, plan: launched(memo.bare, facts, notes), facts, notes };
  } catch {
    return undefined;
  }
}
