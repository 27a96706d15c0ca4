// Wraps a subprocess plan, while plan.ts builds it, in its launcher: bubblewrap and/or prlimit from
// sandbox-plan.ts, a WebAssembly module on kiwi's WASI host, kiwi's proxy for host filtering. Pure:
// what the machine says (the sandbox probe, the program's real path, the proxy's socket folder, the
// module's digest) was gathered beforehand by launch-io.ts and comes in as LaunchFacts.
import { KiwiError } from "../errors.ts";
import type { Capability, Limits } from "../manifest/model.ts";
import type { WasmLaunch } from "../wasm/prepare-io.ts";
import { WASI_COMMAND } from "../wasm/wasi-command.ts";
import type { HostPolicy } from "./net-policy.ts";
import type { CommandLink } from "./sandbox-mounts.ts";
import { type ProxyLaunch, type SandboxMode, type SandboxProbe, declaredWritable, planSandbox } from "./sandbox-plan.ts";

/** What the file system says about a program a launch starts, by its path as planned. */
export interface ProgramFacts {
  /** The path the launcher starts (argv[0] resolved against the tool's PATH and cwd). */
  resolved: string;
  /** `resolved` with symlinks resolved, to find the runtime's own prefix (a pyenv, a venv). */
  realPath?: string;
  /** The symbolic links `resolved` goes through, which the sandbox makes too (sandbox-io.ts commandLinks). */
  links?: CommandLink[];
  /** Why it cannot start ("it does not exist", …), when it cannot. */
  problem?: string;
}

/** Everything the launch of one call needs from the machine, gathered before the plan is built. */
export interface LaunchFacts {
  mode: SandboxMode;
  /** The bubblewrap probe (or, with the sandbox off, just where prlimit is). */
  probe: SandboxProbe;
  home: string;
  projectRoot: string;
  /** The chain's declared capabilities and merged limits. */
  capabilities: Capability[];
  limits: Limits;
  /** The tool's read-only run directories. */
  runDirs: string[];
  /** A link of the chain has installed npm packages. */
  npmPackages?: boolean;
  /** The declared hosts, when the tool declares net.outbound. */
  policy?: HostPolicy;
  /** Host filtering: the bridge kiwi's proxy is reached through, and the proxy's socket. */
  proxy?: { launch: ProxyLaunch; socket: string };
  /** A WebAssembly run: the host's argv up to the module's own arguments, and the rest of its launch. */
  wasm?: Omit<WasmLaunch, "argv"> & { prefix: string[] };
  /** Keyed by the program path as the plan names it (the WASI host's for a module). */
  programs: Readonly<Record<string, ProgramFacts>>;
}

/** What the launch leaves to the caller: warnings to print and fs.write folders to create. */
export interface LaunchNotes {
  warnings: string[];
  /** Declared fs.write folders the sandbox mounts writable; the caller creates the missing ones. */
  writable: string[];
}

/** Memory the WASI host process needs besides the module's linear memory (JS heap, compiled code). */
const WASI_HOST_MB = 512;

/** The sandbox account shown in a plan. */
export interface SandboxSummary {
  mode: string;
  active: boolean;
  network: string;
  /** The only hosts a host-filtered tool may reach (network "filtered"). */
  hosts?: string[];
  enforcement: { area: string; enforced: boolean; detail: string }[];
}

/** A subprocess's launch: what is spawned, in which environment, and the sandbox's account of it. */
export interface Launch {
  launch: string[];
  env: Record<string, string>;
  /** Host files passed to the launcher as descriptors 3, 4, … (sandbox-types.ts SandboxPlan.files). */
  files: string[];
  sandbox: SandboxSummary;
  /** Host filtering: kiwi's proxy listens on this Unix socket while the tool runs. */
  proxy?: { socket: string; uid?: number };
  wasm?: WasmLaunch["run"];
  notes: LaunchNotes;
}

/**
 * The launch of the subprocess `spec` of `toolId` (plan.ts calls it for the plan as run and as
 * shown alike, while it builds them).
 */
