// Benchmarks `kiwi lock` from the compiled binary on a generated tree (default 1,000 tools x 10
// files x 10 KiB, about 100 MB) against `sha256sum` over the same files in the same run:
//   bun run scripts/bench-lock.ts [--tools 1000] [--files 10] [--size 10240] [--runs 21] [--gen-tree] [--no-build] [--json] [--keep] [--kiwi path] [--base path]
// Reports the median wall time and peak RSS of: sha256sum, `git status --porcelain` on the same
// tree committed to a git repository (git's index is the reference stat cache), cold lock (no
// lockfile, empty cache), warm lock with nothing changed, and warm lock after one file changed;
// then the ratios against those baselines and the targets from the issues. The five are run
// interleaved, round by round (one file changed, sha256sum, git status, cold, warm; the last two past the racy
// margin of the change), so a change in
// the machine's load hits all of them alike. --kiwi names another binary (an older build, say),
// which skips the build. --base names a second binary (the build before a change) timed in the same
// rounds on its own copy of the tree and cache, so the before/after ratios share the machine's load.
// The tree is generated here (python tools only) unless --gen-tree asks for the issue's own tree,
// scripts/gen-tree.ts's mix of every kind (mcp_server tools included, MCP pinning off, so no
// server is started: KIWI_MCP_MODE=off); its one changed file is then always a data file.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshCopy } from "./bench-lib.ts";

const repo = join(import.meta.dir, "..");

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}
const TOOLS = option("tools", 1000);
const FILES = option("files", 10);
const SIZE = option("size", 10240);
const RUNS = option("runs", 21);
const json = process.argv.includes("--json");
const log = (text: string) => process.stderr.write(`${text}\n`);
const kiwiFlag = process.argv.indexOf("--kiwi");
const baseFlag = process.argv.indexOf("--base");

if (!process.argv.includes("--no-build") && kiwiFlag === -1) {
  log("building dist/kiwi …");
  const build = Bun.spawnSync([process.execPath, "run", join(repo, "scripts/build.ts")], { cwd: repo, stdout: "ignore", stderr: "inherit" });
  if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);
}
// Both timed as copies made now (bench-lib.ts freshCopy says why).
const kiwi = freshCopy(kiwiFlag === -1 ? join(repo, "dist", "kiwi") : process.argv[kiwiFlag + 1]!);
const baseKiwi = baseFlag === -1 ? undefined : freshCopy(process.argv[baseFlag + 1]!);

/** xorshift32 bytes: deterministic and incompressible, so no file system shortcut applies. */
function bytes(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed * 2654435761 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const base = mkdtempSync(join(tmpdir(), "kiwi-bench-lock-"));
const root = join(base, "project");
const cache = join(base, "cache");
const files: string[] = [];
const genTree = process.argv.includes("--gen-tree");
log(`generating ${TOOLS} tools x ${FILES} files x ${SIZE} bytes in ${root} …`);
if (genTree) {
  const { generateTree } = await import("./gen-tree.ts");
  generateTree({ dir: root, count: TOOLS, filesPerTool: FILES, fileSize: SIZE, seed: 1 });
  files.push(...(readdirSync(root, { recursive: true }) as string[]).filter((p) => statSync(join(root, p)).isFile()).sort());
}
for (let t = 0; t < (genTree ? 0 : TOOLS); t++) {
  const id = `tool_${String(t).padStart(5, "0")}`;
  const dir = join(root, ".ai", "tools", `group_${t % 20}`, id);
  mkdirSync(join(dir, "data"), { recursive: true });
  writeFileSync(
    join(dir, "tool.yaml"),
    `tool_id: ${id}\ntool_type: script\nversion: 1.${t % 10}.0\nexecutor: python_runtime@^1\ndescription: Benchmark tool ${t}\nconfig:\n  entrypoint: main.py\n  timeout: 30\nparameters:\n  - { name: input, type: string, required: true, description: What to process }\n`,
  );
  for (let f = 0; f < FILES; f++) {
    const rel = f === 0 ? "main.py" : `data/part_${f}.bin`;
    const content = f === 0 ? `# ${id}\n${"print('x')\n".repeat(Math.max(1, Math.floor(SIZE / 11)))}`.slice(0, SIZE) : bytes(SIZE, t * 1000 + f + 1);
    writeFileSync(join(dir, rel), content);
    files.push(join(".ai", "tools", `group_${t % 20}`, id, rel));
  }
}
const totalBytes = files.reduce((n, f) => n + statSync(join(root, f)).size, 0);
// The files one round changes: any of them in the python tree, a data file of gen-tree's (never a manifest).
const changeable = genTree ? files.filter((f) => f.includes("/data/part-")) : files;
// The base binary's copy: the same bytes under another root, with its own cache.
const baseRoot = join(base, "project-base");
const baseCache = join(base, "cache-base");
if (baseKiwi) cpSync(root, baseRoot, { recursive: true, preserveTimestamps: true });
// The stat cache does not trust files modified within 2 s of hashing (the racy-clean rule), so a
// tree written a moment ago would be re-hashed by the first warm run; real trees are older.
await Bun.sleep(2100);

const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base, KIWI_CACHE_DIR: cache, NO_COLOR: "1", LANG: "C.UTF-8", ...(genTree ? { KIWI_MCP_MODE: "off" } : {}) };

