// What fuel and the memory cap cost a CPU-bound WebAssembly tool. The baseline runs the module as
// published on kiwi's WASI host with no limits (bun, node:wasi); against it, the same module
// instrumented with fuel and the cap on the same host (the host flags only describe what is woven in), and the whole `kiwi exec` (verified chain,
// sandbox, instrumented copy from the cache). Median of N runs each, alternated, in one process.
//   bun run build && bun run scripts/bench-wasm.ts [--runs 9] [--iterations 30000000]
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeTree } from "../test/helpers/tree.ts";
import { compareAlternating, kiwiBinary, numberFlag, timeCommand } from "./bench-lib.ts";

const runs = numberFlag(process.argv, "--runs", 9);
const iterations = numberFlag(process.argv, "--iterations", 30_000_000);
const kiwi = kiwiBinary();
const host = join(import.meta.dir, "..", "src", "wasm", "wasi-host-io.ts");

// A pseudo-random walk: a call and a loop iteration per step, so fuel is taken at every entry,
// loop header and return (3 units a step).
const WAT = `(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func $step (param $x i32) (result i32)
    (i32.add (i32.mul (local.get $x) (i32.const 1103515245)) (i32.const 12345)))
  (func (export "_start") (local $i i32) (local $x i32)
    (loop $l
      (local.set $x (call $step (local.get $x)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const ${iterations}))))
    (i32.store (i32.const 0) (local.get $x))))`;

const { default: binaryen } = await import("binaryen");
const parsed = binaryen.parseText(WAT);
const module = parsed.emitBinary();
parsed.dispose();

const dir = mkdtempSync(join(tmpdir(), "kiwi-bench-wasm-"));
try {
  const project = writeTree(join(dir, "project"), {
    ".ai/tools/walk/tool.yaml": `tool_id: walk\ntool_type: wasm\nversion: 1.0.0\nexecutor: wasm_runtime\nconfig:\n  entrypoint: walk.wasm\nlimits:\n  fuel: ${iterations * 3 + 10}\n  timeout: 300\n`,
    ".ai/tools/walk/walk.wasm": module,
  });
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8", NO_COLOR: "1", KIWI_CACHE_DIR: join(dir, "cache") };
  const opts = { cwd: project, env };
  await timeCommand([kiwi, "lock"], opts);
  await timeCommand([kiwi, "exec", "walk"], opts); // instruments once, into the cache
  const cached = readdirSync(join(dir, "cache", "wasm")).find((f) => f.endsWith(".wasm"));
  if (!cached) throw new Error("kiwi exec left no instrumented module in the cache");
  const onHost = (wasm: string) => () => timeCommand([process.execPath, host, "--fuel", "-", "--memory-mb", "-", "--", wasm, "walk"], opts);
  await compareAlternating(`a ${iterations.toLocaleString("en")}-step loop`, runs, ["published module, no limits", onHost(join(project, ".ai/tools/walk/walk.wasm"))], [
    ["instrumented: fuel + memory cap", onHost(join(dir, "cache", "wasm", cached))],
    ["kiwi exec walk (verified, sandboxed)", () => timeCommand([kiwi, "exec", "walk"], opts)],
  ]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
