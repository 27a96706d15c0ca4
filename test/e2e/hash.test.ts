// `kiwi hash json|integrity|tool` from the compiled binary, including every shared integrity
// vector parsed losslessly from test/fixtures/vectors/integrity.json.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderCanonicalJson } from "../../src/integrity/canonical.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import type { CanonicalValue } from "../../src/integrity/value.ts";
import { parseJsonLossless } from "../../src/integrity/json-lossless.ts";
import { REPO_ROOT } from "../helpers/kiwi.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";
import { demoProject, kiwiIn } from "./lock-helpers.ts";

afterAll(cleanupTemps);

const VECTORS = join(REPO_ROOT, "test", "fixtures", "vectors", "integrity.json");
const doc = parseJsonLossless(readFileSync(VECTORS, "utf8")).value as unknown as { vectors: { name: string; input: CanonicalValue; canonical: string; integrity: string }[] };

describe("kiwi hash integrity", () => {
  test.each(doc.vectors.map((v) => [v.name, v] as const))("vector %s from a file", async (_name, v) => {
    const file = join(makeTemp(), "input.json");
    writeFileSync(file, renderCanonicalJson(v.input));
    const r = await kiwiIn(REPO_ROOT).run(["hash", "integrity", file]);
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, `sha256:${v.integrity}\n`, ""]);
  });

  test.each(doc.vectors.map((v) => [v.name, v] as const))("vector %s from stdin with --json", async (_name, v) => {
    const r = await kiwiIn(REPO_ROOT).run(["hash", "integrity", "-", "--json"], {}, renderCanonicalJson(v.input));
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ integrity: `sha256:${v.integrity}`, canonical: v.canonical });
    expect(r.stderr).toBe("");
  });

  // kiwi_mcp's compute_tool_integrity, as 000_b999499e1048a433.txt gives it.
  const REFERENCE = [
    "import hashlib, json, sys",
    "def compute_tool_integrity(tool_id, version, manifest, files):",
    "    sorted_files = sorted(files, key=lambda f: f['path'])",
    "    payload = {'tool_id': tool_id, 'version': version, 'manifest': manifest, 'files': [{'path': f['path'], 'sha256': f['sha256'], 'is_executable': f.get('is_executable', False)} for f in sorted_files]}",
    "    canonical = json.dumps(payload, sort_keys=True, separators=(',', ':'))",
    "    return hashlib.sha256(canonical.encode()).hexdigest()",
    "d = json.load(sys.stdin)",
    "print(compute_tool_integrity(d['tool_id'], d['version'], d['manifest'], d['files'] or []))",
  ].join("\n");

  test.each([
    ["extra keys in a file entry are dropped", { tool_id: "t", version: "1.0.0", manifest: {}, files: [{ path: "b.py", sha256: "ab".repeat(32), is_executable: true, size: 12, mode: "0755" }] }],
    ["is_executable: 1 passes through as 1", { tool_id: "t", version: "1.0.0", manifest: {}, files: [{ path: "a.sh", sha256: "cd".repeat(32), is_executable: 1 }] }],
    ["a digest that is not hex, a number version and a missing flag pass through", { tool_id: "t", version: 2, manifest: { a: [1, "x"] }, files: [{ path: "z", sha256: "NOT-HEX" }, { path: "a", sha256: "00" }] }],
  ])("%s: the digest is the reference function's (python3)", async (_what, input) => {
    const text = JSON.stringify(input);
    const r = await kiwiIn(REPO_ROOT).run(["hash", "integrity"], {}, text);
    expect([r.exitCode, r.stderr]).toEqual([0, ""]);
    const py = Bun.spawnSync(["python3", "-c", REFERENCE], { stdin: new TextEncoder().encode(text) });
    expect(py.exitCode).toBe(0);
    expect(r.stdout.trim()).toBe(`sha256:${py.stdout.toString().trim()}`);
  });

  test.each([
    ['{"tool_id": "x", "version": "1", "manifest": {}, "files": [{"sha256": "00"}]}', "/files/0/path must be a string (entries are sorted by it)"],
    ['{"tool_id": "x", "version": "1", "manifest": {}, "files": [{"path": "a"}]}', "/files/0/sha256 is missing"],
    ['{"tool_id": "x", "version": "1", "files": []}', "/manifest is missing"],
    ['{"tool_id": "x", "version": "1", "manifest": {}, "files": {}}', "/files must be an array or null"],
    ['{"tool_id": "x", "version": "1", "manifest": {}, "fils": []}', "/fils is not a field of the integrity input"],
  ])("refuses what the reference function cannot take either: %s", async (input, message) => {
    const r = await kiwiIn(REPO_ROOT).run(["hash", "integrity"], {}, input);
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toContain(`error[E_INPUT_INVALID]: <stdin>: ${message}`);
  });
});

