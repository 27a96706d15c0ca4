// The child_schemas memo: a remembered verdict gives exactly the findings a fresh compile gives,
// a changed schema or child misses, a damaged file or another kiwi version is never trusted, bad
// schemas are still reported, and a check whose pairs are all remembered never loads ajv. Only a
// project's own executors go through it: a built-in's schemas are compiled at build time, and
// judging with them costs less than the memo's key.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Project } from "../../src/manifest/discover-io.ts";
import { builtinTools } from "../../src/manifest/builtins.ts";
import type { Tool } from "../../src/manifest/model.ts";
import { exactText } from "../../src/validate/chain-layer.ts";
import { type CheckOptions, checkProject } from "../../src/validate/check-project.ts";
import { CHILD_SCHEMA_MEMO_FILE, openChildSchemaMemo } from "../../src/validate/child-schema-memo-io.ts";
import type { ChildSchemaMemo } from "../../src/validate/layer.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";
import { toolFromYaml } from "./_tools.ts";

afterAll(cleanupTemps);

const yaml = (file: string, text: string, files: string[] = []) =>
  toolFromYaml(text, { file, files, form: file.endsWith("/tool.yaml") ? "directory" : "file", fallbackId: file.slice(file.lastIndexOf("/") + 1).replace(/\.[a-z]+$/, "") });

const RUNTIME_SCHEMA = "{ type: object, required: [config], properties: { config: { type: object, additionalProperties: false, properties: { label: { type: string, pattern: '^[a-z]+$' }, entrypoint: { type: string } } } } }";
const runtime = (schema = RUNTIME_SCHEMA) =>
  yaml(".ai/tools/rt.yaml", `tool_id: rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: ruby }\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: ${schema}\n`);
/** A child of the project runtime: a bad label, an unknown config key. */
const rubyChild = (label = "Bad Label") => yaml(".ai/tools/rb/tool.yaml", `tool_id: rb\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig:\n  entrypoint: main.rb\n  label: "${label}"\n  extra: 1\n`, ["main.rb"]);
/** A child of the built-in python_runtime (a trusted schema) that it rejects. */
const pyChild = () => yaml(".ai/tools/py/tool.yaml", "tool_id: py\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.rb\n", ["main.rb"]);
const goodPy = () => yaml(".ai/tools/ok/tool.yaml", "tool_id: ok\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n", ["main.py"]);

function projectOf(tools: Tool[]): Project {
  return { root: "/project", toolsDir: "/project/.ai/tools", tools: [...tools, ...builtinTools().filter((b) => !tools.some((t) => t.id === b.id))], findings: [] };
}

/** A memo that counts what it was asked. */
function counting(memo: ChildSchemaMemo) {
  const seen = { hits: 0, misses: 0, sets: 0 };
  const wrapped: ChildSchemaMemo = {
    salt: memo.salt,
    get(key) {
      const value = memo.get(key);
      if (value) seen.hits++;
      else seen.misses++;
      return value;
    },
    set(key, errors) {
      seen.sets++;
      memo.set(key, errors);
    },
  };
  return { memo: wrapped, seen };
}

/** Checks `tools` with the memo in `cacheDir` (opened, used and saved as kiwi check does). */
function checkWith(cacheDir: string, tools: () => Tool[], options: CheckOptions & { version?: string } = {}) {
  const stored = openChildSchemaMemo(cacheDir, { version: options.version })!;
  const { memo, seen } = counting(stored);
  const result = checkProject(projectOf(tools()), { ...options, childSchemaMemo: memo });
  stored.save();
  return { result, seen };
}

const tools = () => [runtime(), rubyChild(), pyChild(), goodPy()];
/**
 * What `tools()` asks of the memo: rb's pair under the project runtime rt, and rt's own entry. The
 * pairs under built-ins (py and ok under python_runtime, rt and the built-in runtimes under
 * subprocess) are judged by the generated validators and never asked.
 */
const PAIRS = 1;

