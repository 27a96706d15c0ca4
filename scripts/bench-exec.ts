// Benchmarks `kiwi exec` (the compiled binary) against running the same work directly, in the same
// run: (1) a warm three-link chain (python script -> python_runtime -> subprocess) vs `python3
// script.py` on the same stdin; (2) a warm api tool against a local Bun.serve vs a plain fetch of
// the same URL (curl, and fetch in a fresh bun process). Prints medians, overheads and ratios.
// Usage: bun run build && bun run scripts/bench-exec.ts [runs=40] [path/to/kiwi (default dist/kiwi)]
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median } from "./bench-lib.ts";

const root = join(import.meta.dir, "..");
const kiwi = process.argv[3] ?? join(root, "dist", "kiwi");
if (!existsSync(kiwi)) throw new Error(`${kiwi} is missing: run "bun run build" first`);
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

// The HTTP server lives in its own process: spawnSync below blocks this one.
const server = Bun.spawn([process.execPath, "-e", "const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ forecast: { daily: [1,2,3,4,5,6,7,8,9] } }) }); console.log(s.port);"], { stdout: "pipe" });
// The first line the server prints is its port (the stream stays open while it serves).
const port = Number(new TextDecoder().decode((await server.stdout.getReader().read()).value).trim());
const url = `http://127.0.0.1:${port}/v1/Oslo`;
writeFileSync(
  join(project, ".ai/tools/weather.yaml"),
  `tool_id: weather\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nrequires:\n  - net.outbound: ["127.0.0.1"]\nconfig:\n  method: GET\n  url_template: "http://127.0.0.1:${port}/v1/{city}"\n  response_transform: "$.forecast.daily[0:7]"\nparameters:\n  - { name: city, type: string, required: true }\n`,
);

function time(argv: string[], stdin?: string, extraEnv: Record<string, string> = {}): number {
  const t = performance.now();
  const r = Bun.spawnSync(argv, { cwd: project, env: { ...env, ...extraEnv }, stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - t;
  if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}`);
  return ms;
}


/** Runs the cases interleaved (so drift in machine load hits all of them alike) and returns medians. */
function compare(cases: Record<string, () => number>): Record<string, number> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (const fn of Object.values(cases)) fn(); // warm: run dirs, stat cache, page cache
  for (let i = 0; i < runs; i++) for (const [k, fn] of Object.entries(cases)) samples[k]!.push(fn());
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
}

time([kiwi, "lock"]);
const py = Bun.which("python3", { PATH: env.PATH })!;
const chain = compare({
  "python3 script.py": () => time([py, join(work, "script.py")], INPUT),
  "kiwi exec --sandbox=off": () => time([kiwi, "exec", "summer", "--sandbox=off"], INPUT),
  "kiwi exec (sandbox auto)": () => time([kiwi, "exec", "summer"], INPUT),
  "kiwi --version": () => time([kiwi, "--version"]),
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
report("1. three-link chain, warm", chain, "python3 script.py", ["kiwi exec --sandbox=off", "kiwi exec (sandbox auto)"]);
report("2. api tool against a local Bun.serve, warm", api, curl ? "curl -s URL" : "bun -e fetch(URL)", ["kiwi exec weather"]);
if (curl) console.log(`  kiwi exec weather vs bun -e fetch(URL): overhead ${fmt(api["kiwi exec weather"]! - api["bun -e fetch(URL)"]!)}`);
