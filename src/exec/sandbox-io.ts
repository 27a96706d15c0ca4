// Finds out whether this machine can sandbox (bubblewrap present and working, once per process) and
// resolves the command a run starts; then asks sandbox-plan.ts for the launch. The I/O half of the sandbox.
import { accessSync, constants, existsSync, lstatSync, mkdirSync, readlinkSync, realpathSync } from "node:fs";
import { KiwiError } from "../errors.ts";
import { basename, isAbsolute, resolve } from "node:path";
import { rememberProbe, rememberedProbe } from "./sandbox-probe-io.ts";
import { type CommandLink, NETWORK_PATHS, SYSTEM_PATHS, type SystemEntry, walkLinks } from "./sandbox-mounts.ts";
import { declaredWritable, namespaceArgs, planSandbox, type SandboxMode, type SandboxPlan, type SandboxProbe, type SandboxRequest } from "./sandbox-plan.ts";

const probes = new Map<string, SandboxProbe>();
let warnedUnavailable = false;

/**
 * Looks for bwrap (KIWI_BWRAP, else PATH), prlimit and setpriv, and runs `bwrap … true` with the
 * namespaces a sandbox uses to learn whether they work here. Cached per process and bwrap path.
 */
export function probeSandbox(env: Readonly<Record<string, string | undefined>>, cacheDir?: string): SandboxProbe {
  const path = env.PATH ?? "/usr/bin:/bin";
  const override = env.KIWI_BWRAP;
  const bwrap = override !== undefined ? (override === "" ? null : findCommand(override, path)) : findCommand("bwrap", path);
  const key = `${bwrap ?? ""}\0${path}`;
  const cached = probes.get(key);
  if (cached) return cached;
  const uid = process.geteuid?.() ?? process.getuid?.() ?? -1;
  const probe: SandboxProbe = {
    bwrap,
    usable: false,
    prlimit: findCommand("prlimit", path),
    setpriv: findCommand("setpriv", path),
    uid,
    pid: process.pid,
    systemPaths: systemPaths(),
  };
  if (!bwrap) probe.reason = override !== undefined ? `KIWI_BWRAP="${override}" is not an executable` : "bubblewrap (bwrap) is not installed";
  else {
    const argv = [bwrap, ...namespaceArgs(uid, false), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "true"];
    const remembered = cacheDir === undefined ? undefined : rememberedProbe(cacheDir, argv);
    if (remembered) {
      Object.assign(probe, remembered.verdict);
      probes.set(key, probe);
      return probe;
    }
    try {
      const r = Bun.spawnSync(argv, { stdin: "ignore", stdout: "ignore", stderr: "pipe", env: {}, timeout: 10_000 });
      probe.usable = r.exitCode === 0;
      if (!probe.usable) {
        const said = r.stderr.toString().trim().split("\n").at(-1) ?? "";
        probe.reason = `${bwrap} cannot create a sandbox here (${said || `exit ${r.exitCode ?? r.signalCode}`}); user namespaces may be disabled`;
      }
    } catch (error) {
      probe.reason = `${bwrap} could not be started (${error instanceof Error ? error.message : String(error)})`;
    }
    if (cacheDir !== undefined) rememberProbe(cacheDir, argv, { usable: probe.usable, ...(probe.reason !== undefined ? { reason: probe.reason } : {}) });
  }
  probes.set(key, probe);
  return probe;
}

/**
 * What each system path is on this machine (sandbox-mounts.ts decides from it what is linked,
 * copied or bound), absent ones left out. Read for every process that sandboxes, so a change since
 * is seen: ~24 lstats, ~0.15 ms (timing marks in the compiled binary).
 */
export function systemPaths(paths: readonly string[] = [...SYSTEM_PATHS, ...NETWORK_PATHS]): Record<string, SystemEntry> {
  const entries: Record<string, SystemEntry> = {};
  for (const path of paths) {
    try {
      const st = lstatSync(path);
      // A file kiwi cannot read is bound, as before: a copy needs it opened (launch-files-io.ts).
      entries[path] = st.isSymbolicLink() ? { kind: "link", realPath: realpathSync(path) } : st.isFile() && readable(path) ? { kind: "file", mode: st.mode, size: st.size } : { kind: "other" };
    } catch {
      // Absent, or a link that leads nowhere: nothing to mount.
    }
  }
  return entries;
}

function readable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** A command name or path resolved against PATH (names) or cwd (relative paths); null when absent. */
export function findCommand(command: string, pathEnv: string, cwd = process.cwd()): string | null {
  if (command.includes("/")) {
    const abs = isAbsolute(command) ? command : resolve(cwd, command);
    return Bun.which(abs) ? abs : null;
  }
  return Bun.which(command, { PATH: pathEnv }) ?? null;
}

