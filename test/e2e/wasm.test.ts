// WebAssembly tools through the compiled binary: a module runs on kiwi's own WASI host with fuel
// and a linear-memory cap woven into it, opens only the directories its chain declares, and a
// module that is not a WASI command is refused before anything runs. Modules are built from .wat
// text with wabt (CI installs it).
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";
import { MODULES, hasWat2wasm, wat } from "../helpers/wat.ts";
import { kiwiIn } from "./lock-helpers.ts";

if (!hasWat2wasm) throw new Error("the WebAssembly tests need wat2wasm (Debian: wabt; .ci/run installs it)");

afterAll(cleanupTemps);

/** A kiwi-dialect wasm tool: `extra` is YAML appended to the manifest. */
const kiwiTool = (id: string, module: Uint8Array, extra = "") => ({
  [`.ai/tools/${id}/tool.yaml`]: `tool_id: ${id}\ntool_type: wasm\nversion: 1.0.0\nexecutor: wasm_runtime\ndescription: ${id}\nconfig:\n  entrypoint: ${id}.wasm\n${extra}`,
  [`.ai/tools/${id}/${id}.wasm`]: module,
});

/** magray's tool.json form, with its own fuel and memory fields. */
const magrayTool = (name: string, module: Uint8Array, runtime: Record<string, number>) => ({
  [`.ai/tools/${name}/tool.json`]: JSON.stringify({
    name,
    version: "1.0.0",
    description: name,
    type: "wasm",
    capabilities: [],
    entry_point: `${name}.wasm`,
    runtime_config: runtime,
    permissions: {},
    metadata: { author: "kiwi tests", license: "MIT", repository: "https://example.com/r", documentation: "https://example.com/d" },
  }),
  [`.ai/tools/${name}/${name}.wasm`]: module,
});

const errorOf = (stderr: string) => stderr.match(/E_[A-Z_]+/)?.[0];

