// Benchmarks `kiwi exec` (the compiled binary) against its floor, measured in the same run: what no
// CLI can avoid is starting a compiled Bun binary (a hello world built here with kiwi's own build
// flags) and starting the tool itself. (1) warm three-link chains (a python and a bash script ->
// their runtime -> subprocess) with --sandbox=off against hello world + the script run directly;
// the sandboxed call against hello world + the very launch kiwi plans (bwrap with the same mounts,
// setpriv, prlimit, the tool) run directly, and against the floor: hello world + the script
// + a bare `bwrap … true` with the same mounts; `kiwi --version` and `--help` against hello world.
// Below kiwi's own work, a "spawner" binary that does nothing but run bash with piped, forwarded
// output (and bash behind prlimit with kiwi's default limits) shows what any Bun-built wrapper pays;
// a "verifier" binary that also reads a memo, stats the chain's inputs and parses the parameters
// (bench-lib.ts verifierBinary) shows what any launcher that proves a chain unchanged pays.
// A "strict verifier" makes every check kiwi's replay makes, from kiwi's own launch memo, and
// enforces what kiwi enforces while a tool runs, each written as plainly as it can be
// (bench-lib.ts strictVerifierBinary): what kiwi's replay costs above it is code, not checking.
// The "long way" cases are the same warm calls in an environment kiwi has not seen (no launch
// memo: the chain replay, the planner and the CLI run). (2) a warm api tool against a local
// Bun.serve vs a plain fetch of the same URL.
// Prints medians, overheads, ratios and the peak memory of each warm call.
// Usage: bun run build && bun run scripts/bench-exec.ts [runs=40] [path/to/kiwi (default dist/kiwi)]
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeLaunchFiles, openLaunchFiles } from "../src/exec/launch-files-io.ts";
import { freshCopy, helloWorldBinary, median, spawnerBinary, strictVerifierBinary, strictVerifierMemo, verifierBinary } from "./bench-lib.ts";

const root = join(import.meta.dir, "..");
const built = process.argv[3] ?? join(root, "dist", "kiwi");
if (!existsSync(built)) throw new Error(`${built} is missing: run "bun run build" first`);
const kiwi = freshCopy(built);
const runs = Number(process.argv[2] ?? 40);
const work = mkdtempSync(join(tmpdir(), "kiwi-bench-exec-"));
const project = join(work, "project");
// The system directories first: a version-manager shim (pyenv's costs ~80 ms of bash per call)
// would drown what is measured; both sides resolve python3 through this same PATH.
const env: Record<string, string> = { PATH: `/usr/bin:/bin:${process.env.PATH ?? ""}`, HOME: join(work, "home"), KIWI_CACHE_DIR: join(work, "cache"), LANG: "C.UTF-8", NO_COLOR: "1" };
mkdirSync(env.HOME!, { recursive: true });

const SCRIPT = "import json, sys\np = json.load(sys.stdin)\nprint(sum(p['numbers']))\n";
const INPUT = JSON.stringify({ numbers: Array.from({ length: 100 }, (_, i) => i) });
const files: Record<string, string> = {
  ".ai/tools/summer/tool.yaml": "tool_id: summer\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\nparameters:\n  - { name: numbers, type: array, required: true }\n",
  ".ai/tools/summer/main.py": SCRIPT,
};
for (const [path, text] of Object.entries(files)) {
  mkdirSync(join(project, path, ".."), { recursive: true });
  writeFileSync(join(project, path), text);
}
writeFileSync(join(work, "script.py"), SCRIPT);
const BASH = 'read -r line\necho "${#line} bytes"\n';
mkdirSync(join(project, ".ai/tools/counter"), { recursive: true });
writeFileSync(join(project, ".ai/tools/counter/tool.yaml"), "tool_id: counter\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\nparameters:\n  - { name: numbers, type: array, required: true }\n");
writeFileSync(join(project, ".ai/tools/counter/main.sh"), BASH);
writeFileSync(join(work, "script.sh"), BASH);
// The same parameters in a file: an agent's other way of passing them (--params-file), replayed too.
const paramsFile = join(work, "params.json");
writeFileSync(paramsFile, INPUT);

