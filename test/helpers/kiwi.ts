// Runs the compiled binary (dist/kiwi) the way a user does, with a temp HOME and cache so no test
// sees the developer's machine. Build first: `bun run build` (the test script does).
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { makeTemp } from "./tree.ts";

export const REPO_ROOT = join(import.meta.dir, "..", "..");
export const KIWI_BIN = join(REPO_ROOT, "dist", "kiwi");

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  stdin?: string;
  /** Kills the process after this many ms (a hang is a test failure, not a stuck suite). */
  timeoutMs?: number;
}

/** A hermetic environment: temp HOME and cache, no colour, no CI, PATH kept. */
export function hermeticEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const home = makeTemp("kiwi-home-");
  mkdirSync(join(home, ".cache"), { recursive: true });
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: home,
    KIWI_CACHE_DIR: join(home, ".cache", "kiwi"),
    // npm's own cache is content-addressed and shared by the suite, so packages download once.
    npm_config_cache: join(homedir(), ".cache", "kiwi-test", "npm"),
    LANG: "C.UTF-8",
    NO_COLOR: "1",
    TMPDIR: process.env.TMPDIR,
    ...extra,
  };
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

/** Runs `dist/kiwi args…` and collects exit code, stdout and stderr. */
export async function runKiwi(args: string[], options: RunOptions = {}): Promise<RunResult> {
  if (!existsSync(KIWI_BIN)) throw new Error(`${KIWI_BIN} is missing: run "bun run build" first`);
  const proc = Bun.spawn([KIWI_BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env ?? hermeticEnv(),
    stdin: options.stdin === undefined ? "ignore" : new TextEncoder().encode(options.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), options.timeoutMs ?? 20_000);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { exitCode, stdout, stderr };
}
