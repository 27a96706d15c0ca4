// The sandbox's data shapes, shared by sandbox-plan.ts (which builds a plan) and
// sandbox-describe.ts (which says what a plan enforces), so neither imports the other. Pure.
import type { Capability, Limits } from "../manifest/model.ts";
import type { ResolvedLimits } from "../manifest/run-limits.ts";
import type { CommandLink, Mount, SystemEntry } from "./sandbox-mounts.ts";

/** One line of the account: an area, whether kiwi enforces it, and what exactly. */
export interface EnforcementEntry {
  area: string;
  enforced: boolean;
  detail: string;
}

/** `--sandbox` / KIWI_SANDBOX values. */
export const SANDBOX_MODES = ["auto", "require", "off"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** What sandbox-io.ts found on this machine. */
export interface SandboxProbe {
  /** Absolute path of bubblewrap, or null when none was found. */
  bwrap: string | null;
  /** bubblewrap ran a trivial sandbox here (user/pid/net namespaces work). */
  usable: boolean;
  /** Why it is not usable (missing, or what bwrap said). */
  reason?: string;
  prlimit: string | null;
  setpriv: string | null;
  /** kiwi's effective uid: 0 means the tool is moved to an unprivileged uid. */
  uid: number;
  /** kiwi's pid, which picks the per-run uid under root. */
  pid: number;
  /**
   * What each system path (sandbox-mounts.ts SYSTEM_PATHS, NETWORK_PATHS) is on this machine; one
   * that is absent is left out. Undefined: not looked at, and every one is bound with bubblewrap's
   * -try (which skips an absent one).
   */
  systemPaths?: Readonly<Record<string, SystemEntry>>;
}

/** A subprocess run to sandbox: the exec plan's argv/cwd/env plus what the chain declares. */
export interface SandboxRequest {
  toolId: string;
  /** argv[0] is the command's absolute path on the host. */
  argv: readonly string[];
  /** argv[0] with symlinks resolved, to find the runtime's own prefix (a pyenv, a venv, node_modules). */
  commandRealPath?: string;
  /** The symbolic links argv[0] goes through on the host, each at its real location (sandbox-io.ts commandLinks). */
  commandLinks?: readonly CommandLink[];
  /** The read-only run directories the chain's verified files were materialised into. */
  runDirs: readonly string[];
  /** A link of the chain has installed npm packages (node_modules/ in its run directory). */
  npmPackages?: boolean;
  /** Working directory (the run directory unless the manifest says otherwise). */
  cwd: string;
  /** The tool's whole environment (already the allowlist plus declarations). */
  env: Readonly<Record<string, string>>;
  /** Capabilities declared along the chain. */
  capabilities: readonly Capability[];
  /** Limits merged along the chain. */
  limits: Limits;
  home: string;
  /** Relative declared paths are relative to this folder (the one holding `.ai/`). */
  projectRoot: string;
  /** Host files kiwi's own helpers need, shown read-only at the same path (an instrumented wasm module). */
  readOnly?: string[];
  /** A WebAssembly run: fuel and the linear-memory cap woven into the module, for the account. */
  wasm?: { fuel: number; memoryMb: number; dirs: string[] };
  /** Host filtering: the tool's only way out is kiwi's proxy (net-proxy-io.ts) through this bridge. */
  proxy?: ProxyLaunch;
}

/** Where a host-filtered sandbox finds kiwi's proxy: the bridge listens here, the variables name it. */
export const PROXY_LISTEN = "127.0.0.1:3128";

/** How a host-filtered sandbox reaches kiwi's proxy (sandbox-io.ts fills in the host paths). */
export interface ProxyLaunch {
  /** Host folder holding the proxy's Unix socket (`proxy.sock`); bound into the sandbox. */
  socketDir: string;
  /** The bridge program on the host: kiwi's own binary, or bun plus the bridge file in a checkout. */
  binary: string;
  script?: string;
  /** The declared host entries, for the account. */
  hosts: string[];
  pointers: string[];
}

/** How to launch, and what that enforces. */
export interface SandboxPlan {
  mode: SandboxMode;
  /** True when bubblewrap wraps the command. */
  active: boolean;
  /** What to spawn (bwrap … -- [setpriv …] prlimit … -- command args, or the bare command). */
  argv: string[];
  /**
   * The environment to spawn argv with. bwrap hands it to the tool unchanged, so secret values never
   * appear in a command line (/proc/<pid>/cmdline is world-readable; environ is not).
   */
  env: Record<string, string>;
  cwd: string;
  mounts: Mount[];
  /**
   * Host files the launcher gets as open descriptors 3, 4, … in this order, which bubblewrap copies
   * into the sandbox (`--file`): the launch opens them just before the spawn.
   */
  files: string[];
  /** none: loopback only; filtered: loopback plus kiwi's proxy for the declared hosts; host: the host's network. */
  network: "none" | "filtered" | "host";
  /** The uid the tool runs as when kiwi is root. */
  uid?: number;
  limits: ResolvedLimits;
  enforcement: EnforcementEntry[];
  /** Things the user should hear about (e.g. "no sandbox available"); the caller prints them. */
  warnings: string[];
}