describe("the child_schemas memo", () => {
  test("a remembered verdict gives the same findings as a fresh compile, with no memo at all", () => {
    const fresh = checkProject(projectOf(tools()));
    const rules = fresh.findings.map((f) => [f.rule, f.file, f.pointer]);
    expect(rules).toEqual([
      ["child-schema/mismatch", ".ai/tools/py/tool.yaml", "/config/entrypoint"],
      ["child-schema/mismatch", ".ai/tools/rb/tool.yaml", "/config"],
      ["child-schema/mismatch", ".ai/tools/rb/tool.yaml", "/config/label"],
    ]);
    const cacheDir = makeTemp("kiwi-cache-");
    const first = checkWith(cacheDir, tools);
    expect(first.result).toEqual(fresh);
    // rb's pair and the project runtime's own entry; the built-ins' pairs never ask.
    expect(first.seen).toEqual({ hits: 0, misses: PAIRS + 1, sets: PAIRS + 1 });
    const second = checkWith(cacheDir, tools);
    expect(second.result).toEqual(fresh);
    expect(second.seen).toEqual({ hits: PAIRS + 1, misses: 0, sets: 0 });
  });

  test("--only and --strict read the same remembered verdicts and report the same as without them", () => {
    const cacheDir = makeTemp("kiwi-cache-");
    checkWith(cacheDir, tools);
    for (const options of [{ only: [".ai/tools/rb"] }, { only: ["rt"] }, { strict: true }]) {
      const warm = checkWith(cacheDir, tools, options);
      expect(warm.result).toEqual(checkProject(projectOf(tools()), options));
      expect(warm.seen.misses).toBe(0);
    }
  });

  test("a changed child or a changed schema misses; the unchanged pairs still hit", () => {
    const cacheDir = makeTemp("kiwi-cache-");
    checkWith(cacheDir, tools);
    const changedChild = () => [runtime(), rubyChild("good"), pyChild(), goodPy()];
    const child = checkWith(cacheDir, changedChild);
    expect(child.seen).toEqual({ hits: PAIRS, misses: 1, sets: 1 });
    expect(child.result).toEqual(checkProject(projectOf(changedChild())));
    expect(child.result.findings.filter((f) => f.file === ".ai/tools/rb/tool.yaml").map((f) => f.pointer)).toEqual(["/config"]);
    // The same schema with one key more: its own entry and its child's pair miss (its own pair under
    // subprocess, whose link document holds the schema, is judged by a built-in's validator).
    const changedSchema = () => [runtime(RUNTIME_SCHEMA.replace("type: object, required", "type: object, description: x, required")), rubyChild(), pyChild(), goodPy()];
    const schema = checkWith(cacheDir, changedSchema);
    expect(schema.seen).toEqual({ hits: 0, misses: 2, sets: 2 });
    expect(schema.result).toEqual(checkProject(projectOf(changedSchema())));
  });

  test("a built-in's schema is never remembered; a project copy of it is (an untrusted compile)", () => {
    const cacheDir = makeTemp("kiwi-cache-");
    const builtinOnly = checkWith(cacheDir, () => [pyChild()]);
    expect(builtinOnly.seen).toEqual({ hits: 0, misses: 0, sets: 0 });
    expect(builtinOnly.result.findings.map((f) => f.rule)).toEqual(["child-schema/mismatch"]);
    const builtin = builtinTools().find((t) => t.id === "python_runtime")!;
    const copy = () => [yaml(".ai/tools/python_runtime.yaml", `tool_id: python_runtime\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: python3 }\nvalidation:\n  child_schemas: ${JSON.stringify(builtin.childSchemas)}\n`), pyChild()];
    const project = checkWith(cacheDir, copy);
    // The copy's own entry and its child's pair (its own pair under subprocess is a built-in's).
    expect(project.seen).toEqual({ hits: 0, misses: 2, sets: 2 });
    expect(project.result).toEqual(checkProject(projectOf(copy())));
  });

  test("another kiwi version never reads this one's verdicts", () => {
    const cacheDir = makeTemp("kiwi-cache-");
    checkWith(cacheDir, tools, { version: "1.0.0" });
    const other = checkWith(cacheDir, tools, { version: "1.0.1" });
    expect(other.seen).toEqual({ hits: 0, misses: PAIRS + 1, sets: PAIRS + 1 });
    expect(other.result).toEqual(checkProject(projectOf(tools())));
    // The file is the last kiwi's alone (it never piles up every version's verdicts): going back re-judges.
    expect(JSON.parse(readFileSync(join(cacheDir, CHILD_SCHEMA_MEMO_FILE), "utf8").split("\n")[1]!).salt).toContain("kiwi 1.0.1 ");
    expect(checkWith(cacheDir, tools, { version: "1.0.0" }).seen).toEqual({ hits: 0, misses: PAIRS + 1, sets: PAIRS + 1 });
  });

  test.each([
    ["truncated", (text: string) => text.slice(0, text.length - 20)],
    ["one byte changed", (text: string) => text.replace('"message":"must', '"message":"mUst')],
    ["not JSON", () => "garbage\n"],
    ["empty", () => ""],
  ])("a damaged file (%s) reads as empty: every pair is judged afresh", (_name, damage) => {
    const cacheDir = makeTemp("kiwi-cache-");
    checkWith(cacheDir, tools);
    const path = join(cacheDir, CHILD_SCHEMA_MEMO_FILE);
    writeFileSync(path, damage(readFileSync(path, "utf8")));
    const again = checkWith(cacheDir, tools);
    expect(again.seen.hits).toBe(0);
    expect(again.result).toEqual(checkProject(projectOf(tools())));
  });

  test("a well-formed file whose verdicts are not ajv's errors is never served", () => {
    const cacheDir = makeTemp("kiwi-cache-");
    checkWith(cacheDir, tools);
    const path = join(cacheDir, CHILD_SCHEMA_MEMO_FILE);
    const body = JSON.parse(readFileSync(path, "utf8").split("\n")[1]!) as { format: number; entries: Record<string, unknown> };
    for (const key of Object.keys(body.entries)) body.entries[key] = [{ instancePath: 1 }];
    const text = `${JSON.stringify(body)}\n`;
    writeFileSync(path, `${new Bun.CryptoHasher("sha256").update(text).digest("hex")}\n${text}`);
    const again = checkWith(cacheDir, tools);
    expect(again.seen.hits).toBe(0);
    expect(again.result).toEqual(checkProject(projectOf(tools())));
  });

  test.each([
    ["an unsafe pattern", "{ properties: { config: { properties: { label: { pattern: '^(a|a)*$' } } } } }", "/validation/child_schemas/0/schema"],
    ["a remote reference", "{ $ref: 'https://evil.test/s.json' }", "/validation/child_schemas/0/schema"],
    ["a schema that is not one", "{ type: 12 }", "/validation/child_schemas/0/schema/type"],
  ])("%s is reported as child-schema/invalid on every run and never remembered", (_name, schema, pointer) => {
    const cacheDir = makeTemp("kiwi-cache-");
    const bad = () => [runtime(schema), rubyChild()];
    for (let run = 0; run < 2; run++) {
      const { result, seen } = checkWith(cacheDir, bad);
      expect(result).toEqual(checkProject(projectOf(bad())));
      expect(result.findings.map((f) => [f.rule, f.file])).toEqual([["child-schema/invalid", ".ai/tools/rt.yaml"]]);
      expect(result.findings[0]!.pointer ?? "").toStartWith(pointer!);
      // Its own entry and its child's pair are compiled on every run (the others are built-ins').
      expect(seen.misses).toBe(2);
      expect(seen.sets).toBe(0);
    }
  });

  test("nothing is written when every verdict was remembered, and nothing without a cache directory", () => {
    const cacheDir = makeTemp("kiwi-cache-");
    checkWith(cacheDir, tools);
    const path = join(cacheDir, CHILD_SCHEMA_MEMO_FILE);
    writeFileSync(path, readFileSync(path, "utf8"));
    const before = Bun.file(path).lastModified;
    Bun.sleepSync(20);
    checkWith(cacheDir, tools);
    expect(Bun.file(path).lastModified).toBe(before);
    expect(openChildSchemaMemo(undefined)).toBeUndefined();
  });

  test("a check whose pairs are all remembered never loads ajv (a real process)", async () => {
    const cacheDir = makeTemp("kiwi-cache-");
    const dir = makeTemp();
    const script = join(dir, "run.ts");
    const src = join(import.meta.dir, "..", "..", "src");
    writeFileSync(
      script,
      `import { checkProject } from ${JSON.stringify(join(src, "validate/check-project.ts"))};
import { openChildSchemaMemo } from ${JSON.stringify(join(src, "validate/child-schema-memo-io.ts"))};
import { builtinTools } from ${JSON.stringify(join(src, "manifest/builtins.ts"))};
import { toolFromYaml } from ${JSON.stringify(join(import.meta.dir, "_tools.ts"))};
const child = toolFromYaml(${JSON.stringify("tool_id: py\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.rb\n")}, { file: ".ai/tools/py/tool.yaml", files: ["main.rb"], form: "directory" });
const own = process.argv[2] === "own" ? [toolFromYaml(${JSON.stringify(`tool_id: rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: ruby }\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: ${RUNTIME_SCHEMA}\n`)}, { file: ".ai/tools/rt.yaml", form: "file" }), toolFromYaml(${JSON.stringify('tool_id: rb\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig:\n  entrypoint: main.rb\n  label: "Bad Label"\n')}, { file: ".ai/tools/rb/tool.yaml", files: ["main.rb"], form: "directory" })] : [];
const memo = openChildSchemaMemo(${JSON.stringify(cacheDir)});
const result = checkProject({ root: "/p", toolsDir: "/p/.ai/tools", tools: [child, ...own, ...builtinTools()], findings: [] }, { childSchemaMemo: memo });
memo.save();
// ajv's compiler (its core); the generated validators use only its small runtime helpers.
const ajv = Object.keys(require.cache).some((k) => /[\\\\/]ajv[\\\\/]dist[\\\\/]core\\.js$/.test(k));
console.log(JSON.stringify({ rules: result.findings.map((f) => f.rule), ajv }));
`,
    );
    const run = (...args: string[]) => {
      const proc = Bun.spawnSync([process.execPath, script, ...args], { stdout: "pipe", stderr: "pipe" });
      expect(proc.stderr.toString()).toBe("");
      expect(proc.exitCode).toBe(0);
      return JSON.parse(proc.stdout.toString());
    };
    // Built-in runtimes alone: their validators were generated at build time, ajv never loads.
    expect(run()).toEqual({ rules: ["child-schema/mismatch"], ajv: false });
    // A project runtime's schema is compiled once, then remembered.
    expect(run("own")).toEqual({ rules: ["child-schema/mismatch", "child-schema/mismatch"], ajv: true });
    expect(run("own")).toEqual({ rules: ["child-schema/mismatch", "child-schema/mismatch"], ajv: false });
  });
});

