// Turns a subprocess run into a sandboxed launch: the bubblewrap + setpriv + prlimit argv that enforces
// a tool's declared permissions, plus a plain account of what is and is not enforced. Pure.
import { KiwiError } from "../errors.ts";
import { type ResolvedLimits, resolveLimits } from "../manifest/run-limits.ts";
import { type Mount, planMounts } from "./sandbox-mounts.ts";
import { describeSandbox } from "./sandbox-describe.ts";
import { PROXY_LISTEN, type ProxyLaunch, SANDBOX_MODES, type SandboxMode, type SandboxPlan, type SandboxProbe, type SandboxRequest } from "./sandbox-types.ts";

export type { Mount } from "./sandbox-mounts.ts";
export { SANDBOX_MODES, type EnforcementEntry, type ProxyLaunch, type SandboxMode, type SandboxPlan, type SandboxProbe, type SandboxRequest } from "./sandbox-types.ts";

/**
 * When kiwi runs as root the tool runs as this uid plus kiwi's pid: the kernel never applies
 * RLIMIT_NPROC to uid 0, and a uid of its own per run keeps one sandbox's process count from
 * eating another's. Above the 32-bit container ranges systemd hands out (up to 1879048191).
 */
export const SANDBOX_UID_BASE = 2_000_000_000;

/** Picks the mode: the flag, else KIWI_SANDBOX, else `auto`. */
export function resolveSandboxMode(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): SandboxMode {
  const [raw, from] = flag !== undefined && flag !== "" ? [flag, "--sandbox"] : env.KIWI_SANDBOX ? [env.KIWI_SANDBOX, "KIWI_SANDBOX"] : ["auto", ""];
  const mode = raw.trim().toLowerCase();
  if ((SANDBOX_MODES as readonly string[]).includes(mode)) return mode as SandboxMode;
  throw new KiwiError("E_USAGE", `${from} must be one of ${SANDBOX_MODES.join(", ")} (got "${raw}")`, {
    hint: "use --sandbox=auto (sandbox when possible), require (refuse without one) or off",
  });
}

/** The namespace flags a sandbox uses; the probe runs with the same ones. */
export function namespaceArgs(uid: number, network: boolean): string[] {
  // A user namespace maps only kiwi's own uid, so under root it would forbid the switch to the
  // unprivileged uid; root does not need one to create the other namespaces.
  if (uid === 0) return ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try", ...(network ? [] : ["--unshare-net"])];
  return ["--unshare-all", ...(network ? ["--share-net"] : [])];
}

/** The declared fs.write folders a sandbox mounts writable (the caller creates the missing ones). */
export function declaredWritable(plan: SandboxPlan): string[] {
  return plan.mounts.filter((m) => m.kind === "rw" && m.why.startsWith("declared fs.write")).map((m) => m.source ?? m.path);
}

