// kiwi's main job on a demo tool tree, as the README's first command runs it: build the binary,
// scaffold a project with `kiwi init`, then check, install (lock + cache), inspect, run verified
// tools, and show that a tampered file is refused. Each step prints the command and its output.
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const repo = join(import.meta.dir, "..");
const kiwi = join(repo, "dist", "kiwi");
const bold = (s: string) => (process.stdout.isTTY && !process.env.NO_COLOR ? `\x1b[1m${s}\x1b[22m` : s);

function run(argv: string[], cwd: string, env: Record<string, string>, expectExit = 0): string {
  process.stdout.write(`\n${bold(`$ ${argv.map((a) => (/[\s"'{}]/.test(a) ? `'${a}'` : a)).join(" ")}`)}\n`);
  const proc = Bun.spawnSync(argv, { cwd, env, stdout: "pipe", stderr: "pipe" });
  const out = proc.stdout.toString();
  const err = proc.stderr.toString();
  process.stdout.write(out);
  if (err) process.stdout.write(err.replace(/^/gm, "  │ "));
  if (proc.exitCode !== expectExit) {
    process.stderr.write(`\ndemo step failed: expected exit ${expectExit}, got ${proc.exitCode}\n`);
    process.exit(1);
  }
  return out;
}

process.stdout.write(bold("Building dist/kiwi …\n"));
const build = Bun.spawnSync([process.execPath, "run", join(repo, "scripts/build.ts")], { cwd: repo, stdout: "ignore", stderr: "inherit" });
if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);

const project = mkdtempSync(join(tmpdir(), "kiwi-demo-"));
const home = mkdtempSync(join(tmpdir(), "kiwi-demo-home-"));
const env: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  KIWI_CACHE_DIR: join(home, "cache"),
  LANG: "C.UTF-8",
  ...(process.env.NO_COLOR ? { NO_COLOR: process.env.NO_COLOR } : {}),
};
try {
  process.stdout.write(`${bold("Demo project:")} ${project}\n`);
  run([kiwi, "init"], project, env);
  run([kiwi, "check"], project, env);
  run([kiwi, "install"], project, env);
  run([kiwi, "tree", "word_count"], project, env);
  run([kiwi, "exec", "word_count", "--param", "text=to be or not to be, that is the question", "--param", "top=2"], project, env);
  run([kiwi, "exec", "greet", "--param", "name=Ada; rm -rf ~", "--param", "times=2"], project, env);
  run([kiwi, "exec", "word_count", "--param", "top=99"], project, env, 7);
  run([kiwi, "exec", "greet", "--param", "name=Ada", "--dry-run"], project, env);
  process.stdout.write(`\n${bold("Tampering with word_count.py after locking …")}\n`);
  appendFileSync(join(project, ".ai/tools/word_count.py"), "\nprint('injected')\n");
  run([kiwi, "exec", "word_count", "--param", "text=hi"], project, env, 6);
  run([kiwi, "verify"], project, env, 3);
  process.stdout.write(`\n${bold("Done.")} Every tool ran only after its whole chain was verified against tool.lock.json.\n`);
} finally {
  rmSync(project, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
