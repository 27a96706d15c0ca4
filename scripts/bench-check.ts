// Times `dist/kiwi check` end to end over a generated tree (default 1,000 tools), with peak memory,
// against baselines measured in the same run: kiwi's own start-up (`--version`) and reading every
// file of the tree (`find -exec cat`). Build first: `bun run build`.
//   bun run scripts/bench-check.ts [--count 1000] [--runs 7] [--keep]
// "cold" runs start with an empty cache dir (every script is syntax-checked by its interpreter);
// "warm" runs reuse it (script verdicts are remembered by content digest).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kiwiBinary, measureProcess, numberFlag, runSeries } from "./bench-lib.ts";
import { generateTree } from "./gen-tree.ts";

const args = process.argv.slice(2);
const count = numberFlag(args, "--count", 1000);
const runs = numberFlag(args, "--runs", 7);
const keep = args.includes("--keep");
const kiwi = kiwiBinary();

const work = mkdtempSync(join(tmpdir(), "kiwi-bench-check-"));
try {
  const tree = join(work, "project");
  const summary = generateTree({ dir: tree, count, filesPerTool: 0, fileSize: 0, seed: 1 });
  process.stdout.write(`tree: ${summary.tools} tools, ${summary.files} files, ${(summary.bytes / 1024).toFixed(0)} KiB in ${tree}\n`);
  const baseEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? work, NO_COLOR: "1", LANG: "C.UTF-8" };
  let coldN = 0;
  const coldEnv = () => ({ ...baseEnv, KIWI_CACHE_DIR: join(work, `cold-cache-${coldN++}`) });
  const warmEnv = () => ({ ...baseEnv, KIWI_CACHE_DIR: join(work, "warm-cache") });

  const startup = await runSeries("baseline: kiwi --version", runs, [kiwi, "--version"], () => baseEnv, tree);
  const catAll = await runSeries("baseline: find -exec cat (all files)", runs, ["sh", "-c", "find .ai -type f -exec cat {} + > /dev/null"], () => baseEnv, tree);
  const cold = await runSeries("kiwi check (cold: empty cache)", Math.max(3, Math.ceil(runs / 2)), [kiwi, "check"], coldEnv, tree);
  await measureProcess([kiwi, "check"], warmEnv(), tree); // prime the syntax cache
  const warm = await runSeries("kiwi check (warm: cached syntax)", runs, [kiwi, "check"], warmEnv, tree);
  const noSyntax = await runSeries("kiwi check --json (warm)", runs, [kiwi, "check", "--json"], warmEnv, tree);

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
