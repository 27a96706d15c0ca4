// Wraps a subprocess plan in its launcher: bubblewrap and/or prlimit from sandbox-io.ts, chosen by
// --sandbox / KIWI_SANDBOX. The plan as run and the plan as shown get the same launch.
import { accessSync, constants, statSync } from "node:fs";
import { KiwiError } from "../errors.ts";
import type { Capability, Limits } from "../manifest/model.ts";
import { mergeLimits } from "./limits.ts";
import type { LinkInput, SubprocessPlan } from "./plan.ts";
import { prepareSandbox } from "./sandbox-io.ts";
import type { SandboxMode } from "./sandbox-plan.ts";

export interface LaunchContext {
  mode: SandboxMode;
  /** kiwi's environment (PATH for finding bwrap, prlimit, setpriv). */
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  projectRoot: string;
  /** Where the bubblewrap probe's verdict is remembered across runs (omit to probe every process). */
  cacheDir?: string;
  /** A dry run plans the launch but creates nothing (no missing fs.write folder). */
  dryRun?: boolean;
}

/** The chain's declared capabilities and limits, tool first. */
export function chainDeclarations(links: readonly { tool: { capabilities?: Capability[]; limits: Limits } }[]): { capabilities: Capability[]; limits: Limits } {
  return {
    capabilities: links.flatMap((l) => l.tool.capabilities ?? []),
    limits: mergeLimits([...links].reverse().map((l) => l.tool.limits)),
  };
}

/**
 * Sets `launch`, the launch environment and the sandbox account on the plan (and on its shown
 * twin, whose environment has secrets as ***). Returns the launcher's warnings for the caller to print.
 */
export function applyLauncher(plans: SubprocessPlan[], links: readonly (LinkInput & { tool: { capabilities?: Capability[] } })[], ctx: LaunchContext): string[] {
  const { capabilities, limits } = chainDeclarations(links);
  const runDirs = links.map((l) => l.runDir).filter((d): d is string => d !== null);
  let warnings: string[] = [];
  for (const plan of plans) {
    const spec = plan.subprocess;
    assertStartable(plan.tool, spec.argv[0]!);
    const sandbox = prepareSandbox(
      { toolId: plan.tool, argv: spec.argv, runDirs, cwd: spec.cwd, env: spec.env, capabilities, limits, home: ctx.home, projectRoot: ctx.projectRoot },
      ctx.mode,
      ctx.env,
      ctx.cacheDir,
      { createWritable: ctx.dryRun !== true },
    );
    spec.launch = sandbox.argv;
    spec.env = sandbox.env;
    plan.sandbox = { mode: sandbox.mode, active: sandbox.active, network: sandbox.network, enforcement: sandbox.enforcement };
    if (warnings.length === 0) warnings = sandbox.warnings;
  }
  return warnings;
}

/**
 * The program must be an executable file before any launcher wraps it: behind prlimit or bwrap a
 * missing program would surface as the launcher's own exit code instead of a clear refusal.
 */
function assertStartable(toolId: string, program: string): void {
  let problem: string | undefined;
  try {
    if (!statSync(program).isFile()) problem = "it is not a file";
    else accessSync(program, constants.X_OK);
  } catch (error) {
    problem = (error as NodeJS.ErrnoException).code === "EACCES" ? "it is not executable" : "it does not exist";
  }
  if (problem === undefined) return;
  throw new KiwiError("E_EXEC_FAILED", `cannot start ${program} for ${toolId}: ${problem}`, {
    hint: problem === "it is not executable" ? 'set the file\'s execute bit in the tool and run "kiwi lock"' : "check the command and the entry point of the tool's chain",
    details: { tool: toolId, program },
  });
}
