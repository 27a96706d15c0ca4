// Times `dist/kiwi check` end to end over a generated tree (default 1,000 tools), with peak memory,
// against baselines measured in the same run: kiwi's own start-up (`--version`) and reading every
// file of the tree (`find -exec cat`). Build first: `bun run build`.
//   bun run scripts/bench-check.ts [--count 1000] [--runs 7] [--keep]
// "cold" runs start with an empty cache dir (every script is syntax-checked by its interpreter);
// "warm" runs reuse it (script verdicts are remembered by content digest).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateTree } from "./gen-tree.ts";

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const count = flag("--count", 1000);
const runs = flag("--runs", 7);
const keep = args.includes("--keep");

const root = join(import.meta.dir, "..");
const kiwi = join(root, "dist", "kiwi");
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

/** Runs a command once: wall time, CPU time and peak RSS (via /usr/bin/time, else /proc polling). */
async function measure(argv: string[], env: Record<string, string>, cwd: string): Promise<Sample> {
  const wrapped = TIME ? [TIME, "-f", "KIWI_BENCH %U %S %M", ...argv] : argv;
  const started = performance.now();
  const proc = Bun.spawn(wrapped, { cwd, env, stdout: "ignore", stderr: "pipe" });
  let peakKb = 0;
  const poll = TIME
    ? undefined
    : setInterval(() => {
        try {
          const status = require("node:fs").readFileSync(`/proc/${proc.pid}/status`, "utf8") as string;
          const hwm = /VmHWM:\s+(\d+)/.exec(status);
          if (hwm) peakKb = Math.max(peakKb, Number(hwm[1]));
        } catch {
          // The process is gone.
        }
      }, 2);
  const [stderr, exitCode] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  const ms = performance.now() - started;
  if (poll) clearInterval(poll);
  const line = /KIWI_BENCH ([\d.]+) ([\d.]+) (\d+)/.exec(stderr);
  if (line) return { ms, cpuMs: (Number(line[1]) + Number(line[2])) * 1000, peakKb: Number(line[3]), exitCode };
  return { ms, peakKb: peakKb || undefined, exitCode };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function series(name: string, times: number, argv: string[], env: () => Record<string, string>, cwd: string) {
  const samples: Sample[] = [];
  for (let i = 0; i < times; i++) samples.push(await measure(argv, env(), cwd));
  const row = {
    name,
    median: median(samples.map((s) => s.ms)),
    min: Math.min(...samples.map((s) => s.ms)),
    cpu: samples.every((s) => s.cpuMs !== undefined) ? median(samples.map((s) => s.cpuMs!)) : undefined,
    peakMb: samples.every((s) => s.peakKb !== undefined) ? Math.max(...samples.map((s) => s.peakKb!)) / 1024 : undefined,
    exitCodes: [...new Set(samples.map((s) => s.exitCode))],
  };
  const cpu = row.cpu === undefined ? "" : `  cpu ${row.cpu.toFixed(0).padStart(5)} ms`;
  const peak = row.peakMb === undefined ? "" : `  peak ${row.peakMb.toFixed(1)} MB`;
  process.stdout.write(`${name.padEnd(34)} median ${row.median.toFixed(0).padStart(5)} ms  min ${row.min.toFixed(0).padStart(5)} ms${cpu}${peak}  exit ${row.exitCodes.join(",")}\n`);
  return row;
}

const work = mkdtempSync(join(tmpdir(), "kiwi-bench-check-"));
try {
  const tree = join(work, "project");
  const summary = generateTree({ dir: tree, count, filesPerTool: 0, fileSize: 0, seed: 1 });
  process.stdout.write(`tree: ${summary.tools} tools, ${summary.files} files, ${(summary.bytes / 1024).toFixed(0)} KiB in ${tree}\n`);
  const baseEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? work, NO_COLOR: "1", LANG: "C.UTF-8" };
  let coldN = 0;
  const coldEnv = () => ({ ...baseEnv, KIWI_CACHE_DIR: join(work, `cold-cache-${coldN++}`) });
  const warmEnv = () => ({ ...baseEnv, KIWI_CACHE_DIR: join(work, "warm-cache") });

  const startup = await series("baseline: kiwi --version", runs, [kiwi, "--version"], () => baseEnv, tree);
  const catAll = await series("baseline: find -exec cat (all files)", runs, ["sh", "-c", "find .ai -type f -exec cat {} + > /dev/null"], () => baseEnv, tree);
  const cold = await series("kiwi check (cold: empty cache)", Math.max(3, Math.ceil(runs / 2)), [kiwi, "check"], coldEnv, tree);
  await measure([kiwi, "check"], warmEnv(), tree); // prime the syntax cache
  const warm = await series("kiwi check (warm: cached syntax)", runs, [kiwi, "check"], warmEnv, tree);
  const noSyntax = await series("kiwi check --json (warm)", runs, [kiwi, "check", "--json"], warmEnv, tree);

  process.stdout.write("\nratios (same run):\n");
  process.stdout.write(`  warm check / kiwi start-up      ${(warm.median / startup.median).toFixed(1)}x\n`);
  process.stdout.write(`  warm check / cat of every file  ${(warm.median / catAll.median).toFixed(1)}x\n`);
  process.stdout.write(`  cold check / warm check         ${(cold.median / warm.median).toFixed(1)}x\n`);
  process.stdout.write(`\ntarget <= 500 ms end to end: warm ${warm.median.toFixed(0)} ms (${warm.median <= 500 ? "met" : "OVER"}), cold ${cold.median.toFixed(0)} ms (${cold.median <= 500 ? "met" : "OVER"})\n`);
  if (noSyntax.exitCodes.some((c) => c !== 0) || warm.exitCodes.some((c) => c !== 0)) {
    process.stdout.write("warning: kiwi check did not exit 0 on the generated tree\n");
  }
  const load = (await Bun.file("/proc/loadavg").text().catch(() => "")).split(" ").slice(0, 3).join(" ");
  if (load) process.stdout.write(`load average during the run: ${load} (wall times on a busy machine overstate; cpu is steadier)\n`);
} finally {
  if (keep) process.stdout.write(`kept ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
