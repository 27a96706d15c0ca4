// Shared pieces of the lock/install/verify/cache end-to-end tests: a small demo project and a
// kiwi runner bound to one temp HOME and cache.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { KIWI_BIN, type RunResult, hermeticEnv, runKiwi } from "../helpers/kiwi.ts";
import { makeProject, makeTemp } from "../helpers/tree.ts";

/** A project with a directory tool (script + lib + executable bit), a single-file API tool and a shell script tool. */
export function demoProject(): string {
  return makeProject({
    ".ai/tools/dp/tool.yaml": "tool_id: dp\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n  timeout: 1.0\n",
    ".ai/tools/dp/main.py": { content: "from lib.helper import X\nprint(X)\n", mode: 0o755 },
    ".ai/tools/dp/lib/helper.py": "X = 1\n",
    ".ai/tools/weather.yaml": "tool_id: weather\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig:\n  method: GET\n  url: https://example.com/forecast\n",
    ".ai/tools/greet.sh": { content: "#!/bin/bash\n# ---\n# tool_id: greet\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\necho hi\n", mode: 0o755 },
  });
}

/** A kiwi bound to one environment (HOME, KIWI_CACHE_DIR) and project. */
export function kiwiIn(root: string, extra: Record<string, string | undefined> = {}) {
  const env = hermeticEnv(extra);
  const run = (args: string[], more: Record<string, string | undefined> = {}, stdin?: string): Promise<RunResult> =>
    runKiwi(args, { cwd: root, env: { ...env, ...(more as Record<string, string>) }, stdin, timeoutMs: 60_000 });
  return { env, cache: env.KIWI_CACHE_DIR!, run };
}

/** Every file under `dir` (relative paths), for "nothing partial was left" assertions. */
export function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[])
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name).slice(dir.length + 1))
    .sort();
}

/** True when this process may create mount namespaces (root in a container that allows it). */
export function canUnshareMounts(): boolean {
  if (process.getuid?.() !== 0) return false;
  return Bun.spawnSync(["unshare", "-m", "true"], { stderr: "ignore" }).exitCode === 0;
}

/** Runs kiwi inside a private mount namespace after `setup` (shell) prepared the mounts. */
export async function runKiwiUnshared(setup: string, args: string[], cwd: string, env: Record<string, string>): Promise<RunResult> {
  const { KIWI_BIN } = await import("../helpers/kiwi.ts");
  const script = `${setup} && exec "$0" "$@"`;
  const proc = Bun.spawn(["unshare", "-m", "--propagation", "private", "sh", "-c", script, KIWI_BIN, ...args], { cwd, env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { exitCode, stdout, stderr };
}

/** `kiwi exec args… | head -2` in bash: what head printed, and kiwi's exit status and stderr. */
export async function execIntoHead(env: Record<string, string>, cwd: string, args: string[]): Promise<{ stdout: string; kiwi: number; stderr: string }> {
  // The stderr file is an argument, not a variable: kiwi remembers a launch per environment, so a
  // variable that changes every call would keep each call from replaying the one before.
  const script = 'err=$1; shift; "$0" exec "$@" 2>"$err" | head -2; echo "${PIPESTATUS[0]}"';
  const errFile = join(makeTemp("kiwi-head-"), "stderr");
  const proc = Bun.spawn(["bash", "-c", script, KIWI_BIN, errFile, ...args], { cwd, env, stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const lines = out.split("\n");
  return { stdout: lines.slice(0, 2).join("\n") + "\n", kiwi: Number(lines[2]), stderr: readFileSync(errFile, "utf8") };
}
