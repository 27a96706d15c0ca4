// `kiwi exec <tool>` from its remembered launch (ops/exec-remembered-io.ts), entered from bin.ts
// before the CLI loads: an agent calls the same tool again and again, and loading the CLI, the
// chain's verification and the planner was most of what kiwi added to each warm call. Only the
// plain calls come here: the tool id with --sandbox, --cwd, --json and the parameter flags
// (--param, --params, --params-file, '-' for stdin); any other flag or form (--dry-run, stray
// words, --help) goes to the CLI, which checks it.
import { createContext } from "../context.ts";
import { toKiwiError } from "../errors.ts";
import { type RememberedCall, execRemembered } from "../ops/exec-remembered-io.ts";
import { resolveSandboxMode } from "../exec/sandbox-plan.ts";
import { collectingSinks, ranDocument, terminalSinks } from "../ui/stream.ts";
import { type ParamFlags, readAll, readFlagSources, stdinCarriesData } from "./_stdin.ts";

/** The flags that take a value in a replayed call (each at most once, but --param). */
const VALUE_FLAGS = ["--sandbox", "--cwd", "--param", "--params", "--params-file"] as const;

/** The call `args` (after `exec`) makes, when it is one a replay takes; undefined sends it to the CLI. */
export function rememberedCall(args: readonly string[]): { toolId: string; sandbox?: string; cwd?: string; json: boolean; flags: ParamFlags } | undefined {
  let toolId: string | undefined;
  let asJson = false;
  const once: { "--sandbox"?: string; "--cwd"?: string; "--params"?: string; "--params-file"?: string } = {};
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
    const name = (eq === -1 ? arg : arg.slice(0, eq)) as (typeof VALUE_FLAGS)[number];
    if (!VALUE_FLAGS.includes(name)) return undefined;
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    // An empty value, or one the CLI's parser could read as a flag, is the CLI's to judge; "-"
    // (stdin) is a value of --params and --params-file only.
    if (value === undefined || value === "" || (value.startsWith("-") && !(value === "-" && (name === "--params" || name === "--params-file")))) return undefined;
    if (name === "--param") pairs.push(value);
    else if (once[name] !== undefined) return undefined;
    else once[name] = value;
  }
  if (toolId === undefined) return undefined;
  return { toolId, sandbox: once["--sandbox"], cwd: once["--cwd"], json: asJson, flags: { params: once["--params"], paramsFile: once["--params-file"], pairs } };
}

/** Runs the call from its remembered launch; the exit code, or undefined to take the long way. */
export async function runRemembered(args: readonly string[]): Promise<number | undefined> {
  const call = rememberedCall(args);
  if (!call) return undefined;
  const ctx = createContext({ cwd: call.cwd });
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
    const ran = await execRemembered(ctx, { toolId: call.toolId, sandbox, readSources: () => readFlagSources(call.flags), readStdin: () => (stdinCarriesData() ? readAll(0, "stdin") : undefined) }, {
      warn: (warning) => output().showNote(`warning: ${warning}`),
      sinks: () => collected?.sinks ?? terminalSinks(),
    });
    if (ran && collected) output().showJson(ranDocument(call.toolId, ran.exitCode, collected.text(), ran.durationMs));
    return ran?.exitCode;
  } catch (thrown) {
    return (require("../ui/error.ts") as typeof import("../ui/error.ts")).showError(toKiwiError(thrown), ctx, call.json);
  }
}