/** Builds the launch for one run: sandboxed when the mode and the machine allow, else plain. */
export function planSandbox(req: SandboxRequest, probe: SandboxProbe, mode: SandboxMode): SandboxPlan {
  const limits = resolveLimits(req.limits);
  const network = req.capabilities.some((c) => c.name === "net.outbound");
  const proxy = network ? req.proxy : undefined;
  if (mode === "off") return plainPlan(req, probe, mode, limits, []);
  if (!probe.usable || !probe.bwrap) {
    const why = probe.reason ?? "bubblewrap (bwrap) was not found";
    if (mode === "require") {
      throw new KiwiError("E_SANDBOX", `cannot run ${req.toolId}: the sandbox is required but unavailable (${why})`, {
        hint: 'install bubblewrap (Debian: "apt-get install bubblewrap") and allow user namespaces, or run with --sandbox=off',
        details: { tool: req.toolId, reason: why },
      });
    }
    return plainPlan(req, probe, mode, limits, [`no sandbox: ${why}; ${req.toolId} runs with your full file system and network access (use --sandbox=require to refuse instead)`]);
  }
  const helperFiles = (req.readOnly ?? []).map((path): Mount => ({ kind: "ro", path, optional: false, why: "kiwi helper (read-only)" }));
  const mounts = planMounts({ ...req, systemPaths: probe.systemPaths }, network, limits.memoryMb.value, [...helperFiles, ...(proxy ? proxyMounts(proxy) : [])]);
  // A copied file reaches bubblewrap as an open descriptor: 3, 4, … (after stdin, stdout and stderr) in mount order.
  const files = mounts.filter((m) => m.kind === "file").map((m) => m.source ?? m.path);
  let fd = FIRST_FILE_FD;
  const uid = probe.uid === 0 ? SANDBOX_UID_BASE + probe.pid : undefined;
  const argv = [
    probe.bwrap,
    ...namespaceArgs(probe.uid, network && !proxy),
    "--die-with-parent",
    "--new-session",
    "--hostname",
    "kiwi-sandbox",
    ...mounts.flatMap((m) => mountArgs(m, m.kind === "file" ? fd++ : -1)),
    // The root tmpfs and /dev only hold mount points and device nodes; nothing may be written next to
    // them (device nodes stay usable on a read-only mount; /tmp and /dev/shm are mounts of their own).
    "--remount-ro",
    "/dev",
    "--remount-ro",
    "/",
    "--chdir",
    req.cwd,
    "--",
    ...(uid !== undefined && probe.setpriv ? dropRootArgs(probe.setpriv, uid) : []),
    ...(proxy ? bridgeArgs(proxy) : []),
    ...prlimitArgs(probe.prlimit, limits, true, proxy ? BRIDGE_THREADS : 0),
    ...req.argv,
  ];
  const env = { ...sandboxEnv(req.env), ...(proxy ? proxyEnv() : {}) };
  const plan: SandboxPlan = { mode, active: true, argv, env, cwd: req.cwd, mounts, files, network: proxy ? "filtered" : network ? "host" : "none", uid, limits, enforcement: [], warnings: [] };
  plan.enforcement = describeSandbox(plan, req, probe);
  return plan;
}

function plainPlan(req: SandboxRequest, probe: SandboxProbe, mode: SandboxMode, limits: ResolvedLimits, warnings: string[]): SandboxPlan {
  const argv = [...prlimitArgs(probe.prlimit, limits, false), ...req.argv];
  const plan: SandboxPlan = { mode, active: false, argv, env: { ...req.env }, cwd: req.cwd, mounts: [], files: [], network: "host", limits, enforcement: [], warnings };
  plan.enforcement = describeSandbox(plan, req, probe);
  return plan;
}

/** The descriptor the first copied file is passed as (SandboxPlan.files). */
const FIRST_FILE_FD = 3;

/** bubblewrap's arguments for one mount; `fd` is a copied file's descriptor (kind "file"). */
function mountArgs(m: Mount, fd: number): string[] {
  switch (m.kind) {
    case "ro":
      return [m.optional ? "--ro-bind-try" : "--ro-bind", m.source ?? m.path, m.path];
    case "rw":
      return [m.optional ? "--bind-try" : "--bind", m.source ?? m.path, m.path];
    case "tmpfs":
      return ["--perms", "1777", ...(m.sizeBytes ? ["--size", String(m.sizeBytes)] : []), "--tmpfs", m.path];
    case "proc":
      return ["--proc", m.path];
    case "dev":
      return ["--dev", m.path];
    case "symlink":
      return ["--symlink", m.target ?? "", m.path];
    case "file":
      return ["--perms", (m.mode ?? 0o444).toString(8).padStart(4, "0"), "--file", String(fd), m.path];
  }
}

