// Fuel and a linear-memory cap woven into a WASI module before it runs, with binaryen (the
// toolchain library that reads, rewrites and validates every wasm feature; a hand-written rewriter
// would have to decode every instruction to find loops). Pure: bytes in, bytes out; the caller
// loads binaryen (binaryen-io.ts).
//
// Fuel: binaryen's log-execution pass calls a hook at every function entry, loop header and return; the
// hook, defined here in wasm, takes one unit from a mutable global and traps when it runs out.
// Memory: the instrument-memory pass (memory.grow only) calls a hook before each grow; the hook
// traps when the grow would pass the cap (the memory's declared maximum is left as written: a
// grow is the only way memory grows, and one whose size + delta wraps past 2^32 pages fails anyway).
// The globals are exported so the host can tell which limit ended the run.
import type Binaryen from "binaryen";
import type { BinaryenApi } from "./binaryen-io.ts";
import { FUEL_GLOBAL, MEMORY_GLOBAL, PAGE_BYTES, TABLE_ENTRIES_CAP, type WasmLimits, withoutNameSection } from "./module-info.ts";

/** Every feature a module may use, except compact imports (engines cannot read them yet). */
function features(binaryen: BinaryenApi): number {
  return binaryen.Features.All & ~((binaryen.Features as unknown as Record<string, number>).CompactImports ?? 0);
}

/** The instrumented module; the input is never changed (its digest is what was published). */
export function instrumentModule(binaryen: BinaryenApi, bytes: Uint8Array, limits: WasmLimits): Uint8Array {
  // Without its debug names, no name of the module's can collide with the ones added below.
  const m = binaryen.readBinary(withoutNameSection(bytes));
  try {
    m.setFeatures(features(binaryen));
    const capPages = Math.max(1, Math.floor((limits.memoryMb * 1024 * 1024) / PAGE_BYTES));
    binaryen.setPassArgument("log-execution", "kiwi");
    binaryen.setPassArgument("instrument-memory", "memory.grow");
    m.runPasses(["log-execution", "instrument-memory", "remove-unused-module-elements"]);
    const { i32, i64, none } = binaryen;

    m.addGlobal(FUEL_GLOBAL, i64, true, m.i64.const(BigInt(limits.fuel)));
    m.addGlobalExport(FUEL_GLOBAL, FUEL_GLOBAL);
    replaceImport(m, "log_execution", binaryen.createType([i32]), none, [], m.block(null, [
      m.global.set(FUEL_GLOBAL, m.i64.sub(m.global.get(FUEL_GLOBAL, i64), m.i64.const(1n))),
      m.if(m.i64.lt_s(m.global.get(FUEL_GLOBAL, i64), m.i64.const(0n)), m.unreachable()),
    ]));

    m.addGlobal(MEMORY_GLOBAL, i32, true, m.i32.const(0));
    m.addGlobalExport(MEMORY_GLOBAL, MEMORY_GLOBAL);
    // memory_grow_pre(id, delta) -> delta; memory_grow_post(id, result) -> result.
    replaceImport(m, "memory_grow_pre", binaryen.createType([i32, i32]), i32, [], m.block(null, [
      m.if(
        m.i32.gt_u(m.i32.add(m.memory.size(), m.local.get(1, i32)), m.i32.const(capPages)),
        m.block(null, [m.global.set(MEMORY_GLOBAL, m.i32.const(1)), m.unreachable()]),
      ),
      m.local.get(1, i32),
    ], i32));
    replaceImport(m, "memory_grow_post", binaryen.createType([i32, i32]), i32, [], m.local.get(1, i32));
    capTables(binaryen, m);
    if (!m.validate()) throw new Error("binaryen produced an invalid module");
    return m.emitBinary();
  } finally {
    m.dispose();
  }
}

/**
 * Gives every table a maximum within its share of TABLE_ENTRIES_CAP (never below its initial size,
 * which assertRunnable already held to the cap), so a table.grow past it fails with -1, as one past
 * the engine's own ceiling does, instead of growing the host out of memory.
 */
function capTables(binaryen: BinaryenApi, m: Binaryen.Module): void {
  const count = m.getNumTables();
  const share = Math.floor(TABLE_ENTRIES_CAP / Math.max(count, 1));
  const table = (binaryen as unknown as { Table: { setMax(ref: Binaryen.TableRef, max: number): void } }).Table;
  for (let i = 0; i < count; i++) {
    const ref = m.getTableByIndex(i);
    const info = binaryen.getTableInfo(ref);
    const max = Math.max(info.initial, Math.min(info.max ?? Number.POSITIVE_INFINITY, share));
    if (info.max === undefined || max < info.max) table.setMax(ref, max);
  }
}

/** Swaps an import the passes added for a function defined in the module (calls keep their name). */
function replaceImport(m: Binaryen.Module, name: string, params: Binaryen.Type, result: Binaryen.Type, vars: Binaryen.Type[], body: Binaryen.ExpressionRef): void {
  if (!m.getFunction(name)) return; // the pass found nothing to instrument
  m.removeFunction(name);
  m.addFunction(name, params, result, vars, body);
}