const hello = helloWorldBinary(work);
const spawner = spawnerBinary(work);
const verifier = verifierBinary(work);
const strict = strictVerifierBinary(work);

// The HTTP server lives in its own process: spawnSync below blocks this one.
const server = Bun.spawn([process.execPath, "-e", "const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ forecast: { daily: [1,2,3,4,5,6,7,8,9] } }) }); console.log(s.port);"], { stdout: "pipe" });
// The first line the server prints is its port (the stream stays open while it serves).
const port = Number(new TextDecoder().decode((await server.stdout.getReader().read()).value).trim());
const url = `http://127.0.0.1:${port}/v1/Oslo`;
writeFileSync(
  join(project, ".ai/tools/weather.yaml"),
  `tool_id: weather\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nrequires:\n  - net.outbound: ["127.0.0.1"]\nconfig:\n  method: GET\n  url_template: "http://127.0.0.1:${port}/v1/{city}"\n  response_transform: "$.forecast.daily[0:7]"\nparameters:\n  - { name: city, type: string, required: true }\n`,
);

/** Peak resident memory per command line, in bytes (the largest seen). */
const peaks = new Map<string, number>();
/** CPU time (user + system, the process and the children it waited for) of the last timed run. */
let lastCpu = 0;
function noteCpu(r: { resourceUsage?: { cpuTime: { user: number | bigint; system: number | bigint } } }): void {
  lastCpu = r.resourceUsage ? Number(r.resourceUsage.cpuTime.user) / 1000 + Number(r.resourceUsage.cpuTime.system) / 1000 : 0;
}
function time(argv: string[], stdin?: string, extraEnv: Record<string, string> = {}): number {
  const t = performance.now();
  const r = Bun.spawnSync(argv, { cwd: project, env: { ...env, ...extraEnv }, stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - t;
  if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}`);
  noteCpu(r);
  const key = argv.join(" ");
  peaks.set(key, Math.max(peaks.get(key) ?? 0, r.resourceUsage?.maxRSS ?? 0));
  return ms;
}


/** Median CPU time per case of the last compare(). */
const cpuMedians: Record<string, number> = {};

/** Runs the cases interleaved (so drift in machine load hits all of them alike) and returns medians. */
function compare(cases: Record<string, () => number>): Record<string, number> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (const fn of Object.values(cases)) fn(); // warm: run dirs, stat cache, page cache
  for (let i = 0; i < runs; i++) {
    for (const [k, fn] of Object.entries(cases)) {
      samples[k]!.push(fn());
      cpu[k]!.push(lastCpu);
    }
  }
  for (const [k, v] of Object.entries(cpu)) cpuMedians[k] = median(v);
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
}

time([kiwi, "lock"]);
// A warm call comes well after the lock: within the 2 s racy margin of a lockfile's write, exec
// trusts no memo of it (git's racy-clean rule), which is not the state an agent's calls run in.
await Bun.sleep(2100);
time([kiwi, "exec", "summer"], INPUT); // materialises the run directory the dry run below names
const py = Bun.which("python3", { PATH: env.PATH })!;
const bash = Bun.which("bash", { PATH: env.PATH })!;
// The launch kiwi plans for the sandboxed call (bwrap, its mounts, setpriv, prlimit, the tool).
const dry = Bun.spawnSync([kiwi, "exec", "summer", "--dry-run"], { cwd: project, env, stdin: new TextEncoder().encode(INPUT), stdout: "pipe", stderr: "pipe" });
const planned = JSON.parse(dry.stdout.toString()) as { subprocess: { launch: string[]; files?: string[]; cwd: string; env: Record<string, string> }; sandbox?: { active: boolean } };
const launch = planned.subprocess;
// The files the sandbox copies in reach bubblewrap as descriptors 3, 4, …, opened as kiwi opens them.
const spawnLaunch = (argv: string[], stdin: Uint8Array | "ignore") => {
  const files = openLaunchFiles(launch.files, "the planned launch");
  try {
    return Bun.spawnSync(argv, { cwd: launch.cwd, env: launch.env, stdio: [stdin, "pipe", "pipe", ...files] });
  } finally {
    closeLaunchFiles(files);
  }
};
const launchDirect = () => {
  const t = performance.now();
  const r = spawnLaunch(launch.launch, new TextEncoder().encode(INPUT));
  if (r.exitCode !== 0) throw new Error(`the planned launch failed (${r.exitCode}): ${r.stderr.toString()}`);
  noteCpu(r);
  return performance.now() - t;
};
// The sandbox floor: bwrap with exactly the planned mounts and namespaces, running `true`.
const bwrapTrue = [...launch.launch.slice(0, launch.launch.indexOf("--")), "--", "/usr/bin/true"];
const bwrapTrueDirect = () => {
  const t = performance.now();
  const r = spawnLaunch(bwrapTrue, "ignore");
  if (r.exitCode !== 0) throw new Error(`bwrap … true failed (${r.exitCode}): ${r.stderr.toString()}`);
  noteCpu(r);
  return performance.now() - t;
};
// The limits kiwi applies by default (run-limits.ts), through prlimit as the unsandboxed launch does.
const prlimit = Bun.which("prlimit", { PATH: env.PATH });
const limited = prlimit ? [prlimit, "--data=2147483648", "--cpu=300:301", "--nofile=1024", "--"] : [];
// The verifier's memos: what a warm `kiwi exec <tool>` proves unchanged by stat (the lockfile, the
// tool's folder, manifest and script), with the chain's locked entries, as exec's chain memo holds them.
const locked = (JSON.parse(readFileSync(join(project, "tool.lock.json"), "utf8")) as { tools: Record<string, unknown> }).tools;
const verifierMemo = (tool: string, script: string, runtime: string): string => {
  const watched = ["tool.lock.json", `.ai/tools/${tool}`, `.ai/tools/${tool}/tool.yaml`, `.ai/tools/${tool}/${script}`].map((p) => join(project, p));
  const memo = join(work, `verifier-${tool}.json`);
  writeFileSync(memo, JSON.stringify({ watch: watched.map((p) => [p, statSync(p).size, statSync(p).mtimeMs]), tools: { [tool]: locked[tool], [runtime]: locked[runtime], subprocess: locked.subprocess } }));
  return memo;
};
// A call in an environment kiwi has not seen takes the long way (its launch memo is keyed by the
// whole environment): a variable that changes every call keeps these cases there.
let call = 0;
const longWay = () => ({ KIWI_BENCH_CALL: String(call++) });
const counterMemo = verifierMemo("counter", "main.sh", "bash_runtime");
const summerMemo = verifierMemo("summer", "main.py", "python_runtime");
// The strict verifier checks what kiwi's own launch memo of each tool names: both run directories
// exist by now, so two more calls past their racy margin record those memos.
for (const tool of ["counter", "summer"]) time([kiwi, "exec", tool, "--sandbox=off"], INPUT);
await Bun.sleep(2100);
for (const tool of ["counter", "summer"]) time([kiwi, "exec", tool, "--sandbox=off"], INPUT);
const launches = join(env.KIWI_CACHE_DIR!, "exec", "launches");
const launchMemos = readdirSync(launches).flatMap((d) => readdirSync(join(launches, d)).map((f) => readFileSync(join(launches, d, f), "utf8"))).map((text) => JSON.parse(text.slice(text.indexOf("\n") + 1)) as Parameters<typeof strictVerifierMemo>[5] & { bare: { tool: string } });
const strictMemos = join(work, "strict-memos");
for (const [tool, program] of [["counter", bash], ["summer", py]] as const) {
  const launch = launchMemos.find((m) => m.bare.tool === tool);
  if (!launch) throw new Error(`kiwi recorded no launch memo for ${tool}`);
  strictVerifierMemo(strict, strictMemos, tool, project, env, launch, env.KIWI_CACHE_DIR!, program);
}
const chain = compare({
  "hello-world binary": () => time([hello]),
  "python3 script.py": () => time([py, join(work, "script.py")], INPUT),
  "bash script.sh": () => time([bash, join(work, "script.sh")], INPUT),
  "spawner binary + bash": () => time([spawner, bash, join(work, "script.sh")], INPUT),
  ...(prlimit ? { "spawner + prlimit + bash": () => time([spawner, ...limited, bash, join(work, "script.sh")], INPUT) } : {}),
  "verifier + prlimit + bash": () => time([verifier, counterMemo, "--", ...limited, bash, join(work, "script.sh")], INPUT),
  "verifier + prlimit + python3": () => time([verifier, summerMemo, "--", ...limited, py, join(work, "script.py")], INPUT),
  "strict verifier + prlimit + bash": () => time([strict, strictMemos, "counter", "--", ...limited, bash, join(work, "script.sh")], INPUT),
  "strict verifier + prlimit + python3": () => time([strict, strictMemos, "summer", "--", ...limited, py, join(work, "script.py")], INPUT),
  "planned launch, direct": launchDirect,
  ...(planned.sandbox?.active ? { "bwrap (same mounts) true": bwrapTrueDirect } : {}),
  // kiwi's checks written plainly, then kiwi's own sandboxed launch: what any launcher that proves
  // the chain and applies the sandbox kiwi plans pays (it does not read the probe's memo: a little less).
  ...(planned.sandbox?.active ? { "strict verifier + planned launch": () => time([strict, strictMemos, "summer", ...(launch.files?.length ? ["--files", launch.files.join(",")] : []), "--", ...launch.launch], INPUT) } : {}),
  "kiwi exec py --sandbox=off": () => time([kiwi, "exec", "summer", "--sandbox=off"], INPUT),
  "kiwi exec sh --sandbox=off": () => time([kiwi, "exec", "counter", "--sandbox=off"], INPUT),
  "kiwi exec sh --params-file": () => time([kiwi, "exec", "counter", "--sandbox=off", "--params-file", paramsFile]),
  "kiwi exec py, long way": () => time([kiwi, "exec", "summer", "--sandbox=off"], INPUT, longWay()),
  "kiwi exec sh, long way": () => time([kiwi, "exec", "counter", "--sandbox=off"], INPUT, longWay()),
  "kiwi exec py (sandbox auto)": () => time([kiwi, "exec", "summer"], INPUT),
  "kiwi --version": () => time([kiwi, "--version"]),
  "kiwi --help": () => time([kiwi, "--help"]),
});
const curl = Bun.which("curl");
const api = compare({
  ...(curl ? { "curl -s URL": () => time([curl, "-s", url]) } : {}),
  "bun -e fetch(URL)": () => time([process.execPath, "-e", `await (await fetch(${JSON.stringify(url)})).text()`]),
  "kiwi exec weather": () => time([kiwi, "exec", "weather", "--param", "city=Oslo"]),
});
server.kill();
rmSync(work, { recursive: true, force: true });

const fmt = (n: number) => `${n.toFixed(1)} ms`;
const report = (title: string, medians: Record<string, number>, baseline: string, subject: string[]) => {
  console.log(`\n${title} (median of ${runs} runs each, interleaved)`);
  for (const [k, v] of Object.entries(medians)) console.log(`  ${k.padEnd(28)} ${fmt(v)}`);
  for (const s of subject) {
    const m = medians[s]!;
    const b = medians[baseline]!;
    console.log(`  ${s} vs ${baseline}: overhead ${fmt(m - b)}, ratio ${(m / b).toFixed(2)}`);
  }
};
console.log(`\n1. three-link chains, warm (median of ${runs} runs each, interleaved)`);
const chainCpu = { ...cpuMedians };
for (const [k, v] of Object.entries(chain)) console.log(`  ${k.padEnd(36)} ${fmt(v).padStart(9)}   cpu ${fmt(chainCpu[k]!).padStart(9)}`);
const floor = (label: string, subject: string, parts: string[], target: number) => {
  const base = parts.reduce((sum, p) => sum + chain[p]!, 0);
  const m = chain[subject]!;
  const cpuBase = parts.reduce((sum, p) => sum + chainCpu[p]!, 0);
  // A sandboxed tool is reaped inside bwrap's PID namespace: its CPU time never reaches this process.
  const sandboxed = parts.some((p) => p.startsWith("planned launch") || p.startsWith("bwrap")) || subject.includes("sandbox auto");
  const cpuRatio = sandboxed ? "cpu n/a (sandboxed children are not counted)" : `cpu ratio ${(chainCpu[subject]! / cpuBase).toFixed(2)}`;
  console.log(`  ${subject} vs ${label} (${parts.join(" + ")} = ${fmt(base)}): overhead ${fmt(m - base)}, ratio ${(m / base).toFixed(2)} (target <= ${target}); ${cpuRatio}`);
};
floor("floor", "kiwi exec py --sandbox=off", ["hello-world binary", "python3 script.py"], 1.15);
floor("floor", "kiwi exec sh --sandbox=off", ["hello-world binary", "bash script.sh"], 1.15);
floor("floor", "kiwi exec py, long way", ["hello-world binary", "python3 script.py"], 1.15);
floor("floor", "kiwi exec sh, long way", ["hello-world binary", "bash script.sh"], 1.15);
// Below kiwi's own work: a binary that only spawns bash (and bash behind prlimit, as kiwi launches it).
floor("spawn-only floor", "spawner binary + bash", ["hello-world binary", "bash script.sh"], 1.15);
if (prlimit) floor("spawn-only floor", "spawner + prlimit + bash", ["hello-world binary", "bash script.sh"], 1.15);
if (prlimit) floor("kiwi's own launch run by the spawner", "kiwi exec sh --sandbox=off", ["spawner + prlimit + bash"], 1.15);
floor("floor", "verifier + prlimit + bash", ["hello-world binary", "bash script.sh"], 1.15);
floor("floor", "verifier + prlimit + python3", ["hello-world binary", "python3 script.py"], 1.15);
floor("the least verifying launcher", "kiwi exec sh --sandbox=off", ["verifier + prlimit + bash"], 1.15);
floor("the least verifying launcher", "kiwi exec py --sandbox=off", ["verifier + prlimit + python3"], 1.15);
floor("floor", "strict verifier + prlimit + bash", ["hello-world binary", "bash script.sh"], 1.15);
floor("floor", "strict verifier + prlimit + python3", ["hello-world binary", "python3 script.py"], 1.15);
floor("kiwi's checks written plainly", "kiwi exec sh --sandbox=off", ["strict verifier + prlimit + bash"], 1.15);
floor("kiwi's checks written plainly", "kiwi exec py --sandbox=off", ["strict verifier + prlimit + python3"], 1.15);
floor(`sandboxed floor${planned.sandbox?.active ? "" : " (NO SANDBOX HERE)"}`, "kiwi exec py (sandbox auto)", ["hello-world binary", "planned launch, direct"], 1.15);
if (planned.sandbox?.active) floor("issue floor", "kiwi exec py (sandbox auto)", ["hello-world binary", "python3 script.py", "bwrap (same mounts) true"], 1.15);
if (planned.sandbox?.active) floor("issue floor", "strict verifier + planned launch", ["hello-world binary", "python3 script.py", "bwrap (same mounts) true"], 1.15);
if (planned.sandbox?.active) floor("kiwi's checks written plainly", "kiwi exec py (sandbox auto)", ["strict verifier + planned launch"], 1.15);
floor("floor", "kiwi --version", ["hello-world binary"], 1.2);
floor("floor", "kiwi --help", ["hello-world binary"], 1.2);
console.log(`  peak memory (max RSS): hello-world binary ${((peaks.get(hello) ?? 0) / 1024 / 1024).toFixed(1)} MB`);
for (const [argv, bytes] of peaks) if (argv.startsWith(kiwi)) console.log(`    ${argv.slice(kiwi.length + 1).padEnd(34)} ${(bytes / 1024 / 1024).toFixed(1)} MB`);
report("2. api tool against a local Bun.serve, warm", api, curl ? "curl -s URL" : "bun -e fetch(URL)", ["kiwi exec weather"]);
if (curl) console.log(`  kiwi exec weather vs bun -e fetch(URL): overhead ${fmt(api["kiwi exec weather"]! - api["bun -e fetch(URL)"]!)}`);
