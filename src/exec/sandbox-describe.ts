// The plain account of a launch that `kiwi exec --dry-run` shows: each area (filesystem, network,
// environment, each limit) with what is enforced and what is not. Says so where kiwi cannot. Pure.
import type { ResolvedLimit } from "../manifest/run-limits.ts";
import { PROXY_LISTEN } from "./sandbox-types.ts";
import type { EnforcementEntry, SandboxPlan, SandboxProbe, SandboxRequest } from "./sandbox-types.ts";


const MIB = 1024 * 1024;

/** Describes what a plan enforces and what it leaves open. */
export function describeSandbox(plan: SandboxPlan, req: SandboxRequest, probe: SandboxProbe): EnforcementEntry[] {
  const e: EnforcementEntry[] = [];
  const add = (area: string, enforced: boolean, detail: string) => e.push({ area, enforced, detail });
  const { limits } = plan;
  const src = (l: ResolvedLimit) => (l.source === "declared" ? "declared" : "kiwi default");
  const netCaps = req.capabilities.filter((c) => c.name === "net.outbound");
  const hosts = netCaps.flatMap((c) => c.hosts ?? []);

  if (plan.active) {
    add("sandbox", true, `bubblewrap ${probe.bwrap} (--sandbox=${plan.mode})`);
    add("filesystem", true, describeMounts(plan));
    if (plan.network === "none") add("network", true, "none (own network namespace, loopback only)");
    else if (plan.network === "filtered") {
      add(
        "network",
        true,
        `only ${hosts.join(", ")} (declared at ${netCaps.map((c) => c.pointer).join(", ")}), through kiwi's proxy at ${PROXY_LISTEN} (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY; HTTP CONNECT, plain HTTP, SOCKS5); kiwi resolves each name and refuses loopback, private and link-local addresses unless declared; any other connection has no route (own network namespace); refused connections are reported after the run`,
      );
    } else if (hosts.length > 0) add("network", false, `allowed (host filtering not enforced): ${hosts.join(", ")} declared at ${netCaps.map((c) => c.pointer).join(", ")}, but any host can be reached`);
    else add("network", true, `allowed, any host (net.outbound declared at ${netCaps.map((c) => c.pointer).join(", ")})`);
  } else {
    add("sandbox", false, plan.mode === "off" ? "off (--sandbox=off or KIWI_SANDBOX=off)" : `unavailable: ${probe.reason ?? "bubblewrap not found"}`);
    add("filesystem", false, "not isolated: the tool can read and write whatever your user can");
    add("network", false, "not isolated: the tool can connect to any host");
    // Node looks for a package in node_modules/ of every folder above the importing file, and the
    // run directory is inside kiwi's cache, inside your home: only the sandbox hides those folders.
    if (req.npmPackages) {
      const underHome = req.runDirs.some((d) => d.startsWith(`${req.home}/`));
      add("packages", false, `only the locked npm packages are installed, but node also resolves a package the tool does not declare from node_modules/ in any folder above its run directory, up to /${underHome ? ` (${req.home}/node_modules among them)` : ""}`);
    }
  }
  const names = Object.keys(plan.env).sort();
  add("environment", true, `only ${names.length} variable${names.length === 1 ? "" : "s"}: ${names.join(", ") || "(none)"}`);

  if (plan.active) {
    if (plan.uid !== undefined && probe.setpriv) add("identity", true, `uid ${plan.uid}, not root (kiwi runs as root); only CAP_DAC_OVERRIDE, for the mounted paths`);
    else if (probe.uid === 0) add("identity", false, "root inside the sandbox (setpriv not found): the process limit does not apply to root");
    else add("identity", true, `your uid ${probe.uid} in a user namespace, no capabilities`);
  }

  const rl = (area: string, l: ResolvedLimit, what: string) =>
    probe.prlimit ? add(area, true, `${what} (${src(l)})`) : add(area, false, `${what} wanted (${src(l)}), but prlimit was not found`);
  rl("memory", limits.memoryMb, `${limits.memoryMb.value} MiB of private writable memory (RLIMIT_DATA)`);
  rl("cpu", limits.cpuSeconds, `${limits.cpuSeconds.value} s of CPU time (RLIMIT_CPU)`);
  rl("open files", limits.openFiles, `${limits.openFiles.value} descriptors (RLIMIT_NOFILE)`);
  const procs = `${limits.processes.value} processes and threads (${src(limits.processes)})`;
  if (!plan.active) add("processes", false, `${procs} wanted, but only a sandbox can count a tool's processes apart from yours`);
  else if (!probe.prlimit || (probe.uid === 0 && !probe.setpriv)) add("processes", false, `${procs} wanted, but ${probe.prlimit ? "the tool runs as root" : "prlimit was not found"}`);
  else add("processes", true, `${procs}, counted for this sandbox alone (${plan.uid !== undefined ? "its own uid" : "its own user namespace"}; private pid namespace)`);
  add("output", true, `${formatBytes(limits.outputBytes.value)} of stdout and stderr (${src(limits.outputBytes)})`);
  add("timeout", true, `${limits.timeoutMs.value} ms wall clock, then the ${plan.active ? "whole sandbox" : "process group"} is killed (${src(limits.timeoutMs)})`);

  const spawnCaps = req.capabilities.filter((c) => c.name === "proc.spawn" || c.name === "shell.execute").map((c) => c.name);
  add("commands", false, `${spawnCaps.length ? `${spawnCaps.join(", ")} declared; ` : ""}which programs the tool starts is not checked (proc.spawn, shell.execute): anything visible can run, within the process limit`);
  if (req.wasm) {
    add("fuel", true, `${req.wasm.fuel} function entries, loop iterations and returns, counted inside the module (${req.limits.fuel !== undefined ? "declared" : "kiwi default"}); past it the call ends with E_WASM_LIMIT`);
    add("wasm memory", true, `${req.wasm.memoryMb} MiB of linear memory (${req.limits.memoryMb !== undefined ? "declared" : "kiwi default"}); a grow past it ends the call with E_WASM_LIMIT`);
    add("wasm files", true, req.wasm.dirs.length ? `the module may open only ${req.wasm.dirs.join(", ")} (WASI preopens from fs.read/fs.write; one only fs.read names is read-only)` : "the module may open no files (no fs.read or fs.write declared)");
  } else if (req.limits.fuel !== undefined) add("fuel", false, `fuel ${req.limits.fuel} is for WebAssembly runtimes; a subprocess is bounded by its CPU time instead`);
  return e;
}

