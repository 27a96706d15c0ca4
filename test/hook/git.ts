// A real git repository in a temp dir, for hook tests (no global git config is read).
import { join } from "node:path";
import { makeTemp } from "../helpers/tree.ts";

/** Environment that keeps git away from the developer's config and identity. */
export function gitEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: join(home, ".gitconfig-none"),
    GIT_AUTHOR_NAME: "kiwi test",
    GIT_AUTHOR_EMAIL: "test@kiwi.invalid",
    GIT_COMMITTER_NAME: "kiwi test",
    GIT_COMMITTER_EMAIL: "test@kiwi.invalid",
    LANG: "C.UTF-8",
  };
}

/** Runs git in `cwd` and returns stdout; throws with stderr on failure. */
export function git(cwd: string, args: string[], env: Record<string, string> = gitEnv(cwd)): string {
  const proc = Bun.spawnSync(["git", ...args], { cwd, env, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

/** A fresh repository (default branch main) and its path. */
export function makeRepo(): string {
  const dir = makeTemp("kiwi-repo-");
  git(dir, ["init", "-q", "-b", "main", "."]);
  return dir;
}