describe("limits", () => {
  const root = makeProject({
    ...magrayTool("spin", wat(MODULES.spin), { fuel_limit: 1_000_000, max_execution_time_ms: 20_000 }),
    ...kiwiTool("grow", wat(MODULES.grow), "limits:\n  memory_mb: 8\n"),
    ...kiwiTool("counted_low", wat(MODULES.counted), "limits:\n  fuel: 1000\n"),
    ...kiwiTool("counted_enough", wat(MODULES.counted), "limits:\n  fuel: 1002\n"),
  });
  const kiwi = kiwiIn(root);

  test("an endless loop stops at its fuel (magray's fuel_limit) with E_WASM_LIMIT, long before its timeout", async () => {
    const started = Date.now();
    const r = await kiwi.run(["exec", "spin", "--unlocked"]);
    expect(r.exitCode).toBe(14);
    expect(errorOf(r.stderr)).toBe("E_WASM_LIMIT");
    expect(r.stderr).toContain("ran out of fuel: its limit is 1000000");
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  test("growing linear memory past memory_mb ends the call with E_WASM_LIMIT, not a quiet failed grow", async () => {
    const r = await kiwi.run(["exec", "grow", "--unlocked"]);
    expect(r.exitCode).toBe(14);
    expect(errorOf(r.stderr)).toBe("E_WASM_LIMIT");
    expect(r.stderr).toContain("past its limit of 8 MiB");
  });

  test("a table grown without end stops at kiwi's entry cap (its grow fails), instead of crashing the host out of memory", async () => {
    const grower = `(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (table $t 1 funcref)
  (func (export "_start")
    (loop $more (br_if $more (i32.ne (table.grow $t (ref.null func) (i32.const 100000)) (i32.const -1))))
    (call $exit (i32.const 5))))`;
    const r = await kiwiIn(makeProject(kiwiTool("tables", wat(grower), "limits:\n  memory_mb: 64\n"))).run(["exec", "tables", "--unlocked"]);
    expect(r.exitCode).toBe(5);
    expect(r.stderr).not.toContain("crashed");
  });

  test("fuel is exact: 1001 units of work pass with 1002 and stop with 1000", async () => {
    expect((await kiwi.run(["exec", "counted_enough", "--unlocked"])).exitCode).toBe(0);
    const low = await kiwi.run(["exec", "counted_low", "--unlocked"]);
    expect(low.exitCode).toBe(14);
    expect(errorOf(low.stderr)).toBe("E_WASM_LIMIT");
  });

  test("the dry run accounts for the fuel, the memory cap and the host", async () => {
    const r = await kiwi.run(["exec", "spin", "--unlocked", "--dry-run", "--json"]);
    expect(r.exitCode).toBe(0);
    const text = r.stdout;
    expect(text).toContain("1000000");
    expect(text).toContain("__wasi");
  });

  test("a dry run before any run (no run directory yet) plans from the verified module, locked or not", async () => {
    const fresh = kiwiIn(makeProject(kiwiTool("first", wat(MODULES.hello))));
    const unlocked = await fresh.run(["exec", "first", "--unlocked", "--dry-run", "--json"]);
    expect([unlocked.exitCode, unlocked.stderr]).toEqual([0, expect.not.stringContaining("E_IO")]);
    expect(unlocked.stdout).toContain("-f100000000-m2048-");
    expect((await fresh.run(["lock"])).exitCode).toBe(0);
    const locked = await fresh.run(["exec", "first", "--dry-run", "--json"]);
    expect([locked.exitCode, locked.stderr]).toEqual([0, expect.not.stringContaining("E_IO")]);
    expect(readdirSync(fresh.cache)).not.toContain("runs");
  });
});

describe("files", () => {
  const reader = wat(MODULES.reader);
  const root = makeProject({
    ...kiwiTool("reader", reader, 'requires:\n  - fs.read: ["./data"]\nparameters:\n  - { name: file, type: string, required: true }\n'),
    ...kiwiTool("blind", reader, "parameters:\n  - { name: file, type: string, required: true }\n"),
    ...kiwiTool("lost", reader, 'requires:\n  - fs.read: ["./nope"]\nparameters:\n  - { name: file, type: string, required: true }\n'),
    "data/note.txt": "declared data\n",
    "secret.txt": "do not read\n",
  });
  // Both tools take the file as their argument.
  for (const id of ["reader", "blind", "lost"]) {
    const path = join(root, ".ai/tools", id, "tool.yaml");
    writeFileSync(path, readFileSync(path, "utf8").replace(`entrypoint: ${id}.wasm\n`, `entrypoint: ${id}.wasm\n  args: ["{file}"]\n`));
  }
  const kiwi = kiwiIn(root);

  test("a declared directory is open to the module", async () => {
    const r = await kiwi.run(["exec", "reader", "--unlocked", "--param", "file=note.txt"]);
    expect(r.stderr).not.toContain("cannot open it");
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("declared data\n");
  });

  test("a path outside the declared directory cannot be opened", async () => {
    const r = await kiwi.run(["exec", "reader", "--unlocked", "--param", "file=../secret.txt"]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).not.toContain("do not read");
  });

  test("a declared folder that does not exist is left out, as the sandbox leaves it out: the module runs and cannot open it", async () => {
    for (const sandbox of ["--sandbox=auto", "--sandbox=off"]) {
      const r = await kiwi.run(["exec", "lost", "--unlocked", sandbox, "--param", "file=note.txt"]);
      expect([sandbox, r.exitCode, r.stderr]).toEqual([sandbox, 3, expect.stringContaining("cannot open it")]);
      expect(r.stderr).not.toContain("ENOENT");
    }
  });

  test("a module that declares no directory opens nothing", async () => {
    const r = await kiwi.run(["exec", "blind", "--unlocked", "--param", "file=note.txt"]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("");
  });
});

describe("read-only folders", () => {
  const writer = wat(MODULES.writer);
  const root = makeProject({
    ...kiwiTool("peek", writer, 'requires:\n  - fs.read: ["./data"]\n'),
    ...kiwiTool("save", writer, 'requires:\n  - fs.write: ["./data"]\n'),
    "data/note.txt": "mine\n",
  });
  const kiwi = kiwiIn(root);

  test("a folder declared only with fs.read cannot be written, with or without the sandbox (EROFS)", async () => {
    for (const sandbox of ["--sandbox=auto", "--sandbox=off"]) {
      const r = await kiwi.run(["exec", "peek", "--unlocked", sandbox]);
      expect([sandbox, r.exitCode]).toEqual([sandbox, 69]);
      expect(readdirSync(join(root, "data"))).toEqual(["note.txt"]);
    }
  });

  test("fs.write still writes it", async () => {
    const r = await kiwi.run(["exec", "save", "--unlocked", "--sandbox=off"]);
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(root, "data/written.txt"), "utf8")).toBe("pwned\n");
  });
});

describe("symbolic links", () => {
  const root = makeProject({
    ...kiwiTool("linker", wat(MODULES.linker), 'requires:\n  - fs.write: ["./out"]\nparameters:\n  - { name: target, type: string, required: true }\n  - { name: link, type: string, required: true }\n'),
    "out/sub/note.txt": "inside\n",
  });
  const path = join(root, ".ai/tools/linker/tool.yaml");
  writeFileSync(path, readFileSync(path, "utf8").replace("entrypoint: linker.wasm\n", 'entrypoint: linker.wasm\n  args: ["{target}", "{link}"]\n'));
  const kiwi = kiwiIn(root);
  const link = (target: string, name: string) => kiwi.run(["exec", "linker", "--unlocked", "--param", `target=${target}`, "--param", `link=${name}`]);

  test("a module may link within the folder it writes", async () => {
    const r = await link("sub/note.txt", "here");
    expect(r.exitCode).toBe(0);
    expect(readlinkSync(join(root, "out/here"))).toBe("sub/note.txt");
  });

  test("a link whose target is absolute or climbs with .. is refused (EPERM) and never written to the user's folder", async () => {
    for (const [target, name] of [["/etc/passwd", "abs"], ["../../.ssh", "up"], ["sub/../../x", "around"]] as const) {
      const r = await link(target, name);
      expect([target, r.exitCode]).toEqual([target, 63]);
      expect(readdirSync(join(root, "out"))).not.toContain(name);
    }
  });
});

describe("the module itself", () => {
  const root = makeProject({
    ...kiwiTool("hello", wat(MODULES.hello)),
    ...kiwiTool("not_wasm", new TextEncoder().encode("#!/bin/sh\necho pretending\n")),
    ...kiwiTool("foreign", wat(MODULES.foreignImport)),
    ...kiwiTool("memoryless", wat(`(module (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32))) (func (export "_start") (call $exit (i32.const 4))))`)),
  });
  const kiwi = kiwiIn(root);

  test("a well-behaved module prints its output and exits 0", async () => {
    const r = await kiwi.run(["exec", "hello", "--unlocked"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("hello from wasm\n");
  });

  test("a file that is not WebAssembly is refused with E_WASM_INVALID before anything runs", async () => {
    const r = await kiwi.run(["exec", "not_wasm", "--unlocked"]);
    expect(r.exitCode).toBe(6);
    expect(errorOf(r.stderr)).toBe("E_WASM_INVALID");
    expect(r.stderr).toContain("not_wasm");
    expect(r.stdout).not.toContain("pretending");
  });

  test("a module importing outside WASI is refused with E_WASM_INVALID naming the import", async () => {
    const r = await kiwi.run(["exec", "foreign", "--unlocked"]);
    expect(r.exitCode).toBe(6);
    expect(errorOf(r.stderr)).toBe("E_WASM_INVALID");
    expect(r.stderr).toMatch(/env/);
  });

  test("a module that exports no memory is refused with E_WASM_INVALID before it runs, not reported as a crash of the host", async () => {
    const r = await kiwi.run(["exec", "memoryless", "--unlocked"]);
    expect(r.exitCode).toBe(6);
    expect(r.stderr).toContain(`error[E_WASM_INVALID]: memoryless's module memoryless.wasm exports no memory named "memory": it is not a WASI command\n`);
    expect(r.stderr).not.toContain("SIGABRT");
  });

  test("the instrumented module is cached once, and a tampered cache entry is rebuilt, not run", async () => {
    expect((await kiwi.run(["exec", "hello", "--unlocked"])).exitCode).toBe(0);
    const dir = join(kiwi.cache, "wasm");
    const modules = readdirSync(dir).filter((f) => f.endsWith(".wasm"));
    expect(modules).toHaveLength(1);
    const cached = join(dir, modules[0]!);
    // A module that prints something else, in place of the cached instrumented copy.
    writeFileSync(cached, wat(MODULES.spin));
    const r = await kiwi.run(["exec", "hello", "--unlocked"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("hello from wasm\n");
    expect(readdirSync(dir).filter((f) => f.endsWith(".wasm"))).toHaveLength(1);
  });
});

describe("exit statuses", () => {
  test.each([250, 251])("a module that exits %d itself (the status the host reports a limit with) keeps that status, not E_WASM_LIMIT", async (status) => {
    const exits = `(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $exit (i32.const ${status}))))`;
    const kiwi = kiwiIn(makeProject(kiwiTool("exits", wat(exits))));
    for (const sandbox of ["off", "auto"]) {
      const r = await kiwi.run(["exec", "exits", "--unlocked", `--sandbox=${sandbox}`]);
      expect(r.exitCode).toBe(status);
      expect(r.stderr).not.toContain("E_WASM_LIMIT");
    }
  });
});

describe("traps", () => {
  test("a module that traps is E_EXEC_FAILED naming the trap, exit 134, sandboxed or not (not \"killed by SIGABRT\", nor a bare 134)", async () => {
    const traps = `(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (drop (i32.div_u (i32.const 1) (i32.const 0)))))`;
    const kiwi = kiwiIn(makeProject(kiwiTool("divide", wat(traps))));
    for (const sandbox of ["off", "auto"]) {
      const r = await kiwi.run(["exec", "divide", "--unlocked", `--sandbox=${sandbox}`]);
      expect(r.exitCode).toBe(134);
      expect(r.stderr).toMatch(/\nerror\[E_EXEC_FAILED\]: divide's WebAssembly module trapped: .*[Dd]ivision by zero.*\n  hint: a trap is the module's own failure/);
      expect(r.stderr).not.toContain("SIGABRT");
      const json = await kiwi.run(["exec", "divide", "--unlocked", `--sandbox=${sandbox}`, "--json"]);
      expect(JSON.parse(json.stdout).error).toMatchObject({ code: "E_EXEC_FAILED", exitCode: 134, details: { tool: "divide", trap: expect.stringMatching(/[Dd]ivision by zero/) } });
    }
  });
});

describe("debug names", () => {
  test("a module whose name section names a function as instrumentation names its hook (log_execution) runs", async () => {
    // As a C program built without stripping, with a function of that name.
    const named = wat(MODULES.hello.replace('(func (export "_start")', '(func $log_execution (param i32))\n  (func (export "_start")'), { names: true });
    const kiwi = kiwiIn(makeProject(kiwiTool("named", named)));
    const r = await kiwi.run(["exec", "named", "--unlocked"]);
    expect([r.exitCode, r.stdout]).toEqual([0, "hello from wasm\n"]);
    expect(r.stderr).not.toContain("E_WASM_INVALID");
  });
});

describe("locked", () => {
  test("a locked wasm tool runs from its verified copy", async () => {
    const root = makeProject(kiwiTool("hello", wat(MODULES.hello)));
    const kiwi = kiwiIn(root);
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    const r = await kiwi.run(["exec", "hello"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("hello from wasm\n");
  });
});
