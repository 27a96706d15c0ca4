// Compares two kiwi binaries in one run, interleaved, so the machine's noise falls on both alike:
// a warm `kiwi exec` of a bash script tool (--sandbox=off) and of an http_client tool against a
// local python3 http.server, and a warm `kiwi lock` and `kiwi check` of 300 generated tools.
// Prints each median and the ratio new/base (below 1.0: the new binary is faster).
// Usage: bun run scripts/bench-ab.ts <base kiwi> [new kiwi (default dist/kiwi)] [runs=30]
//   e.g. git worktree add /tmp/base <rev> && (cd /tmp/base && bun run build) &&
//        bun run build && bun run scripts/bench-ab.ts /tmp/base/dist/kiwi
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freshCopy, median } from "./bench-lib.ts";

const baseBuilt = process.argv[2] && resolve(process.argv[2]);
const nextBuilt = resolve(process.argv[3] ?? join(import.meta.dir, "..", "dist", "kiwi"));
const runs = Number(process.argv[4] ?? 30);
if (!baseBuilt || !existsSync(baseBuilt) || !existsSync(nextBuilt)) throw new Error("usage: bun run scripts/bench-ab.ts <base kiwi> [new kiwi] [runs]");
// Both copied now, so an older base build starts as fast as the new one (bench-lib.ts freshCopy).
const base = freshCopy(baseBuilt);
const next = freshCopy(nextBuilt);
const work = mkdtempSync(join(tmpdir(), "kiwi-bench-ab-"));
const env = { PATH: "/usr/bin:/bin", HOME: join(work, "home"), KIWI_CACHE_DIR: join(work, "cache"), LANG: "C.UTF-8", NO_COLOR: "1" };
mkdirSync(env.HOME, { recursive: true });

// A server in its own process: spawnSync below blocks this one's event loop.
const server = Bun.spawn(["python3", "-m", "http.server", "--bind", "127.0.0.1", "0", "--directory", work], { stdout: "pipe", stderr: "ignore" });
const port = await (async () => {
  const reader = server.stdout.getReader();
  let text = "";
  while (!/port (\d+)/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
  return Number(/port (\d+)/.exec(text)![1]);
})();

function writeTree(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

const execProject = join(work, "exec");
writeTree(execProject, {
  ".ai/tools/sh/tool.yaml": "tool_id: sh\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\nparameters:\n  - { name: n, type: integer, required: true, minimum: 0 }\n",
  ".ai/tools/sh/main.sh": "echo hi\n",
  ".ai/tools/api.yaml": `tool_id: api\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nrequires:\n  - net.outbound: ["127.0.0.1"]\nconfig:\n  method: GET\n  url: "http://127.0.0.1:${port}/"\n  query: { id: 12345678901234567890, n: "{n}" }\n  retries: 0\nparameters:\n  - { name: n, type: integer, required: true }\n`,
});
const treeProject = join(work, "tree");
const tree: Record<string, string> = {};
for (let t = 0; t < 300; t++) {
  const dir = `.ai/tools/g${t % 10}/t${t}`;
  tree[`${dir}/tool.yaml`] = `tool_id: t${t}\ntool_type: script\nversion: 1.0.${t}\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\nparameters:\n  - { name: s, type: string, pattern: '^[a-z]+$', default: abc }\n  - { name: o, type: object, enum: [{ a: 1 }], default: { a: 1 } }\n`;
  tree[`${dir}/main.py`] = `print(${t})\n`;
}
writeTree(treeProject, tree);

function run(bin: string, cwd: string, args: string[]): number {
  const t = performance.now();
  // Each binary keeps its own cache: two builds of one version would otherwise share (and rewrite) memos.
  const p = Bun.spawnSync([bin, ...args], { cwd, env: { ...env, KIWI_CACHE_DIR: join(work, bin === base ? "cache-base" : "cache-new") }, stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`${bin} ${args.join(" ")} exited ${p.exitCode}: ${p.stderr}`);
  return performance.now() - t;
}

try {
  run(next, execProject, ["lock"]);
  run(next, treeProject, ["lock"]);
  // A warm call comes well after the lock: within the 2 s racy margin of a lockfile's write, exec
  // trusts no memo of it (git's racy-clean rule), which is not the state an agent's calls run in.
  await Bun.sleep(2100);
  const cases: [string, string[]][] = [
    [execProject, ["exec", "sh", "--sandbox=off", "--param", "n=3"]],
    [execProject, ["exec", "api", "--param", "n=3"]],
    [treeProject, ["lock"]],
    [treeProject, ["check"]],
  ];
  console.log(`base ${base}\nnew  ${next}\n(median of ${runs} runs each, interleaved, warm)`);
  for (const [cwd, args] of cases) {
    for (const bin of [base, next]) run(bin, cwd, args);
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < runs; i++) {
      a.push(run(base, cwd, args));
      b.push(run(next, cwd, args));
    }
    console.log(`  kiwi ${args.join(" ").padEnd(40)} base ${median(a).toFixed(1).padStart(6)} ms  new ${median(b).toFixed(1).padStart(6)} ms  ratio ${(median(b) / median(a)).toFixed(3)}`);
  }
} finally {
  server.kill();
  rmSync(work, { recursive: true, force: true });
}