describe("exactText (the memo key's view of a value)", () => {
  test.each([
    ["key order", { a: 1, b: 2 }, { b: 2, a: 1 }],
    ["a string and a number", "1", 1],
    ["nested arrays", [[1], 2], [1, [2]]],
  ])("tells apart %s", (_name, a, b) => {
    expect(exactText(a)).toBeString();
    expect(exactText(a)).not.toBe(exactText(b));
  });

  test.each([
    ["-0 (JSON says 0)", { a: -0 }],
    ["Infinity (JSON says null)", [Number.POSITIVE_INFINITY]],
    ["NaN (JSON says null)", { a: Number.NaN }],
    ["undefined (JSON drops it)", { a: undefined }],
    ["a hole in an array", [1, , 2]],
    ["a class instance", { a: new Date(0) }],
    ["a Map", { a: new Map() }],
    ["a function", { a: () => 1 }],
  ])("has no text for %s, whose JSON would stand for another value", (_name, value) => {
    expect(exactText(value)).toBeUndefined();
  });

  test("has no text for cycles and huge values; keeps __proto__ as the own key it is", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(exactText(cycle)).toBeUndefined();
    expect(exactText(Array.from({ length: 300_000 }, () => 1))).toBeUndefined();
    expect(exactText(JSON.parse('{"__proto__": 1}'))).toBe('{"__proto__":1}');
  });

  test("a child whose document has no exact text (-0.0) is judged afresh on every run, never remembered", () => {
    const cacheDir = makeTemp("kiwi-cache-");
    const inf = () => [runtime(), yaml(".ai/tools/rb/tool.yaml", "tool_id: rb\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig:\n  entrypoint: main.rb\n  label: -0.0\n", ["main.rb"])];
    for (let run = 0; run < 2; run++) {
      const { result, seen } = checkWith(cacheDir, inf);
      expect(result).toEqual(checkProject(projectOf(inf())));
      expect(result.findings.map((f) => [f.rule, f.pointer])).toEqual([["child-schema/mismatch", "/config/label"]]);
      // Not asked at all: only the runtime's own entry goes through the memo.
      expect(seen.hits + seen.misses).toBe(1);
    }
  });
});
