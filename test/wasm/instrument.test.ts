// Fuel and the memory cap as binaryen weaves them into a module: counted exactly (one unit per
// function entry and loop iteration), trapping with the exported counter saying which limit ended
// the run; the input bytes are never changed. The modules run here in-process on node:wasi.
import { describe, expect, test } from "bun:test";
import { WASI } from "node:wasi";
import { loadBinaryen } from "../../src/wasm/binaryen-io.ts";
import { instrumentModule } from "../../src/wasm/instrument.ts";
import { needs } from "../helpers/needs.ts";
import { MODULES, hasWat2wasm, wat } from "../helpers/wat.ts";

const binaryen = await loadBinaryen();

async function run(bytes: Uint8Array): Promise<{ trapped: boolean; fuel: bigint; memoryExceeded: number; pages: number }> {
  const wasi = new WASI({ version: "preview1", args: ["m"], env: {}, preopens: {} });
  const instance = await WebAssembly.instantiate(await WebAssembly.compile(bytes), { wasi_snapshot_preview1: wasi.wasiImport as never });
  const exports = instance.exports as Record<string, WebAssembly.Global & WebAssembly.Memory>;
  let trapped = false;
  try {
    wasi.start(instance); // none of these modules reaches proc_exit, which would end the test runner
  } catch {
    trapped = true;
  }
  return { trapped, fuel: exports.kiwi_fuel!.value as bigint, memoryExceeded: exports.kiwi_memory_exceeded!.value as number, pages: exports.memory!.buffer.byteLength / 65536 };
}

describe.skipIf(!needs(hasWat2wasm, "wat2wasm (wabt) is not installed"))("instrumentModule", () => {
  test("a call whose body ends in a 1000-iteration loop costs 1001 fuel (entry and iterations): it finishes with 1001 and traps with 1000", async () => {
    const bytes = wat(MODULES.counted);
    const before = Uint8Array.from(bytes);
    const enough = await run(instrumentModule(binaryen, bytes, { fuel: 1001, memoryMb: 16 }));
    expect([enough.trapped, enough.fuel]).toEqual([false, 0n]);
    const short = await run(instrumentModule(binaryen, bytes, { fuel: 1000, memoryMb: 16 }));
    expect([short.trapped, short.fuel]).toEqual([true, -1n]);
    expect(bytes).toEqual(before);
  });

  test("an infinite loop stops when 10^6 fuel is spent", async () => {
    const r = await run(instrumentModule(binaryen, wat(MODULES.spin), { fuel: 1_000_000, memoryMb: 16 }));
    expect([r.trapped, r.fuel, r.memoryExceeded]).toEqual([true, -1n, 0]);
  });

  test("memory grows up to the cap, and the grow past it traps with the memory flag set", async () => {
    const r = await run(instrumentModule(binaryen, wat(MODULES.grow), { fuel: 1_000_000, memoryMb: 4 }));
    expect([r.trapped, r.memoryExceeded]).toEqual([true, 1]);
    // One initial page plus three grows of 16 pages fit in 64 pages (4 MiB); the fourth would not.
    expect(r.pages).toBe(49);
  });

  test("a table grows to its share of the entry cap and no further: the grow past it fails with -1, the host is not grown out of memory", async () => {
    // Grows its table by 300,000 entries while that succeeds, then stores the table's size at 0.
    const text = `(module
  (memory (export "memory") 1)
  (table $t 1 funcref)
  (func (export "_start")
    (loop $more (br_if $more (i32.ne (table.grow $t (ref.null func) (i32.const 300000)) (i32.const -1))))
    (i32.store (i32.const 0) (table.size $t))))`;
    const bytes = instrumentModule(binaryen, wat(text), { fuel: 1_000_000, memoryMb: 16 });
    const wasi = new WASI({ version: "preview1", args: ["m"], env: {}, preopens: {} });
    const instance = await WebAssembly.instantiate(await WebAssembly.compile(bytes), { wasi_snapshot_preview1: wasi.wasiImport as never });
    wasi.start(instance);
    const size = new DataView((instance.exports.memory as WebAssembly.Memory).buffer).getUint32(0, true);
    expect(size).toBe(900_001); // 1 + 3 × 300,000: a fourth grow would pass 1,000,000
    // Two tables share the cap: half each.
    const two = `(module
  (memory (export "memory") 1)
  (table $a 1 funcref) (table $b 1 funcref)
  (func (export "_start")
    (loop $more (br_if $more (i32.ne (table.grow $a (ref.null func) (i32.const 300000)) (i32.const -1))))
    (loop $more (br_if $more (i32.ne (table.grow $b (ref.null func) (i32.const 300000)) (i32.const -1))))
    (i32.store (i32.const 0) (table.size $a))
    (i32.store (i32.const 4) (table.size $b))))`;
    const wasiTwo = new WASI({ version: "preview1", args: ["m"], env: {}, preopens: {} });
    const both = await WebAssembly.instantiate(await WebAssembly.compile(instrumentModule(binaryen, wat(two), { fuel: 1_000_000, memoryMb: 16 })), { wasi_snapshot_preview1: wasiTwo.wasiImport as never });
    wasiTwo.start(both);
    const view = new DataView((both.exports.memory as WebAssembly.Memory).buffer);
    expect([view.getUint32(0, true), view.getUint32(4, true)]).toEqual([300_001, 300_001]);
  });

  test("a module with no loops and no grows still gets both counters", async () => {
    const r = await run(instrumentModule(binaryen, wat(MODULES.hello), { fuel: 5, memoryMb: 1 }));
    expect([r.trapped, r.fuel, r.memoryExceeded]).toEqual([false, 3n, 0]); // its entry and its return
  });

  test("a module whose debug names hold the names instrumentation adds (a C function log_execution, a global kiwi_fuel) is instrumented, and counted as any other", async () => {
    const text = `(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (global $kiwi_fuel (mut i32) (i32.const 0))
  (func $log_execution (param i32) (global.set $kiwi_fuel (local.get 0)))
  (func $memory_grow_pre (result i32) (i32.const 0))
  (func (export "_start") (local $i i32)
    (loop $l
      (call $log_execution (local.get $i))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 1000))))))`;
    const bytes = wat(text, { names: true });
    expect(new TextDecoder().decode(bytes)).toContain("log_execution");
    // _start's entry and 1000 iterations, and 1000 entries of log_execution: 2001 units.
    const enough = await run(instrumentModule(binaryen, bytes, { fuel: 2001, memoryMb: 16 }));
    expect([enough.trapped, enough.fuel]).toEqual([false, 0n]);
    const short = await run(instrumentModule(binaryen, bytes, { fuel: 2000, memoryMb: 16 }));
    expect([short.trapped, short.fuel]).toEqual([true, -1n]);
  });
});
