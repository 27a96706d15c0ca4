// What the sandbox costs: a sandboxed run of a Python tool against the same run unsandboxed, measured
// in the same process, median of N runs each, printed as a difference and a ratio.
//   bun run scripts/bench-sandbox.ts [--runs 21] [--kiwi path]
// With dist/kiwi built (and `kiwi exec` present) it times `kiwi exec` of the three-link chain
// (python script -> python_runtime -> subprocess) with --sandbox=require vs --sandbox=off; with
// --launcher (or no usable binary) it times the launcher alone: bwrap+setpriv+prlimit vs a plain spawn.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prepareSandbox } from "../src/exec/sandbox-io.ts";
import { compareAlternating, timeCommand } from "./bench-lib.ts";

const argv = process.argv.slice(2);
const runs = Number(argv[argv.indexOf("--runs") + 1]) || 21;
const kiwi = argv.includes("--kiwi") ? argv[argv.indexOf("--kiwi") + 1]! : join(import.meta.dir, "..", "dist", "kiwi");
const SCRIPT = `import json, sys\nparams = json.load(sys.stdin)\nprint(json.dumps({"sum": sum(params.get("values", []))}))\n`;


const dir = mkdtempSync(join(tmpdir(), "kiwi-bench-sandbox-"));
try {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8" };
  const useKiwi = !argv.includes("--launcher") && existsSync(kiwi) && Bun.spawnSync([kiwi, "exec", "--help"], { env }).exitCode === 0;
  if (useKiwi) {
    const project = join(dir, "project");
    mkdirSync(join(project, ".ai", "tools", "summer"), { recursive: true });
    writeFileSync(join(project, ".ai", "tools", "summer", "main.py"), SCRIPT);
    writeFileSync(
      join(project, ".ai", "tools", "summer", "tool.yaml"),
      "tool_id: summer\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\nparameters:\n  - name: values\n    type: array\n    items: { type: number }\n",
    );
    const kenv = { ...env, KIWI_CACHE_DIR: join(dir, "cache"), NO_COLOR: "1" };
    const lock = Bun.spawnSync([kiwi, "lock"], { cwd: project, env: kenv });
    if (lock.exitCode !== 0) throw new Error(`kiwi lock failed:\n${lock.stderr}`);
    const run = (mode: string) => () => timeCommand([kiwi, "exec", "summer", `--sandbox=${mode}`, "--params", '{"values":[1,2,3]}'], { cwd: project, env: kenv });
    await compareAlternating("kiwi exec summer (script -> python_runtime -> subprocess)", runs, ["unsandboxed", run("off")], [["sandboxed", run("require")]]);
  } else {
    const runDir = join(dir, "run");
    mkdirSync(runDir);
    writeFileSync(join(runDir, "main.py"), SCRIPT);
    const input = { toolId: "summer", argv: ["python3", "-B", "-u", join(runDir, "main.py")], runDirs: [runDir], cwd: runDir, env, capabilities: [], limits: {}, home: dir, projectRoot: dir };
    const plain = prepareSandbox(input, "off", process.env);
    const boxed = prepareSandbox(input, "require", process.env);
    const stdin = '{"values":[1,2,3]}';
    console.log(`launcher only${argv.includes("--launcher") ? "" : " (dist/kiwi has no exec yet)"}: ${boxed.argv[0]} vs ${plain.argv[0]}`);
    await compareAlternating(
      "python3 main.py, prlimit alone vs bwrap+prlimit",
      runs,
      ["unsandboxed", () => timeCommand(plain.argv, { cwd: runDir, env: plain.env, stdin })],
      [["sandboxed", () => timeCommand(boxed.argv, { cwd: runDir, env: boxed.env, stdin })]],
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
