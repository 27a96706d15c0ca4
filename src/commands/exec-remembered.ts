// `kiwi exec <tool>` from its remembered launch (ops/exec-remembered-io.ts), entered from bin.ts
// before the CLI loads: an agent calls the same tool again and again, and loading the CLI, the
// chain's verification and the planner was most of what kiwi added to each warm call. Only the
// plainest calls come here: the tool id with --sandbox, --param, --params and --json; any other
// flag or form (--dry-run, --params -, stray words, --help) goes to the CLI, which checks it.
import { createContext } from "../context.ts";
import { toKiwiError } from "../errors.ts";
import { type RememberedCall, execRemembered } from "../ops/exec-remembered-io.ts";
import { resolveSandboxMode } from "../exec/sandbox-plan.ts";
import { collectingSinks, ranDocument, terminalSinks } from "../ui/stream.ts";
import { readAll, stdinCarriesData } from "./_stdin.ts";

/** The call `args` (after `exec`) makes, when it is one a replay takes; undefined sends it to the CLI. */
export function rememberedCall(args: readonly string[]): { toolId: string; sandbox?: string; json: boolean; sources: RememberedCall["sources"] } | undefined {
  let toolId: string | undefined;
  let asJson = false;
  let sandbox: string | undefined;
  let json: string | undefined;
  const pairs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith("-")) {
      if (toolId !== undefined) return undefined;
      toolId = arg;
      continue;
    }
    if (arg === "--json") {
      asJson = true;
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (name !== "--sandbox" && name !== "--param" && name !== "--params") return undefined;
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    // An empty value, one the CLI's parser could read as a flag, or stdin's "-", is the CLI's to judge.
    if (value === undefined || value === "" || value.startsWith("-")) return undefined;
    if (name === "--param") pairs.push(value);
    else if (name === "--sandbox") {
      if (sandbox !== undefined) return undefined;
      sandbox = value;
    } else {
      if (json !== undefined) return undefined;
      json = value;
    }
  }
  if (toolId === undefined) return undefined;
  return { toolId, ...(sandbox !== undefined ? { sandbox } : {}), json: asJson, sources: { ...(json !== undefined ? { json } : {}), pairs } };
}

/** Runs the call from its remembered launch; the exit code, or undefined to take the long way. */
export async function runRemembered(args: readonly string[]): Promise<number | undefined> {
  const call = rememberedCall(args);
  if (!call) return undefined;
  const ctx = createContext();
  // Development mode never records a launch; an unknown mode is the CLI's error to report.
  if (ctx.env.KIWI_UNLOCKED === "1") return undefined;
  let sandbox: RememberedCall["sandbox"];
  try {
    sandbox = resolveSandboxMode(call.sandbox, ctx.env);
  } catch {
    return undefined;
  }
  // --json: the tool's output goes into the one document, as `kiwi exec --json` gives it.
  const collected = call.json ? collectingSinks() : undefined;
  // The renderers load only for a warning, an error or --json: a plain replayed call shows none.
  const output = () => require("../ui/output.ts") as typeof import("../ui/output.ts");
  try {
    const ran = await execRemembered(ctx, { toolId: call.toolId, sandbox, sources: call.sources, readStdin: () => (stdinCarriesData() ? readAll(0, "stdin") : undefined) }, {
      warn: (warning) => output().showNote(`warning: ${warning}`),
      sinks: () => collected?.sinks ?? terminalSinks(),
    });
    if (ran && collected) output().showJson(ranDocument(call.toolId, ran.exitCode, collected.text(), ran.durationMs));
    return ran?.exitCode;
  } catch (thrown) {
    return (require("../ui/error.ts") as typeof import("../ui/error.ts")).showError(toKiwiError(thrown), ctx, call.json);
  }
}
