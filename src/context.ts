// Reads the process's surroundings (env, cwd, paths, clock, terminal) once into a Context.
// Everything below the commands receives a Context instead of touching process.* itself.
import { isAbsolute, join, resolve } from "node:path";

export interface Context {
  /** Absolute working directory (after --cwd). */
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  /** $KIWI_CACHE_DIR, else $XDG_CACHE_HOME/kiwi, else ~/.cache/kiwi. */
  cacheDir: string;
  /** True when CI says so (isCI): frozen lockfiles by default. */
  ci: boolean;
  /** stderr is a terminal: progress and prompts are allowed. */
  interactive: boolean;
  /** Colour on stdout/stderr: a TTY and no NO_COLOR. */
  color: boolean;
  /** Milliseconds since the epoch, read through the context so tests can pin time. */
  now: () => number;
}

/** The environment variables kiwi reads; the README's table lists exactly these. */
export const ENV_VARS = {
  KIWI_CACHE_DIR: "where the content-addressed cache lives",
  XDG_CACHE_HOME: "base for the cache when KIWI_CACHE_DIR is unset ($XDG_CACHE_HOME/kiwi; a relative path is ignored, as the XDG spec says)",
  CI: "when set to anything but '', 'false' or '0' (as npm, pnpm and yarn read it: CI=true, CI=1, CI=woodpecker), install uses --frozen-lockfile by default",
  NO_COLOR: "when set (to anything), no colour is printed",
  KIWI_UNLOCKED: "when '1', exec skips the lockfile comparison (development mode)",
  KIWI_MCP_MODE: "default MCP pin mode: auto, verify, pin, approval or off",
  KIWI_SANDBOX: "default sandbox mode: auto, require or off",
  KIWI_BWRAP: "path of the bubblewrap binary the sandbox uses (default: bwrap on PATH; empty: none)",
  KIWI_DEBUG: "when '1', internal errors print their stack trace",
  SSL_CERT_FILE: "a PEM CA bundle that replaces the system CAs for HTTPS to OCI registries",
  NODE_EXTRA_CA_CERTS: "a PEM file of CA certificates a signed MCP bundle may also chain to (besides Node's bundled roots)",
  DOCKER_CONFIG: "folder of the docker config.json whose credentials and helpers kiwi uses for registries (default ~/.docker)",
  KIWI_TEST_FAULT: "tests only: inject a fault at a named write point (e.g. blob-write=ENOSPC@2, lockfile-rename=pause); see src/cache/faults-io.ts",
  KIWI_TEST_FAULT_MARKER: "tests only: a file kiwi writes when it reaches a KIWI_TEST_FAULT pause",
} as const;

export interface ContextOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  isTTY?: boolean;
}

/**
 * Whether stderr is a terminal. A pipe or a file (anything but a character device) is not, which
 * fstat answers without loading node:tty (whose streams cost ~1.5-5 ms of start-up). Of character
 * devices, Linux's device number settles the two common ones the same way: a pseudo-terminal
 * (major 136-143, what a terminal window or ssh gives a git hook) is one, a memory device (major 1:
 * /dev/null, /dev/zero) is not. Only any other character device asks isatty.
 */
function stderrIsTerminal(): boolean {
  let rdev: number;
  try {
    const st = (require("node:fs") as typeof import("node:fs")).fstatSync(2);
    if (!st.isCharacterDevice()) return false;
    rdev = st.rdev;
  } catch {
    return false;
  }
  if (process.platform === "linux") {
    const major = linuxMajor(rdev);
    if (major === 1) return false;
    if (major >= 136 && major <= 143) return true;
  }
  const { isatty } = require("node:tty") as typeof import("node:tty");
  return isatty(2);
}

/** The major number of a Linux device number (glibc's gnu_dev_major, on a dev_t that fits a double). */
export function linuxMajor(rdev: number): number {
  return ((rdev >>> 8) & 0xfff) | (Math.floor(rdev / 2 ** 32) & ~0xfff);
}

/**
 * Whether a CI value means "this is CI". npm, pnpm and yarn (through ci-info) take any value but
 * "false": CI systems set "true", "1" or their own name. "0" and "" are taken as off too, as a
 * user who writes them means.
 */
export function isCI(value: string | undefined): boolean {
  return value !== undefined && value !== "" && !/^(?:false|0)$/i.test(value);
}

/** Builds the Context from the real process, with optional overrides (flags, tests). */
export function createContext(options: ContextOptions = {}): Context {
  const env = options.env ?? process.env;
  const cwd = resolve(process.cwd(), options.cwd ?? ".");
  // node:os only without HOME: evaluating the module costs every call ~0.3 ms of start-up.
  const home = env.HOME || (require("node:os") as typeof import("node:os")).homedir();
  // The XDG base directory spec: a relative XDG_CACHE_HOME is invalid and ignored (taken from the
  // working folder, it would put a cache into each project kiwi runs in).
  const cacheDir = env.KIWI_CACHE_DIR
    ? resolve(cwd, env.KIWI_CACHE_DIR)
    : env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)
      ? join(env.XDG_CACHE_HOME, "kiwi")
      : join(home, ".cache", "kiwi");
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== "";
  // Asked lazily: touching process.stderr builds Node's stream machinery (~9 ms of start-up),
  // and a successful kiwi exec never needs to know.
  let interactive = options.isTTY;
  const isInteractive = () => (interactive ??= stderrIsTerminal());
  return {
    cwd,
    env,
    home,
    cacheDir,
    ci: isCI(env.CI),
    get interactive() {
      return isInteractive();
    },
    get color() {
      return isInteractive() && !noColor;
    },
    now: () => Date.now(),
  };
}
