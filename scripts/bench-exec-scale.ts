// Does the size of a project slow a single call? The same three-link chain (python script ->
// python_runtime -> subprocess) is run warm in a project of 100 tools and in one of 10,000
// (scripts/gen-tree.ts, MCP pinning off), interleaved, with peak memory; the ratio is the figure
// (target <= 1.1). Usage: bun run build && bun run scripts/bench-exec-scale.ts [--runs 20] [--large 10000] [--kiwi path]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kiwiBinary, measureProcess, median, numberFlag } from "./bench-lib.ts";
import { generateTree } from "./gen-tree.ts";

const args = process.argv.slice(2);
const runs = numberFlag(args, "--runs", 20);
const sizes = [100, numberFlag(args, "--large", 10_000)];
const kiwi = kiwiBinary();
const work = mkdtempSync(join(tmpdir(), "kiwi-bench-scale-"));
const env: Record<string, string> = { PATH: `/usr/bin:/bin:${process.env.PATH ?? ""}`, HOME: join(work, "home"), KIWI_CACHE_DIR: join(work, "cache"), KIWI_MCP_MODE: "off", LANG: "C.UTF-8", NO_COLOR: "1" };
mkdirSync(env.HOME!, { recursive: true });
const INPUT = JSON.stringify({ numbers: [1, 2, 3] });

const projects = sizes.map((count) => {
  const dir = join(work, `p${count}`);
  generateTree({ dir, count, filesPerTool: 0, fileSize: 1024, seed: 1 });
  mkdirSync(join(dir, ".ai/tools/summer"), { recursive: true });
  writeFileSync(join(dir, ".ai/tools/summer/tool.yaml"), "tool_id: summer\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\nparameters:\n  - { name: numbers, type: array, required: true }\n");
  writeFileSync(join(dir, ".ai/tools/summer/main.py"), "import json, sys\nprint(sum(json.load(sys.stdin)['numbers']))\n");
  const lock = Bun.spawnSync([kiwi, "lock"], { cwd: dir, env, stdout: "ignore", stderr: "pipe" });
  if (lock.exitCode !== 0) throw new Error(`kiwi lock in ${dir} failed: ${lock.stderr.toString()}`);
  return { count, dir };
});
// The chain index is written only for a lockfile past the 2 s racy margin, as a real project's is.
await Bun.sleep(2500);

const argv = [kiwi, "exec", "summer", "--sandbox=off", "--params", INPUT];
const samples = new Map(projects.map((p) => [p.count, [] as { ms: number; peakKb?: number }[]]));
for (const p of projects) await measureProcess(argv, env, p.dir); // warm: index, memos, page cache
for (let i = 0; i < runs; i++) for (const p of projects) samples.get(p.count)!.push(await measureProcess(argv, env, p.dir));
rmSync(work, { recursive: true, force: true });

console.log(`warm kiwi exec of one three-link chain (median of ${runs} runs each, interleaved)`);
const medians = sizes.map((count) => {
  const s = samples.get(count)!;
  const ms = median(s.map((x) => x.ms));
  const peak = Math.max(...s.map((x) => x.peakKb ?? 0)) / 1024;
  console.log(`  ${String(count).padStart(6)} tools: ${ms.toFixed(1)} ms, peak ${peak.toFixed(1)} MB`);
  return ms;
});
console.log(`  ratio ${sizes[1]} vs ${sizes[0]} tools: ${(medians[1]! / medians[0]!).toFixed(2)} (target <= 1.1)`);