describe("kiwi hash json", () => {
  test("hashes the whole vector file losslessly: floats stay floats, keys sorted by code point", async () => {
    const r = await kiwiIn(REPO_ROOT).run(["hash", "json", VECTORS]);
    const canonical = renderCanonicalJson(parseJsonLossless(readFileSync(VECTORS, "utf8")).value);
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, `${canonical}\nsha256:${sha256Hex(canonical)}\n`, ""]);
    expect(canonical).toContain("1.0");
  });

  test.each([
    ['{"b": 1.0, "a": 12345678901234567890}', '{"a":12345678901234567890,"b":1.0}'],
    ['{"s": "café ☕", "n": [1e16, -0.0]}', '{"n":[1e+16,-0.0],"s":"caf\\u00e9 \\u2615"}'],
  ])("%s -> %s", async (input, canonical) => {
    const r = await kiwiIn(REPO_ROOT).run(["hash", "json", "--json"], {}, input);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ canonical, digest: `sha256:${sha256Hex(canonical)}` });
  });

  test.each([
    ["malformed JSON", '{"a": }', /<stdin>:1:7: invalid JSON/],
    ["a duplicate key", '{"a": 1, "a": 2}', /duplicate/i],
  ])("refuses %s with a position", async (_what, input, message) => {
    const r = await kiwiIn(REPO_ROOT).run(["hash", "json"], {}, input);
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toMatch(message);
  });

  test("a missing file is a coded error, not a stack trace", async () => {
    const r = await kiwiIn(REPO_ROOT).run(["hash", "json", "nope.json"]);
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toBe('error[E_INPUT_INVALID]: cannot read nope.json: ENOENT\n  hint: check the path, or pass - to read stdin\n');
  });
});

describe("kiwi hash tool", () => {
  test("prints a tool's integrity and its file entries, by id or by path", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    const byId = await k.run(["hash", "tool", "dp"]);
    expect(byId.exitCode).toBe(0);
    const lines = byId.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^sha256:[0-9a-f]{64} {2}dp@1\.0\.0 {2}\.ai\/tools\/dp\/tool\.yaml$/);
    expect(lines.slice(1)).toEqual([`${sha256Hex("X = 1\n")}  -  lib/helper.py`, `${sha256Hex("from lib.helper import X\nprint(X)\n")}  x  main.py`]);
    const byPath = await k.run(["hash", "tool", ".ai/tools/dp"]);
    expect(byPath.stdout).toBe(byId.stdout);
    const json = JSON.parse((await k.run(["hash", "tool", ".ai/tools/dp/tool.yaml", "--json"])).stdout);
    expect(json).toMatchObject({ tool_id: "dp", version: "1.0.0", integrity: lines[0]!.split(" ")[0], files: [{ path: "lib/helper.py", is_executable: false }, { path: "main.py", is_executable: true }] });
    expect(sha256Hex(json.canonical)).toBe(json.integrity.slice(7));
    expect(json.canonical).toContain('"timeout":1.0');
  });

  test("hashes a built-in tool (no files)", async () => {
    const r = await kiwiIn(demoProject()).run(["hash", "tool", "subprocess", "--json"]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ tool_id: "subprocess", source: "<builtin>/subprocess.yaml", files: [] });
  });

  test("an unknown tool suggests the nearest id", async () => {
    const r = await kiwiIn(demoProject()).run(["hash", "tool", "weathr"]);
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toBe('error[E_TOOL_NOT_FOUND]: no tool has the id or path "weathr"\n  hint: did you mean "weather"?\n');
  });
});