function describeMounts(plan: SandboxPlan): string {
  const parts: string[] = [];
  const of = (pred: (m: SandboxPlan["mounts"][number]) => boolean) => plan.mounts.filter(pred);
  const run = of((m) => m.why.startsWith("run directory"));
  // A mount placed where a link leads (sandbox-mounts.ts withCommandLinks) is named by its path as declared.
  parts.push(`read-only run director${run.length === 1 ? "y" : "ies"} ${run.map((m) => m.source ?? m.path).join(", ")}`);
  const runtime = of((m) => m.why === "runtime");
  const links = of((m) => m.kind === "symlink" && m.why.startsWith("runtime"));
  const through = links.length ? ` (reached through the link${links.length === 1 ? "" : "s"} ${links.map((m) => `${m.path} -> ${m.target}`).join(", ")})` : "";
  if (runtime.length) parts.push(`read-only runtime ${runtime.map((m) => m.path).join(", ")}${through}`);
  parts.push("read-only system paths (/usr, /bin, /lib*, part of /etc)");
  const declared = of((m) => m.why.startsWith("declared"));
  for (const m of declared) parts.push(`${m.kind === "rw" ? "writable" : "read-only"} ${m.source ?? m.path} (${m.why}; skipped if missing)`);
  const tmp = of((m) => m.kind === "tmpfs");
  parts.push(`private ${tmp.map((m) => `${m.path} (${formatBytes(m.sizeBytes ?? 0)})`).join(", ")}`);
  parts.push("nothing else is visible (home, other projects)");
  return parts.join("; ");
}

/** Byte counts as people read them (MiB for round sizes). */
export function formatBytes(n: number): string {
  if (n >= MIB && n % MIB === 0) return `${n / MIB} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** The account as text: what is enforced, then what is not. */
export function renderEnforcement(entries: readonly EnforcementEntry[]): string {
  const line = (x: EnforcementEntry) => `  ${x.area}: ${x.detail}`;
  const yes = entries.filter((x) => x.enforced).map(line);
  const no = entries.filter((x) => !x.enforced).map(line);
  return [`enforced:`, ...yes, ...(no.length ? [`not enforced:`, ...no] : [])].join("\n");
}