export function planLaunch(toolId: string, spec: { argv: readonly string[]; cwd: string; env: Record<string, string> }, facts: LaunchFacts): Launch {
  const wasm = spec.argv[0] === WASI_COMMAND ? facts.wasm : undefined;
  if (spec.argv[0] === WASI_COMMAND && !wasm) throw new KiwiError("E_INTERNAL", `${toolId}: a WebAssembly launch was planned without its module`);
  const argv = wasm ? [...wasm.prefix, ...spec.argv.slice(2)] : spec.argv;
  const program = facts.programs[argv[0]!];
  if (!program) throw new KiwiError("E_INTERNAL", `${toolId}: nothing is known about the program ${argv[0]}`);
  assertStartable(toolId, argv[0]!, program.problem);
  const sandbox = planSandbox(
    {
      toolId,
      argv: [program.resolved, ...argv.slice(1)],
      ...(program.realPath !== undefined ? { commandRealPath: program.realPath } : {}),
      ...(program.links !== undefined ? { commandLinks: program.links } : {}),
      runDirs: facts.runDirs,
      ...(facts.npmPackages ? { npmPackages: true } : {}),
      cwd: spec.cwd,
      env: spec.env,
      capabilities: facts.capabilities,
      // The host process holds the module's linear memory plus its own heap and compiled code.
      limits: wasm ? { ...facts.limits, memoryMb: wasm.limits.memoryMb + WASI_HOST_MB } : facts.limits,
      home: facts.home,
      projectRoot: facts.projectRoot,
      ...(facts.proxy ? { proxy: facts.proxy.launch } : {}),
      ...(wasm ? { readOnly: wasm.readOnly, wasm: { ...wasm.limits, dirs: wasm.dirs } } : {}),
    },
    facts.probe,
    facts.mode,
  );
  const summary: SandboxSummary = { mode: sandbox.mode, active: sandbox.active, network: sandbox.network, enforcement: sandbox.enforcement };
  const filtered = sandbox.network === "filtered" && facts.proxy && facts.policy ? { proxy: facts.proxy, policy: facts.policy } : undefined;
  if (filtered) summary.hosts = filtered.policy.rules.map((r) => r.raw);
  return {
    launch: sandbox.argv,
    env: sandbox.env,
    files: sandbox.files,
    sandbox: summary,
    ...(filtered ? { proxy: { socket: filtered.proxy.socket, ...(sandbox.uid !== undefined ? { uid: sandbox.uid } : {}) } } : {}),
    ...(wasm ? { wasm: wasm.run } : {}),
    notes: { warnings: sandbox.warnings, writable: sandbox.active ? declaredWritable(sandbox) : [] },
  };
}

/**
 * The subprocess plan wrapped in its launcher; its warnings and folders to create go to `notes`.
 * Here, not in plan.ts, so a remembered launch (ops/exec-remembered-io.ts) plans its launcher
 * without loading the rest of the planner (HTTP requests, templates, config merging).
 */
export function launched<P extends LaunchablePlan>(plan: P, facts: LaunchFacts, notes: LaunchNotes | undefined): P {
  const spec = plan.subprocess;
  const l = planLaunch(plan.tool, spec, facts);
  if (notes) Object.assign(notes, l.notes);
  return { ...plan, subprocess: { ...spec, launch: l.launch, env: l.env, ...(l.files.length > 0 ? { files: l.files } : {}), ...(l.wasm ? { wasm: l.wasm } : {}), ...(l.proxy ? { proxy: l.proxy } : {}) }, sandbox: l.sandbox };
}

/** What launched() reads and sets of a subprocess plan (plan.ts's SubprocessPlan, which imports this module). */
interface LaunchablePlan {
  tool: string;
  subprocess: { argv: string[]; cwd: string; env: Record<string, string>; launch: string[]; files?: string[]; wasm?: Launch["wasm"]; proxy?: Launch["proxy"] };
  sandbox?: SandboxSummary;
}

/**
 * The program must be an executable file before any launcher wraps it: behind prlimit or bwrap a
 * missing program would surface as the launcher's own exit code instead of a clear refusal.
 */
function assertStartable(toolId: string, program: string, problem: string | undefined): void {
  if (problem === undefined) return;
  throw new KiwiError("E_EXEC_FAILED", `cannot start ${program} for ${toolId}: ${problem}`, {
    hint: problem === "it is not executable" ? 'set the file\'s execute bit in the tool and run "kiwi lock"' : "check the command and the entry point of the tool's chain",
    details: { tool: toolId, program },
  });
}