interface Sample {
  ms: number;
  /** User + system CPU time: steadier than wall time on a machine others share. */
  cpuMs: number;
  rssMb: number;
}

function run(argv: string[], at = root, environment = env): Sample {
  const start = performance.now();
  const proc = Bun.spawnSync(argv, { cwd: at, env: environment, stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - start;
  if (proc.exitCode !== 0) {
    log(`${argv.join(" ")} failed (${proc.exitCode}):\n${proc.stderr.toString()}`);
    process.exit(1);
  }
  const cpu = proc.resourceUsage.cpuTime;
  return { ms, cpuMs: Number(cpu.user + cpu.system) / 1000, rssMb: proc.resourceUsage.maxRSS / 1024 / 1024 };
}

function median(samples: Sample[]): Sample {
  const by = (k: keyof Sample) => [...samples].sort((a, b) => a[k] - b[k])[Math.floor(samples.length / 2)]![k];
  return { ms: by("ms"), cpuMs: by("cpuMs"), rssMb: by("rssMb") };
}

// git's index over the same tree.
const gitEnv = ["-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false"];
run(["git", "init", "-q"]);
run(["git", ...gitEnv, "add", "-A"]);
run(["git", ...gitEnv, "commit", "-qm", "tree"]);
// One untimed pass of each so every contender reads from the page cache.
run(["sha256sum", ...files]);
run(["git", ...gitEnv, "status", "--porcelain"]);
run([kiwi, "lock"]);
run([kiwi, "lock"]);
const baseEnv = { ...env, KIWI_CACHE_DIR: baseCache };
if (baseKiwi) {
  run([baseKiwi, "lock"], baseRoot, baseEnv);
  run([baseKiwi, "lock"], baseRoot, baseEnv);
}

const series = { sha: [] as Sample[], gitStatus: [] as Sample[], cold: [] as Sample[], warm: [] as Sample[], changed: [] as Sample[] };
const baseSeries = { cold: [] as Sample[], warm: [] as Sample[], changed: [] as Sample[] };
for (let i = 0; i < RUNS; i++) {
  // One file changed (the lockfile and cache are warm from the round before).
  const change = changeable[(i * 7919) % changeable.length]!;
  writeFileSync(join(root, change), bytes(SIZE, 999_000 + i));
  if (baseKiwi) writeFileSync(join(baseRoot, change), bytes(SIZE, 999_000 + i));
  const changedAt = Date.now();
  series.changed.push(run([kiwi, "lock"]));
  if (baseKiwi) baseSeries.changed.push(run([baseKiwi, "lock"], baseRoot, baseEnv));
  series.sha.push(run(["sha256sum", ...files]));
  series.gitStatus.push(run(["git", ...gitEnv, "status", "--porcelain"]));
  // Past the racy margin, as a real tree is: a cold lock then remembers the tree for the warm one.
  await Bun.sleep(Math.max(0, changedAt + 2100 - Date.now()));
  rmSync(cache, { recursive: true, force: true });
  rmSync(join(root, "tool.lock.json"), { force: true });
  series.cold.push(run([kiwi, "lock"]));
  series.warm.push(run([kiwi, "lock"]));
  if (baseKiwi) {
    rmSync(baseCache, { recursive: true, force: true });
    rmSync(join(baseRoot, "tool.lock.json"), { force: true });
    baseSeries.cold.push(run([baseKiwi, "lock"], baseRoot, baseEnv));
    baseSeries.warm.push(run([baseKiwi, "lock"], baseRoot, baseEnv));
  }
}
const sha = median(series.sha);
const gitStatus = median(series.gitStatus);
const cold = median(series.cold);
const warm = median(series.warm);
const changed = median(series.changed);

if (process.argv.includes("--keep")) log(`kept the tree: ${root} (cache ${cache})`);
else rmSync(base, { recursive: true, force: true });

const baseRows = baseKiwi
  ? (["cold", "warm", "changed"] as const).map((k) => {
      const b = median(baseSeries[k]);
      const after = { cold, warm, changed }[k];
      const vs = k === "cold" ? sha : gitStatus;
      return { name: `base: ${{ cold: "cold kiwi lock", warm: "warm lock, no change", changed: "warm lock, 1 file changed" }[k]}`, ...b, target: `x${(b.ms / vs.ms).toFixed(2)} ${k === "cold" ? "sha256sum" : "git status"}; after/base x${(after.ms / b.ms).toFixed(2)} (cpu x${(after.cpuMs / b.cpuMs).toFixed(2)})` };
    })
  : [];
const rows = [
  { name: "sha256sum (baseline)", ...sha, target: "" },
  { name: "git status --porcelain (baseline)", ...gitStatus, target: "" },
  { name: "cold kiwi lock", ...cold, target: `x${(cold.ms / sha.ms).toFixed(2)} sha256sum (target <= 1.0)` },
  { name: "warm lock, no change", ...warm, target: `x${(warm.ms / gitStatus.ms).toFixed(2)} git status (target <= 1.0); ${((warm.ms / cold.ms) * 100).toFixed(1)}% of cold` },
  { name: "warm lock, 1 file changed", ...changed, target: `x${(changed.ms / gitStatus.ms).toFixed(2)} git status (target <= 1.5)` },
  ...baseRows,
];
const verdicts = {
  coldVsSha256sum: cold.ms / sha.ms <= 1.0,
  warmVsGitStatus: warm.ms / gitStatus.ms <= 1.0,
  changedVsGitStatus: changed.ms / gitStatus.ms <= 1.5,
};
const summary = {
  command: `bun run scripts/bench-lock.ts --tools ${TOOLS} --files ${FILES} --size ${SIZE} --runs ${RUNS}${baseKiwi ? ` --base ${baseKiwi}` : ""}`,
  tree: { tools: TOOLS, files: files.length, bytes: totalBytes },
  results: Object.fromEntries(rows.map((r) => [r.name, { ms: Math.round(r.ms), cpuMs: Math.round(r.cpuMs), peakRssMb: Math.round(r.rssMb) }])),
  ratios: {
    coldVsSha256sum: cold.ms / sha.ms,
    warmVsGitStatus: warm.ms / gitStatus.ms,
    changedVsGitStatus: changed.ms / gitStatus.ms,
    warmVsCold: warm.ms / cold.ms,
    ...(baseKiwi ? { coldVsBase: cold.ms / median(baseSeries.cold).ms, warmVsBase: warm.ms / median(baseSeries.warm).ms, changedVsBase: changed.ms / median(baseSeries.changed).ms } : {}),
  },
  targetsMet: verdicts,
};
if (json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
else {
  process.stdout.write(`kiwi lock: ${TOOLS} tools, ${files.length} files, ${(totalBytes / 1e6).toFixed(1)} MB, median of ${RUNS} interleaved runs\n\n`);
  for (const r of rows) process.stdout.write(`${r.name.padEnd(34)} ${`${r.ms.toFixed(0)} ms`.padStart(9)} ${`cpu ${r.cpuMs.toFixed(0)} ms`.padStart(12)} ${`${r.rssMb.toFixed(0)} MB`.padStart(8)}  ${r.target}\n`);
  process.stdout.write(`\ntargets met: ${Object.entries(verdicts).map(([k, v]) => `${k} ${v ? "yes" : "NO"}`).join(", ")}\n`);
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  process.stdout.write(`reproduce: ${summary.command}\nload average: ${load} (wall times on a busy machine overstate; cpu is steadier)\n`);
}