/** The command's real path (symlinks resolved), or undefined when it cannot be read. */
export function realCommandPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The command `path` resolved as the kernel does, component by component: its real path (undefined
 * when it cannot be read) and the symbolic links met on the way, in order, each at its real
 * location (its folder's links resolved) with its text as written, so the sandbox can make the same
 * links. One walk does both at the cost of the realpath it replaces (an lstat per component).
 */
export function resolveCommand(path: string): { realPath?: string; links: CommandLink[] } {
  if (!isAbsolute(path)) {
    const realPath = realCommandPath(path);
    return { ...(realPath !== undefined ? { realPath } : {}), links: [] };
  }
  const links: CommandLink[] = [];
  try {
    const realPath = walkLinks(path, (at) => {
      if (!lstatSync(at).isSymbolicLink()) return undefined;
      const target = readlinkSync(at);
      links.push({ path: at, target });
      return target;
    });
    return { ...(realPath !== undefined ? { realPath } : {}), links };
  } catch {
    // A component that cannot be read: no real path, as realpath fails.
    return { links };
  }
}

/** What a run hands to the sandbox: the exec plan's fields, with argv[0] as written. */
export type SandboxInput = Omit<SandboxRequest, "commandRealPath" | "commandLinks">;

/**
 * Plans the launch of one run under `mode`: resolves argv[0] through the tool's PATH, probes, and
 * builds the plan. The "no sandbox" warning is returned only the first time in a process.
 */
export function prepareSandbox(input: SandboxInput, mode: SandboxMode, env: Readonly<Record<string, string | undefined>>, cacheDir?: string, options: { createWritable?: boolean } = {}): SandboxPlan {
  const probe = probeFor(mode, env, cacheDir);
  const command = input.argv[0] ?? "";
  const resolved = findCommand(command, input.env.PATH ?? env.PATH ?? "/usr/bin:/bin", input.cwd) ?? command;
  const { realPath, links } = resolveCommand(resolved);
  const req: SandboxRequest = { ...input, argv: [resolved, ...input.argv.slice(1)], commandRealPath: realPath, commandLinks: links };
  const plan = planSandbox(req, probe, mode);
  if (plan.active && options.createWritable !== false) plan.warnings.push(...createWritableFolders(declaredWritable(plan)));
  if (plan.warnings.length > 0 && !plan.active && mode === "auto" && !firstUnavailableWarning()) plan.warnings = [];
  return plan;
}

/** The probe a launch under `mode` uses: none with the sandbox off (prlimit is still looked up). */
export function probeFor(mode: SandboxMode, env: Readonly<Record<string, string | undefined>>, cacheDir?: string): SandboxProbe {
  return mode === "off" ? offProbe(env) : probeSandbox(env, cacheDir);
}

/** True the first time in a process: the "no sandbox" warning is shown once, later calls drop it. */
export function firstUnavailableWarning(): boolean {
  const first = !warnedUnavailable;
  warnedUnavailable = true;
  return first;
}

/** A last path segment named like a file (result.json, report.csv), not a folder (out, ~/.npm, cache). */
const FILE_NAME = /^[^.][^/]*\.[A-Za-z0-9]{1,8}$/;

/**
 * A declared fs.write folder that does not exist would be left out of the sandbox (bwrap's
 * --bind-try), so the tool could write nowhere there, and a cache such as ~/.npm was re-filled on
 * every call. The missing ones are created (mode 0700) before the launch; the warnings say so. A
 * missing path named like a file is not: a folder in its place (result.json/) would only make the
 * tool's write fail with EISDIR, on this call and every later one.
 */
export function createWritableFolders(folders: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const folder of folders) {
    if (existsSync(folder)) continue;
    if (FILE_NAME.test(basename(folder))) {
      warnings.push(`${folder}, declared in fs.write, does not exist and was not created: it is named like a file, and kiwi creates missing folders only (a missing file cannot be mounted); declare the folder it goes in, or create the file first`);
      continue;
    }
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      warnings.push(`created ${folder}, declared in fs.write but missing (a missing folder cannot be mounted writable)`);
    } catch (error) {
      throw new KiwiError("E_SANDBOX", `the declared fs.write folder ${folder} does not exist and cannot be created (${(error as NodeJS.ErrnoException).code ?? error})`, {
        hint: "create it yourself, or declare a folder kiwi can create",
        details: { path: folder },
      });
    }
  }
  return warnings;
}

/** With the sandbox off nothing is probed (no bwrap run), but prlimit still applies limits. */
function offProbe(env: Readonly<Record<string, string | undefined>>): SandboxProbe {
  const path = env.PATH ?? "/usr/bin:/bin";
  return { bwrap: null, usable: false, prlimit: findCommand("prlimit", path), setpriv: null, uid: process.geteuid?.() ?? -1, pid: process.pid, reason: "off" };
}

/** Forgets cached probes and the once-only warning (tests). */
export function resetSandboxProbe(): void {
  probes.clear();
  warnedUnavailable = false;
}
