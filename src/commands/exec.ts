// `kiwi exec <tool>`: flags -> one ops/ call (ops/exec-io.ts: verify the locked chain, validate the
// parameters, run the verified copy through its primitive, or with --dry-run only plan) -> ui/.
import type { ArgsDef } from "citty";
import type { Context } from "../context.ts";
import { VARIADIC, kebabCase } from "./_args.ts";
import { readAll, readFlagSources, stdinCarriesData } from "./_stdin.ts";
import { defineCommand } from "./_define.ts";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings/verdict.ts";
import { type ExecRequest, execTool } from "../ops/exec-io.ts";
import { resolveSandboxMode } from "../exec/sandbox-plan.ts";
import { reportRefusals } from "../ui/refusals.ts";
import { showJson, showNote } from "../ui/output.ts";
import { collectingSinks, ranDocument, terminalSinks } from "../ui/stream.ts";
import { contextFromArgs, mcpFlags, projectFlags, strictFlag } from "./_flags.ts";

const EXEC_ARGS = {
  tool: { type: "positional", ...VARIADIC, required: true, description: "Id of the tool to run", valueHint: "tool" },
  param: { type: "string", description: "A parameter as name=value, coerced to its declared type (repeat for more)", valueHint: "name=value" },
  params: { type: "string", description: "Parameters as a JSON object ('-' reads it from stdin)", valueHint: "json" },
  paramsFile: { type: "string", description: "Read parameters from a JSON file ('-' for stdin)", valueHint: "file" },
  dryRun: { type: "boolean", description: "Verify, validate and print the resolved plan as JSON; run nothing" },
  unlocked: { type: "boolean", description: "Development mode: validate everything but skip the lockfile comparison (or KIWI_UNLOCKED=1)" },
  sandbox: { type: "string", description: "auto (sandbox when possible), require or off; default KIWI_SANDBOX, else auto", valueHint: "mode" },
  allowAnyHost: { type: "boolean", description: "Run a tool whose net.outbound admits every host (*); private addresses stay refused" },
  ...mcpFlags,
  ...strictFlag,
  ...projectFlags,
} as const satisfies ArgsDef;

export default defineCommand({
  meta: { name: "exec", description: "Run a tool through its verified, locked executor chain" },
  args: EXEC_ARGS,
  async run({ args, rawArgs }) {
    assertNoStrayArguments(args.tool, rawArgs);
    const ctx = contextFromArgs(args);
    const unlocked = args.unlocked === true || ctx.env.KIWI_UNLOCKED === "1";
    const request: ExecRequest = {
      toolId: args.tool,
      unlocked,
      strict: args.strict === true,
      dryRun: args.dryRun === true,
      sandbox: resolveSandboxMode(args.sandbox, ctx.env),
      allowAnyHost: args.allowAnyHost === true,
      sources: readFlagSources({ params: args.params, paramsFile: args.paramsFile, pairs: paramPairs(rawArgs) }),
      readStdin: () => (stdinCarriesData() ? readAll(0, "stdin") : undefined),
    };
    // --json: the tool's output goes into the one document instead of straight to the terminal.
    const collected = args.json && !args.dryRun ? collectingSinks() : undefined;
    let outcome: Awaited<ReturnType<typeof execTool>>;
    try {
      outcome = await execTool(ctx, request, {
        warn: (warning) => showNote(`warning: ${warning}`),
        sinks: () => collected?.sinks ?? terminalSinks(),
        refused: reportRefusals,
        // The MCP prompt and renderers load only for an mcp_tool call.
        mcpGate: async () => (await import("./_mcp-exec.ts")).mcpGateHooks(ctx, args),
      });
    } catch (error) {
      await showBeforeError(error, ctx, args.json === true);
      throw error;
    }
    switch (outcome.kind) {
      case "plan": {
        const { planDocument } = await import("../ui/plan-render.ts");
        showJson(planDocument(outcome.shown, outcome.warnings));
        return 0;
      }
      case "mcp":
        return (await import("./_mcp-exec.ts")).showMcpCall(outcome.call, args);
      case "ran": {
        if (collected) {
          const { summarizeRefusals } = await import("../exec/net-proxy.ts");
          const refusals = summarizeRefusals(outcome.refusals);
          showJson(ranDocument(args.tool, outcome.exitCode, collected.text(), outcome.durationMs, refusals));
        }
        return outcome.exitCode;
      }
    }
  },
});

/**
 * What a refusal shows before its error: the findings that stopped an unlocked call's validation,
 * and the per-field changes of a refused MCP drift.
 */
async function showBeforeError(error: unknown, ctx: Context, json: boolean): Promise<void> {
  if (json || !(error instanceof KiwiError)) return;
  if (error.code === "E_CHECK_FAILED" && Array.isArray(error.details?.findings)) {
    const { renderFindingsHuman } = await import("../ui/findings-render.ts");
    const { findingsFromHere } = await import("./_relocate.ts");
    showNote(renderFindingsHuman(findingsFromHere(error.details.findings as Finding[], ctx.cwd), ctx));
  }
  if (error.code === "E_MCP_DRIFT") (await import("./_mcp-exec.ts")).showDriftDetails(error);
}

/**
 * Whether `arg` is a flag of exec that takes a value (the word after it is that value, not a stray
 * positional). A loop, not a Set built at load: building it cost every warm exec ~0.2 ms.
 */
function takesValue(arg: string): boolean {
  if (!arg.startsWith("--")) return false;
  for (const name in EXEC_ARGS) {
    if ((EXEC_ARGS as ArgsDef)[name]!.type === "string" && (arg === `--${name}` || arg === `--${kebabCase(name)}`)) return true;
  }
  return false;
}

/**
 * Parameters reach a tool only through --param/--params/--params-file/stdin: a bare `name=value`
 * after the tool id, or anything after `--`, would otherwise be silently dropped.
 */
export function assertNoStrayArguments(tool: string, rawArgs: readonly string[]): void {
  const separator = rawArgs.indexOf("--");
  const after = separator === -1 ? [] : rawArgs.slice(separator + 1);
  if (after.length > 0) {
    throw new KiwiError("E_USAGE", `kiwi exec passes no arguments after "--" to ${tool} (got ${after.map((a) => JSON.stringify(a)).join(" ")})`, {
      hint: "a tool takes its declared parameters: --param name=value, --params '{...}' or --params-file FILE",
    });
  }
  const before = separator === -1 ? rawArgs : rawArgs.slice(0, separator);
  const stray: string[] = [];
  let seenTool = false;
  for (let i = 0; i < before.length; i++) {
    const arg = before[i]!;
    if (arg.startsWith("-")) {
      if (takesValue(arg)) i++;
      continue;
    }
    if (!seenTool && arg === tool) seenTool = true;
    else stray.push(arg);
  }
  if (stray.length === 0) return;
  const first = stray[0]!;
  throw new KiwiError("E_USAGE", `unexpected argument ${JSON.stringify(first)} after the tool id ${tool}`, {
    hint: first.includes("=") ? `did you mean --param ${first}?` : "pass parameters with --param name=value, --params '{...}' or --params-file FILE",
  });
}

/** Every `--param` value in order (citty keeps only the last of a repeated flag). */
export function paramPairs(rawArgs: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (arg === "--") break;
    if (arg === "--param") {
      const value = rawArgs[i + 1];
      if (value === undefined) throw new KiwiError("E_USAGE", "--param needs a value: --param name=value", { hint: "write --param name=value" });
      out.push(value);
      i++;
    } else if (arg.startsWith("--param=")) out.push(arg.slice("--param=".length));
  }
  return out;
}

