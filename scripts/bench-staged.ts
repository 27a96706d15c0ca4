// Times `dist/kiwi check --staged` (the pre-commit check) on a generated tree of 1,000 tools in a
// git repository with one tool changed, with a warm stat cache (a `kiwi lock` ran before), against
// baselines from the same run: a hello-world compiled Bun binary (the floor of any compiled CLI),
// kiwi's start-up, git's own staged listing, a full `kiwi check` and a "least prover" (a compiled
// Bun binary that only takes git's staged list, lstats the entries the staged memo's verdict depends
// on and hashes the lockfile: bench-lib.ts stagedProverBinary), all interleaved round by round.
// The target (issue 14): staged <= 1.2 x (git diff --cached --name-only + the hello-world binary).
// The warm rows answer from the staged memo (the commit retried, the hook run twice); another row
// is the first check of a staged state (the memo removed before each run, every other cache warm),
// and another the same after a relock, as a commit's check comes: the previous check's memo kept,
// the lock index rewritten (touched: a new stat identity) before each run.
// Build first: `bun run build`.
//   bun run scripts/bench-staged.ts [--count 1000] [--files-per-tool 0] [--file-size 10240] [--runs 21] [--keep] [--kiwi path] [--base path]
// --files-per-tool 10 gives the issue's own tree (every tool a folder with ten data files of
// --file-size bytes: ~13,000 entries below .ai/tools instead of ~1,750).
// --base adds another kiwi binary's staged check (e.g. the commit before a change) to the same rounds.
import { appendFileSync, cpSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { RACY_MARGIN_MS } from "../src/cache/stat-cache-io.ts";
import { lockIndexPath } from "../src/lockfile/lock-index-io.ts";
import { relative } from "node:path";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { peekStagedMemo, stagedMemoFile } from "../src/ops/staged-memo-io.ts";
import { type SeriesRow, freshCopy, helloWorldBinary, kiwiBinary, measureProcess, numberFlag, runInterleaved, runSeries, stagedProverBinary } from "./bench-lib.ts";
import { generateTree } from "./gen-tree.ts";

const args = process.argv.slice(2);
const count = numberFlag(args, "--count", 1000);
const filesPerTool = numberFlag(args, "--files-per-tool", 0);
const fileSize = numberFlag(args, "--file-size", 10240);
const runs = numberFlag(args, "--runs", 21);
const keep = args.includes("--keep");
const kiwi = kiwiBinary();
const baseAt = args.indexOf("--base");
// A copy made now, as kiwiBinary's (bench-lib.ts freshCopy says why).
const baseKiwi = baseAt === -1 ? undefined : freshCopy(args[baseAt + 1]!);

function sh(argv: string[], cwd: string, env: Record<string, string>): void {
  const proc = Bun.spawnSync(argv, { cwd, env, stdout: "ignore", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`${argv.join(" ")} failed: ${proc.stderr.toString()}`);
}

const work = mkdtempSync(join(tmpdir(), "kiwi-bench-staged-"));
try {
  const tree = join(work, "project");
  const summary = generateTree({ dir: tree, count, filesPerTool, fileSize: filesPerTool > 0 ? fileSize : 0, seed: 1 });
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
  // A tree locked within the racy margin of its writing has its entries indexed as unknown (each
  // reads as changed until a later lock): the tree a team commits to was written long before.
  await Bun.sleep(RACY_MARGIN_MS + 50);
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
  await measureProcess([kiwi, "check", "--staged"], env, tree);
  const stale = await runSeries("kiwi check --staged (lockfile stale)", runs, [kiwi, "check", "--staged"], () => env, tree);
  sh([kiwi, "lock"], tree, env);
  sh(["git", "add", "tool.lock.json"], tree, env);
  // A commit comes seconds after the edit: files younger than the racy margin are never remembered.
  const written = Math.max(...[changed, "tool.lock.json"].map((p) => statSync(join(tree, p)).ctimeMs));
  await Bun.sleep(Math.max(0, written + RACY_MARGIN_MS + 50 - Date.now()));
  // And `git commit` refreshes its index before it runs the pre-commit hook. Without that, the
  // lockfile staged in the second it was written stays racily clean in git's index, and every
  // status of it hashes its 1.9 MB again (~3.5 ms more for git than in a real commit's hook).
  sh(["git", "update-index", "-q", "--refresh"], tree, env);
  await measureProcess([kiwi, "check", "--staged"], env, tree);

  const hello = helloWorldBinary(work);
  // The first check of a staged state: the memo removed before each run (by a shell, ~1 ms), all else warm.
  const memoDir = join(env.KIWI_CACHE_DIR!, "check", "staged");
  // The base binary gets a copy of the warm cache: sharing one, the two would evict each other's
  // staged memo (one slot per project) and every "warm" row would be a first check.
  const baseEnv = { ...env, KIWI_CACHE_DIR: join(work, "cache-base") };
  if (baseKiwi) cpSync(env.KIWI_CACHE_DIR!, baseEnv.KIWI_CACHE_DIR, { recursive: true });
  const baseMemoDir = join(baseEnv.KIWI_CACHE_DIR, "check", "staged");
  const realTree = realpathSync(tree);
  // The least prover stats exactly the entries the staged memo's verdict depends on.
  const dependencies = peekStagedMemo(stagedMemoFile(env.KIWI_CACHE_DIR!, realTree, false))?.dependencies;
  const proverList = join(work, "prover-list");
  if (dependencies) writeFileSync(proverList, dependencies);
  const proved = dependencies ? new TextDecoder().decode(dependencies).split("\0").filter(Boolean).length : 0;
  const prover = dependencies ? stagedProverBinary(work) : undefined;
  const relocked = (cacheDir: string, binary: string) => ["sh", "-c", 'touch "$1" && exec "$2" check --staged', "sh", lockIndexPath(cacheDir, realTree), binary];
  const [floor, startup, gitList, least, full, staged, files, miss, afterLock, ...before] = await runInterleaved(
    [
      { name: "baseline: hello-world compiled Bun binary", argv: [hello] },
      { name: "baseline: kiwi --version", argv: [kiwi, "--version"] },
      { name: "baseline: git diff --cached --name-only", argv: ["git", "diff", "--cached", "--name-only"] },
      { name: "baseline: least prover (see below)", argv: prover ? [prover, proverList, join(realTree, ".ai/tools"), join(realTree, "tool.lock.json")] : [hello] },
      { name: "baseline: kiwi check (all tools, warm)", argv: [kiwi, "check"] },
      { name: "kiwi check --staged (one tool, warm)", argv: [kiwi, "check", "--staged"] },
      { name: "kiwi check --staged <file> (as pre-commit)", argv: [kiwi, "check", "--staged", changed, "tool.lock.json"] },
      { name: "kiwi check --staged (first check: memo removed)", argv: ["sh", "-c", 'rm -rf "$1" && exec "$2" check --staged', "sh", memoDir, kiwi] },
      { name: "kiwi check --staged (first check after a relock)", argv: relocked(env.KIWI_CACHE_DIR!, kiwi) },
      ...(baseKiwi
        ? [
            { name: "base: kiwi check --staged", argv: [baseKiwi, "check", "--staged"], env: baseEnv },
            { name: "base: kiwi check --staged <file>", argv: [baseKiwi, "check", "--staged", changed, "tool.lock.json"], env: baseEnv },
            { name: "base: first check (memo removed)", argv: ["sh", "-c", 'rm -rf "$1" && exec "$2" check --staged', "sh", baseMemoDir, baseKiwi], env: baseEnv },
            { name: "base: first check after a relock", argv: relocked(baseEnv.KIWI_CACHE_DIR, baseKiwi), env: baseEnv },
          ]
        : []),
    ],
    runs,
    () => env,
    tree,
  ) as SeriesRow[] as [SeriesRow, SeriesRow, SeriesRow, SeriesRow, SeriesRow, SeriesRow, SeriesRow, SeriesRow, SeriesRow, ...SeriesRow[]];

  const base = gitList.median + floor.median;
  const ms = (r: SeriesRow) => `${r.median.toFixed(1)} ms (min ${r.min.toFixed(1)})`;
  process.stdout.write(`\nfloor: hello world ${ms(floor)} + git diff --cached --name-only ${ms(gitList)} = ${base.toFixed(1)} ms\n`);
  process.stdout.write(`staged ${ms(staged)}: x${(staged.median / base).toFixed(2)}, with file names ${ms(files)}: x${(files.median / base).toFixed(2)} (target <= 1.2)\n`);
  process.stdout.write(`first check of a staged state ${ms(miss)}: x${(miss.median / base).toFixed(2)}, after a relock (previous memo kept) ${ms(afterLock)}: x${(afterLock.median / base).toFixed(2)}\n`);
  if (prover) {
    // A compiled Bun binary that only asks git what is staged while it lstats the entries the memo's
    // verdict depends on and hashes the lockfile: the least a check that proves the tree costs.
    process.stdout.write(`least prover (git's staged list + ${proved} lstats + the lockfile's sha256, no checking) ${ms(least)}: x${(least.median / base).toFixed(2)} of the floor; `);
    process.stdout.write(`first check x${(miss.median / least.median).toFixed(2)} of it, memo answers x${(staged.median / least.median).toFixed(2)}\n`);
  } else process.stdout.write("least prover: not run (no staged memo with dependencies to take its paths from)\n");
  if (before.length === 4) {
    process.stdout.write(`base binary: staged ${ms(before[0]!)}: x${(before[0]!.median / base).toFixed(2)}, with file names ${ms(before[1]!)}: x${(before[1]!.median / base).toFixed(2)}\n`);
    process.stdout.write(`base binary: first check ${ms(before[2]!)}: x${(before[2]!.median / base).toFixed(2)}; new/base x${(miss.median / before[2]!.median).toFixed(2)} wall${miss.cpu && before[2]!.cpu ? `, x${(miss.cpu / before[2]!.cpu).toFixed(2)} cpu` : ""}\n`);
    process.stdout.write(`base binary: first check after a relock ${ms(before[3]!)}: x${(before[3]!.median / base).toFixed(2)}; new/base x${(afterLock.median / before[3]!.median).toFixed(2)} wall${afterLock.cpu && before[3]!.cpu ? `, x${(afterLock.cpu / before[3]!.cpu).toFixed(2)} cpu` : ""}\n`);
  }
  process.stdout.write("ratios (same run):\n");
  process.stdout.write(`  staged / full check        ${(staged.median / full.median).toFixed(2)}x\n`);
  process.stdout.write(`  first check / full check   ${(miss.median / full.median).toFixed(2)}x\n`);
  process.stdout.write(`  staged / kiwi start-up     ${(staged.median / startup.median).toFixed(1)}x\n`);
  process.stdout.write(`  staged / git's own listing ${(staged.median / gitList.median).toFixed(1)}x\n`);
  process.stdout.write(`\ntarget < 300 ms: staged ${staged.median.toFixed(0)} ms (${staged.median < 300 ? "met" : "OVER"}), with file names ${files.median.toFixed(0)} ms (${files.median < 300 ? "met" : "OVER"})\n`);
  if ([staged, files, miss, afterLock].some((r) => r.exitCodes.some((c) => c !== 0))) process.stdout.write("warning: the passing commit did not exit 0\n");
  if (stale.exitCodes.some((c) => c !== 3)) process.stdout.write("warning: the stale lockfile did not exit 3\n");
  const load = (await Bun.file("/proc/loadavg").text().catch(() => "")).split(" ").slice(0, 3).join(" ");
  if (load) process.stdout.write(`load average: ${load} (wall times on a busy machine overstate; cpu is steadier)\n`);
} finally {
  if (keep) process.stdout.write(`kept ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
