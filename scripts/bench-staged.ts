// Times `dist/kiwi check --staged` (the pre-commit check) on a generated tree of 1,000 tools in a
// git repository with one tool changed, with a warm stat cache (a `kiwi lock` ran before), against
// baselines from the same run: kiwi's start-up, git's own staged listing and a full `kiwi check`.
// Build first: `bun run build`.
//   bun run scripts/bench-staged.ts [--count 1000] [--runs 11] [--keep]
import { appendFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { relative } from "node:path";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateTree } from "./gen-tree.ts";

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const count = flag("--count", 1000);
const runs = flag("--runs", 11);
const keep = args.includes("--keep");

const kiwi = join(import.meta.dir, "..", "dist", "kiwi");
if (!existsSync(kiwi)) {
  process.stderr.write(`${kiwi} is missing: run "bun run build" first\n`);
  process.exit(2);
}
const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

interface Sample {
  ms: number;
  cpuMs?: number;
  peakKb?: number;
  exitCode: number;
}

/** One run: wall time, and CPU time and peak RSS when /usr/bin/time is there. */
async function measure(argv: string[], env: Record<string, string>, cwd: string): Promise<Sample> {
  const wrapped = TIME ? [TIME, "-f", "KIWI_BENCH %U %S %M", ...argv] : argv;
  const started = performance.now();
  const proc = Bun.spawn(wrapped, { cwd, env, stdout: "ignore", stderr: "pipe" });
  const [stderr, exitCode] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  const ms = performance.now() - started;
  const line = /KIWI_BENCH ([\d.]+) ([\d.]+) (\d+)/.exec(stderr);
  return line ? { ms, cpuMs: (Number(line[1]) + Number(line[2])) * 1000, peakKb: Number(line[3]), exitCode } : { ms, exitCode };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function series(name: string, argv: string[], env: Record<string, string>, cwd: string) {
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) samples.push(await measure(argv, env, cwd));
  const row = {
    median: median(samples.map((s) => s.ms)),
    min: Math.min(...samples.map((s) => s.ms)),
    cpu: samples.every((s) => s.cpuMs !== undefined) ? median(samples.map((s) => s.cpuMs!)) : undefined,
    peakMb: samples.every((s) => s.peakKb !== undefined) ? Math.max(...samples.map((s) => s.peakKb!)) / 1024 : undefined,
    exitCodes: [...new Set(samples.map((s) => s.exitCode))],
  };
  const cpu = row.cpu === undefined ? "" : `  cpu ${row.cpu.toFixed(0).padStart(4)} ms`;
  const peak = row.peakMb === undefined ? "" : `  peak ${row.peakMb.toFixed(1)} MB`;
  process.stdout.write(`${name.padEnd(46)} median ${row.median.toFixed(0).padStart(4)} ms  min ${row.min.toFixed(0).padStart(4)} ms${cpu}${peak}  exit ${row.exitCodes.join(",")}\n`);
  return row;
}

function sh(argv: string[], cwd: string, env: Record<string, string>): void {
  const proc = Bun.spawnSync(argv, { cwd, env, stdout: "ignore", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`${argv.join(" ")} failed: ${proc.stderr.toString()}`);
}

const work = mkdtempSync(join(tmpdir(), "kiwi-bench-staged-"));
try {
  const tree = join(work, "project");
  const summary = generateTree({ dir: tree, count, filesPerTool: 0, fileSize: 0, seed: 1 });
  process.stdout.write(`tree: ${summary.tools} tools, ${summary.files} files in ${tree}\n`);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: work,
    NO_COLOR: "1",
    LANG: "C.UTF-8",
    KIWI_CACHE_DIR: join(work, "cache"),
    // The generated tree has MCP servers that do not exist; never start them.
    KIWI_MCP_MODE: "off",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: join(work, ".gitconfig"),
    GIT_AUTHOR_NAME: "bench",
    GIT_AUTHOR_EMAIL: "bench@kiwi.invalid",
    GIT_COMMITTER_NAME: "bench",
    GIT_COMMITTER_EMAIL: "bench@kiwi.invalid",
  };
  sh([kiwi, "lock"], tree, env);
  sh(["git", "init", "-q", "-b", "main", "."], tree, env);
  sh(["git", "add", "-A"], tree, env);
  sh(["git", "commit", "-q", "-m", "tree"], tree, env);

  // One tool changed: a line added to the first Python directory tool's entry point.
  const entry = (readdirSync(join(tree, ".ai/tools"), { recursive: true }) as string[]).sort().find((p) => p.endsWith("/main.py"));
  if (!entry) throw new Error("the generated tree has no Python directory tool");
  const changed = relative(tree, join(tree, ".ai/tools", entry));
  appendFileSync(join(tree, changed), "# one change\n");
  sh(["git", "add", changed], tree, env);
  // Stale first (the common mistake), then relocked and staged (the commit that passes). The
  // relock also leaves the stat cache warm; a priming run caches the changed script's syntax verdict.
  await measure([kiwi, "check", "--staged"], env, tree);
  const stale = await series("kiwi check --staged (lockfile stale)", [kiwi, "check", "--staged"], env, tree);
  sh([kiwi, "lock"], tree, env);
  sh(["git", "add", "tool.lock.json"], tree, env);
  await measure([kiwi, "check", "--staged"], env, tree);

  const startup = await series("baseline: kiwi --version", [kiwi, "--version"], env, tree);
  const gitList = await series("baseline: git diff --cached --name-only", ["git", "diff", "--cached", "--name-only"], env, tree);
  const full = await series("baseline: kiwi check (all tools, warm)", [kiwi, "check"], env, tree);
  const staged = await series("kiwi check --staged (one tool, warm)", [kiwi, "check", "--staged"], env, tree);
  const files = await series("kiwi check --staged <file> (as pre-commit)", [kiwi, "check", "--staged", changed, "tool.lock.json"], env, tree);

  process.stdout.write("\nratios (same run):\n");
  process.stdout.write(`  staged / full check        ${(staged.median / full.median).toFixed(2)}x\n`);
  process.stdout.write(`  staged / kiwi start-up     ${(staged.median / startup.median).toFixed(1)}x\n`);
  process.stdout.write(`  staged / git's own listing ${(staged.median / gitList.median).toFixed(1)}x\n`);
  process.stdout.write(`\ntarget < 300 ms: staged ${staged.median.toFixed(0)} ms (${staged.median < 300 ? "met" : "OVER"}), with file names ${files.median.toFixed(0)} ms (${files.median < 300 ? "met" : "OVER"})\n`);
  if (staged.exitCodes.some((c) => c !== 0) || files.exitCodes.some((c) => c !== 0)) process.stdout.write("warning: the passing commit did not exit 0\n");
  if (stale.exitCodes.some((c) => c !== 3)) process.stdout.write("warning: the stale lockfile did not exit 3\n");
  const load = (await Bun.file("/proc/loadavg").text().catch(() => "")).split(" ").slice(0, 3).join(" ");
  if (load) process.stdout.write(`load average: ${load} (wall times on a busy machine overstate; cpu is steadier)\n`);
} finally {
  if (keep) process.stdout.write(`kept ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
