// What kiwi reads from a module before it runs it, and what it refuses: the bytes are wasm, only
// WASI preview 1 functions are imported, one 32-bit memory, a _start, an initial memory within the cap.
import { describe, expect, test } from "bun:test";
import { assertRunnable, readModuleInfo, withoutNameSection } from "../../src/wasm/module-info.ts";
import { needs } from "../helpers/needs.ts";
import { MODULES, hasWat2wasm, wat } from "../helpers/wat.ts";

const limits = { fuel: 1000, memoryMb: 16 };
const check = (bytes: Uint8Array, l = limits) => assertRunnable(readModuleInfo(bytes, "m.wasm"), "m.wasm", l);

describe("readModuleInfo", () => {
  test.each([
    [new TextEncoder().encode("#!/bin/sh\necho hi\n"), "m.wasm is not a WebAssembly module: it does not start with \\0asm"],
    [Uint8Array.of(0, 0x61, 0x73, 0x6d), "m.wasm is not a WebAssembly module: it does not start with \\0asm"],
    [Uint8Array.of(0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0), "m.wasm is not a WebAssembly module: it is a component (component model), not a core module"],
    [Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 2, 0x7f), "m.wasm is not a WebAssembly module: a section runs past the end"],
  ])("refuses bytes that are not a core module (%#)", (bytes, message) => {
    expect(() => readModuleInfo(bytes, "m.wasm")).toThrow(expect.objectContaining({ code: "E_WASM_INVALID", message }));
  });
});

describe.skipIf(!needs(hasWat2wasm, "wat2wasm (wabt) is not installed"))("assertRunnable", () => {
  test("a WASI command with one memory passes, and its imports and memory are read", () => {
    const info = readModuleInfo(wat(MODULES.reader), "m.wasm");
    expect(info.imports.map((i) => `${i.module}.${i.name}`)).toEqual([
      "wasi_snapshot_preview1.path_open",
      "wasi_snapshot_preview1.fd_read",
      "wasi_snapshot_preview1.fd_write",
      "wasi_snapshot_preview1.proc_exit",
      "wasi_snapshot_preview1.args_get",
      "wasi_snapshot_preview1.args_sizes_get",
    ]);
    expect(info.memories).toEqual([{ initial: 1, memory64: false, shared: false }]);
    expect(() => check(wat(MODULES.reader))).not.toThrow();
  });

  test("an import kiwi's host does not provide is E_WASM_INVALID naming it", () => {
    expect(() => check(wat(MODULES.foreignImport))).toThrow(
      expect.objectContaining({ code: "E_WASM_INVALID", message: "m.wasm imports function env.launch_missiles, which kiwi's WASI host does not provide" }),
    );
  });

  test("an imported memory, a 64-bit memory and a missing _start are refused", () => {
    expect(() => check(wat(`(module (import "env" "memory" (memory 1)) (func (export "_start")))`))).toThrow(expect.objectContaining({ message: "m.wasm imports memory env.memory, which kiwi's WASI host does not provide" }));
    expect(() => check(wat(`(module (memory i64 1) (func (export "_start")))`.replace("(memory i64 1)", "(memory (export \"memory\") i64 1)")))).toThrow(expect.objectContaining({ message: "m.wasm uses a 64-bit memory, which kiwi's host does not run" }));
    expect(() => check(wat(`(module (memory 1) (func (export "main")))`))).toThrow(expect.objectContaining({ message: "m.wasm exports no _start function: it is not a WASI command" }));
    expect(() => check(wat(`(module (memory (export "memory") 1) (global (export "_start") i32 (i32.const 0)))`))).toThrow(expect.objectContaining({ message: "m.wasm exports no _start function: it is not a WASI command" }));
  });

  test.each([
    ["no memory at all", `(module (func (export "_start")))`],
    ["a memory it does not export", `(module (memory 1) (func (export "_start")))`],
    ["its memory under another name", `(module (memory (export "mem") 1) (func (export "_start")))`],
    ["a function named memory", `(module (memory 1) (func (export "memory")) (func (export "_start")))`],
  ])("a module with %s is E_WASM_INVALID before it runs (WASI reads and writes memory by that name)", (_what, text) => {
    expect(() => check(wat(text))).toThrow(expect.objectContaining({ code: "E_WASM_INVALID", message: 'm.wasm exports no memory named "memory": it is not a WASI command' }));
  });

  test.each(["kiwi_fuel", "kiwi_memory_exceeded"])("an export named %s, which kiwi's host reads after a trap, is refused naming it", (name) => {
    expect(() => check(wat(`(module (memory 1) (global (export "${name}") (mut i64) (i64.const 5)) (func (export "_start")))`))).toThrow(
      expect.objectContaining({ code: "E_WASM_INVALID", message: `m.wasm exports ${name}, a name kiwi reserves for the counter it adds to the module` }),
    );
  });

  test("tables starting with more than 1,000,000 entries in all are E_WASM_LIMIT before anything runs; their sizes are read", () => {
    const tables = (sizes: number[]) => wat(`(module (memory (export "memory") 1) ${sizes.map((n) => `(table ${n} funcref)`).join(" ")} (func (export "_start")))`);
    expect(readModuleInfo(tables([3, 7]), "m.wasm").tables).toEqual([{ initial: 3 }, { initial: 7 }]);
    expect(() => check(tables([600_000, 400_000]))).not.toThrow();
    expect(() => check(tables([600_000, 400_001]))).toThrow(expect.objectContaining({ code: "E_WASM_LIMIT", message: "m.wasm starts with 1000001 table entries, past kiwi's limit of 1000000" }));
  });

  test("an initial memory past the cap is E_WASM_LIMIT before anything runs", () => {
    expect(() => check(wat(`(module (memory (export "memory") 512) (func (export "_start")))`))).toThrow(
      expect.objectContaining({ code: "E_WASM_LIMIT", message: "m.wasm starts with 32 MiB of linear memory, past its memory limit of 16 MiB" }),
    );
  });
});

describe.skipIf(!needs(hasWat2wasm, "wat2wasm (wabt) is not installed"))("withoutNameSection", () => {
  test("drops the name section and keeps every other byte; a module without one comes back as it is", () => {
    const plain = wat(MODULES.hello);
    const named = wat(MODULES.hello, { names: true });
    expect(named.byteLength).toBeGreaterThan(plain.byteLength);
    expect(withoutNameSection(named)).toEqual(plain);
    expect(withoutNameSection(plain)).toBe(plain);
  });

  test("bytes that are not well-formed sections come back unchanged", () => {
    const truncated = Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 0, 0x7f);
    expect(withoutNameSection(truncated)).toBe(truncated);
  });
});
