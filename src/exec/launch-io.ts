// The I/O around a subprocess plan's launcher (chosen by --sandbox / KIWI_SANDBOX): gathers what
// launch-plan.ts needs from the machine before the plan is built, and afterwards does what the
// built launch asks for (create declared fs.write folders, keep or drop the proxy's socket folder).
import { accessSync, constants, statSync } from "node:fs";
import { KiwiError } from "../errors.ts";
import type { Capability, Limits } from "../manifest/model.ts";
import { mergeLimits } from "../manifest/run-limits.ts";
import type { LinkInput, SubprocessPlan } from "./plan.ts";
import { isAbsolute, join } from "node:path";
import { isCompiled } from "../self.ts";
import type { HostPolicy } from "./net-policy.ts";
import { WASI_COMMAND } from "../wasm/wasi-command.ts";
import { createWritableFolders, findCommand, firstUnavailableWarning, probeFor, resolveCommand } from "./sandbox-io.ts";
import type { ProxyLaunch, SandboxMode } from "./sandbox-plan.ts";
import type { LaunchFacts, LaunchNotes, ProgramFacts } from "./launch-plan.ts";

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
  /**
   * A dry run builds no run directory: where a file the plan names in one was verified from (a
   * WebAssembly module is read for its digest and checks).
   */
  sourceOf?: (planned: string) => string | undefined;
  /** Run a tool whose declared hosts admit every host (`*`, a /0 range): --allow-any-host. */
  allowAnyHost?: boolean;
  /** A link of the chain has installed npm packages (what node may resolve besides them is in the account). */
  npmPackages?: boolean;
}

/** What the launch left to do, done: warnings, and the host filter it set up. */
export interface Launched {
  warnings: string[];
  /** Set when the tool's only way out is kiwi's proxy: the policy it enforces and where it listens. */
  proxy?: { policy: HostPolicy; socket: string };
  /** Removes what the launch created (the proxy's socket folder). */
  cleanup: () => void;
}

/** The chain's declared capabilities and limits, tool first. */
export function chainDeclarations(links: readonly { tool: { capabilities?: Capability[]; limits: Limits } }[]): { capabilities: Capability[]; limits: Limits } {
  return {
    capabilities: links.flatMap((l) => l.tool.capabilities ?? []),
    limits: mergeLimits([...links].reverse().map((l) => l.tool.limits)),
  };
}

/**
 * Gathers what the launch of `bare` (the call's plans built without a launch, as run and as shown)
 * needs from the machine: the sandbox probe, the host policy and the proxy's socket folder, the
 * WebAssembly module, and each program's real path. Call `cleanup` if the plan is not used.
 */
export function gatherLaunchFacts(bare: readonly SubprocessPlan[], links: readonly (LinkInput & { tool: { capabilities?: Capability[] } })[], ctx: LaunchContext): { facts: LaunchFacts; cleanup: () => void } {
  const { capabilities, limits } = chainDeclarations(links);
  const runDirs = links.map((l) => l.runDir).filter((d): d is string => d !== null);
  const toolId = bare[0]!.tool;
  // The host policy (and its IP library) loads only for tools that declare the network.
  let policy: HostPolicy | undefined;
  if (capabilities.some((c) => c.name === "net.outbound")) {
    const { assertPolicyUsable, parseHostPolicy } = require("./net-policy.ts") as typeof import("./net-policy.ts");
    policy = parseHostPolicy(toolId, capabilities, ctx.mode !== "off");
    assertPolicyUsable(policy, { allowAnyHost: ctx.allowAnyHost });
  }
  const filter = policy?.enforced && policy.restricted ? proxyLaunch(policy, ctx.dryRun === true) : undefined;
  try {
    const first = bare[0]!.subprocess;
    const wasm = first.argv[0] === WASI_COMMAND ? wasmLaunch(bare[0]!, capabilities, limits, ctx) : undefined;
    const programs = programFacts(bare, ctx.env, wasm?.argv[0]);
    const facts: LaunchFacts = {
      mode: ctx.mode,
      probe: probeFor(ctx.mode, ctx.env, ctx.cacheDir),
      home: ctx.home,
      projectRoot: ctx.projectRoot,
      capabilities,
      limits,
      runDirs,
      ...(ctx.npmPackages ? { npmPackages: true } : {}),
      ...(policy ? { policy } : {}),
      ...(filter ? { proxy: { launch: filter.launch, socket: filter.socket } } : {}),
      ...(wasm ? { wasm: { readOnly: wasm.readOnly, limits: wasm.limits, dirs: wasm.dirs, run: wasm.run, prefix: wasm.argv.slice(0, wasm.argv.length - (first.argv.length - 2)) } } : {}),
      programs,
    };
    return { facts, cleanup: filter?.cleanup ?? (() => {}) };
  } catch (error) {
    filter?.cleanup();
    throw error;
  }
}

