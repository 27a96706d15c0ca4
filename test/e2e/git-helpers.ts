// Real git repositories for the hook and pre-commit end-to-end tests: a temp HOME, no global or
// system git config, a fixed identity, and the compiled kiwi first on PATH.
import { join } from "node:path";
import { KIWI_BIN, hermeticEnv } from "../helpers/kiwi.ts";

export interface Proc {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A hermetic environment for git, pre-commit and kiwi together (dist/ first on PATH). */
export function repoEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = hermeticEnv();
  return {
    ...env,
    PATH: `${join(KIWI_BIN, "..")}:${env.PATH ?? "/usr/bin:/bin"}`,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: join(env.HOME!, ".gitconfig"),
    GIT_AUTHOR_NAME: "kiwi test",
    GIT_AUTHOR_EMAIL: "test@kiwi.invalid",
    GIT_COMMITTER_NAME: "kiwi test",
    GIT_COMMITTER_EMAIL: "test@kiwi.invalid",
    // pre-commit keeps its clones here; never the developer's ~/.cache/pre-commit.
    PRE_COMMIT_HOME: join(env.HOME!, ".cache", "pre-commit"),
    ...extra,
  };
}

/** Runs a command to completion (killed after 60 s so a hang fails the test instead of the suite). */
export async function run(argv: string[], cwd: string, env: Record<string, string>): Promise<Proc> {
  const proc = Bun.spawn(argv, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { exitCode, stdout, stderr };
}

/** Runs git and fails loudly when it fails. */
export async function git(cwd: string, env: Record<string, string>, ...args: string[]): Promise<string> {
  const r = await run(["git", ...args], cwd, env);
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed (${r.exitCode}): ${r.stderr}`);
  return r.stdout;
}