/** setpriv: become the per-run uid with no privilege but reading and writing what is mounted. */
function dropRootArgs(setpriv: string, uid: number): string[] {
  // CAP_DAC_OVERRIDE alone: declared paths owned by root (or mode 0700) stay usable, while the
  // mounts themselves decide what is visible and read-only; no CAP_SYS_ADMIN/RESOURCE, so
  // RLIMIT_NPROC holds.
  const caps = "-all,+dac_override";
  return [setpriv, `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", `--inh-caps=${caps}`, `--ambient-caps=${caps}`, `--bounding-set=${caps}`, "--"];
}

/** Inside the sandbox: the bridge program and the folder holding the proxy's socket. */
const KIWI_DIR = "/.kiwi";
const SOCKET_DIR = `${KIWI_DIR}/net`;
/**
 * Threads of the bridge process (a Bun program: main, event loop, GC helpers). They share the
 * tool's uid, so RLIMIT_NPROC counts them; the tool's own limit is raised by this much.
 */
export const BRIDGE_THREADS = 8;

function proxyMounts(proxy: ProxyLaunch): Mount[] {
  const bridge = "kiwi network bridge (host filtering)";
  return [
    { kind: "ro", source: proxy.binary, path: `${KIWI_DIR}/${proxy.script ? "bun" : "kiwi"}`, optional: false, why: bridge },
    ...(proxy.script ? [{ kind: "ro", source: proxy.script, path: `${KIWI_DIR}/net-bridge-io.ts`, optional: false, why: bridge } as Mount] : []),
    { kind: "rw", source: proxy.socketDir, path: SOCKET_DIR, optional: false, why: "kiwi proxy socket (host filtering)" },
  ];
}

function bridgeArgs(proxy: ProxyLaunch): string[] {
  const program = proxy.script ? [`${KIWI_DIR}/bun`, `${KIWI_DIR}/net-bridge-io.ts`] : [`${KIWI_DIR}/kiwi`, "__net-bridge"];
  return [...program, PROXY_LISTEN, `${SOCKET_DIR}/proxy.sock`, "--"];
}

/**
 * The proxy variables, both cases (curl reads only lower-case http_proxy; Python and Go read
 * either). SOCKS5 for ALL_PROXY with names resolved by the proxy (socks5h). Node's fetch follows
 * them from Node 24 with NODE_USE_ENV_PROXY. NO_PROXY is emptied: nothing bypasses the proxy.
 */
export function proxyEnv(): Record<string, string> {
  const http = `http://${PROXY_LISTEN}`;
  const socks = `socks5h://${PROXY_LISTEN}`;
  return {
    HTTP_PROXY: http,
    http_proxy: http,
    HTTPS_PROXY: http,
    https_proxy: http,
    ALL_PROXY: socks,
    all_proxy: socks,
    NO_PROXY: "",
    no_proxy: "",
    NODE_USE_ENV_PROXY: "1",
  };
}

/** prlimit wrapper; the process limit only inside a sandbox, where it counts the sandbox alone. */
export function prlimitArgs(prlimit: string | null, limits: ResolvedLimits, withProcesses: boolean, extraProcesses = 0): string[] {
  if (!prlimit) return [];
  const mib = 1024 * 1024;
  return [
    prlimit,
    `--data=${Math.floor(limits.memoryMb.value * mib)}`,
    `--cpu=${Math.ceil(limits.cpuSeconds.value)}:${Math.ceil(limits.cpuSeconds.value) + 1}`,
    `--nofile=${Math.floor(limits.openFiles.value)}`,
    ...(withProcesses ? [`--nproc=${Math.floor(limits.processes.value) + extraProcesses}`] : []),
    "--",
  ];
}

/** The tool's env, with TMPDIR pointed at the sandbox's private /tmp (the host's is not mounted). */
function sandboxEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const out = { ...env };
  if ("TMPDIR" in out) out.TMPDIR = "/tmp";
  return out;
}

/**
 * The signal behind a sandboxed run's exit code: bubblewrap reports a tool killed by signal N as
 * exit code 128 + N (as shells do), so kiwi can say "killed by SIGXCPU" instead of "exit 152".
 */
export function signalFromSandboxExit(exitCode: number): string | null {
  const n = exitCode - 128;
  if (n < 1 || n > 64) return null;
  // node:os is read only here, for a run that ended by a signal (its module costs every call start-up).
  const { constants } = require("node:os") as typeof import("node:os");
  return Object.entries(constants.signals).find(([, v]) => v === n)?.[0] ?? null;
}