/**
 * What the file system says about each program the plans start (the WASI host's path for a
 * module when `wasiHost` is given), keyed by the program as planned.
 */
export function programFacts(bare: readonly SubprocessPlan[], env: LaunchContext["env"], wasiHost?: string): Record<string, ProgramFacts> {
  const programs: Record<string, ProgramFacts> = {};
  for (const plan of bare) {
    const spec = plan.subprocess;
    const program = spec.argv[0] === WASI_COMMAND && wasiHost !== undefined ? wasiHost : spec.argv[0]!;
    if (program in programs) continue;
    // An absolute path is its own resolution (findCommand would only test that it is executable,
    // and startProblem below says why not); the plan resolves command names through PATH already.
    const resolved = isAbsolute(program) ? program : (findCommand(program, spec.env.PATH ?? env.PATH ?? "/usr/bin:/bin", spec.cwd) ?? program);
    const { realPath, links } = resolveCommand(resolved);
    const problem = startProblem(program);
    programs[program] = { resolved, ...(realPath !== undefined ? { realPath } : {}), ...(links.length > 0 ? { links } : {}), ...(problem !== undefined ? { problem } : {}) };
  }
  return programs;
}

/**
 * Does what the launch of the built `plan` leaves to kiwi: creates the declared fs.write folders
 * the sandbox mounts (not in a dry run), keeps the proxy's socket folder only when the tool is
 * filtered through it, and returns the warnings to print (the "no sandbox" one once per process).
 */
export function settleLaunch(plan: SubprocessPlan, facts: LaunchFacts, notes: LaunchNotes, cleanup: () => void, ctx: LaunchContext): Launched {
  let warnings = [...notes.warnings];
  if (ctx.dryRun !== true) warnings.push(...createWritableFolders(notes.writable));
  if (warnings.length > 0 && plan.sandbox?.active === false && ctx.mode === "auto" && !firstUnavailableWarning()) warnings = [];
  const filtered = plan.sandbox?.network === "filtered" && facts.proxy !== undefined;
  const { policy } = facts;
  if (facts.proxy && !filtered) {
    cleanup();
    if (policy && plan.sandbox?.active === false) {
      warnings = [...warnings, `${plan.tool}'s declared hosts (${policy.rules.map((r) => r.raw).join(", ")}) are not enforced without the sandbox: it can reach any host`];
    }
  }
  return { warnings, ...(facts.proxy && filtered && policy ? { proxy: { policy, socket: facts.proxy.socket } } : {}), cleanup: filtered ? cleanup : () => {} };
}

function wasmLaunch(plan: SubprocessPlan, capabilities: Capability[], limits: Limits, ctx: LaunchContext) {
  if (ctx.cacheDir === undefined) throw new KiwiError("E_INTERNAL", `${plan.tool}: a WebAssembly launch needs kiwi's cache folder`);
  const { prepareWasmLaunch } = require("../wasm/prepare-io.ts") as typeof import("../wasm/prepare-io.ts");
  return prepareWasmLaunch({ toolId: plan.tool, argv: plan.subprocess.argv, capabilities, limits, cacheDir: ctx.cacheDir, home: ctx.home, projectRoot: ctx.projectRoot, dryRun: ctx.dryRun === true, ...(ctx.sourceOf ? { sourceOf: ctx.sourceOf } : {}) });
}

/**
 * The bridge program and the proxy's socket folder for a host-filtered launch. A dry run names a
 * folder it does not create.
 */
function proxyLaunch(policy: HostPolicy, dryRun: boolean): { launch: ProxyLaunch; socket: string; cleanup: () => void } {
  let socketDir: string;
  let cleanup = () => {};
  if (dryRun) socketDir = join((require("node:os") as typeof import("node:os")).tmpdir(), "kiwi-net-XXXXXX");
  else {
    const { makeProxySocketDir } = require("./net-proxy-io.ts") as typeof import("./net-proxy-io.ts");
    const made = makeProxySocketDir();
    socketDir = made.dir;
    cleanup = made.cleanup;
  }
  // The compiled kiwi is its own bridge; a checkout runs the bridge file with bun.
  const program = isCompiled() ? { binary: process.execPath } : { binary: process.execPath, script: Bun.fileURLToPath(new URL("./net-bridge-io.ts", import.meta.url)) };
  return { launch: { socketDir, ...program, hosts: policy.rules.map((r) => r.raw), pointers: policy.pointers }, socket: join(socketDir, "proxy.sock"), cleanup };
}

/** Why `program` cannot be started (launch-plan.ts refuses it before any launcher wraps it), or undefined. */
function startProblem(program: string): string | undefined {
  try {
    if (!statSync(program).isFile()) return "it is not a file";
    accessSync(program, constants.X_OK);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EACCES" ? "it is not executable" : "it does not exist";
  }
}
