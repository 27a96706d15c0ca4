// Wraps a subprocess plan in its launcher: bubblewrap and/or prlimit from sandbox-io.ts, chosen by
// --sandbox / KIWI_SANDBOX. The plan as run and the plan as shown get the same launch.
import { accessSync, constants, statSync } from "node:fs";
import { KiwiError } from "../errors.ts";
import type { Capability, Limits } from "../manifest/model.ts";
import { mergeLimits } from "./run-limits.ts";
import type { LinkInput, SubprocessPlan } from "./plan.ts";
import { join } from "node:path";
import { isCompiled } from "../self.ts";
import type { HostPolicy } from "./net-policy.ts";
import { WASI_COMMAND } from "../wasm/module-info.ts";
import { prepareSandbox } from "./sandbox-io.ts";
import type { ProxyLaunch, SandboxMode } from "./sandbox-plan.ts";

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
  /** Run a tool whose declared hosts admit every host (`*`, a /0 range): --allow-any-host. */
  allowAnyHost?: boolean;
}

/** What applyLauncher decided besides the launch: warnings, and the host filter it set up. */
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
 * Sets `launch`, the launch environment and the sandbox account on the plan (and on its shown
 * twin, whose environment has secrets as ***). Returns the launcher's warnings for the caller to print.
 */
export function applyLauncher(plans: SubprocessPlan[], links: readonly (LinkInput & { tool: { capabilities?: Capability[] } })[], ctx: LaunchContext): Launched {
  const { capabilities, limits } = chainDeclarations(links);
  const runDirs = links.map((l) => l.runDir).filter((d): d is string => d !== null);
  const toolId = plans[0]!.tool;
  // The host policy (and its IP library) loads only for tools that declare the network.
  let policy: HostPolicy | undefined;
  if (capabilities.some((c) => c.name === "net.outbound")) {
    const { assertPolicyUsable, parseHostPolicy } = require("./net-policy.ts") as typeof import("./net-policy.ts");
    policy = parseHostPolicy(toolId, capabilities, ctx.mode !== "off");
    assertPolicyUsable(policy, { allowAnyHost: ctx.allowAnyHost });
  }
  const filter = policy?.enforced && policy.restricted ? proxyLaunch(policy, ctx.dryRun === true) : undefined;
  let warnings: string[] = [];
  let filtered = false;
  for (const plan of plans) {
    const spec = plan.subprocess;
    const wasm = spec.argv[0] === WASI_COMMAND ? wasmLaunch(plan, capabilities, limits, ctx) : undefined;
    const argv = wasm?.argv ?? spec.argv;
    assertStartable(plan.tool, argv[0]!);
    const sandbox = prepareSandbox(
      {
        toolId: plan.tool,
        argv,
        runDirs,
        cwd: spec.cwd,
        env: spec.env,
        capabilities,
        // The host process holds the module's linear memory plus its own heap and compiled code.
        limits: wasm ? { ...limits, memoryMb: wasm.limits.memoryMb + WASI_HOST_MB } : limits,
        home: ctx.home,
        projectRoot: ctx.projectRoot,
        ...(filter ? { proxy: filter.launch } : {}),
        ...(wasm ? { readOnly: wasm.readOnly, wasm: { ...wasm.limits, dirs: wasm.dirs } } : {}),
      },
      ctx.mode,
      ctx.env,
      ctx.cacheDir,
      { createWritable: ctx.dryRun !== true },
    );
    spec.launch = sandbox.argv;
    spec.env = sandbox.env;
    plan.sandbox = { mode: sandbox.mode, active: sandbox.active, network: sandbox.network, enforcement: sandbox.enforcement };
    if (wasm) spec.wasm = wasm.run;
    if (sandbox.network === "filtered" && filter && policy) {
      plan.sandbox.hosts = policy.rules.map((r) => r.raw);
      spec.proxy = { socket: filter.socket, ...(sandbox.uid !== undefined ? { uid: sandbox.uid } : {}) };
      filtered = true;
    }
    if (warnings.length === 0) warnings = sandbox.warnings;
  }
  if (filter && !filtered) {
    filter.cleanup();
    if (policy && plans[0]?.sandbox?.active === false) {
      warnings = [...warnings, `${toolId}'s declared hosts (${policy.rules.map((r) => r.raw).join(", ")}) are not enforced without the sandbox: it can reach any host`];
    }
  }
  return { warnings, ...(filter && filtered && policy ? { proxy: { policy, socket: filter.socket } } : {}), cleanup: filtered && filter ? filter.cleanup : () => {} };
}

/** Memory the WASI host process needs besides the module's linear memory (JS heap, compiled code). */
const WASI_HOST_MB = 512;

function wasmLaunch(plan: SubprocessPlan, capabilities: Capability[], limits: Limits, ctx: LaunchContext) {
  if (ctx.cacheDir === undefined) throw new KiwiError("E_INTERNAL", `${plan.tool}: a WebAssembly launch needs kiwi's cache folder`);
  const { prepareWasmLaunch } = require("../wasm/prepare-io.ts") as typeof import("../wasm/prepare-io.ts");
  return prepareWasmLaunch({ toolId: plan.tool, argv: plan.subprocess.argv, capabilities, limits, cacheDir: ctx.cacheDir, home: ctx.home, projectRoot: ctx.projectRoot, dryRun: ctx.dryRun === true });
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
