import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { ManifestCache } from "../../src/manifest/parse-cache-io.ts";
import { join } from "node:path";
import { renderCanonicalJson } from "../../src/integrity/canonical.ts";
import { readProject } from "../../src/manifest/discover-io.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const manifest = (id: string, timeout = "1.0") => `tool_id: ${id}\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig:\n  url: https://example.com\n  timeout: ${timeout}\n`;

/** Backdates every manifest so the cache may remember it (changes younger than 2 s are not kept). */
function settle(root: string): string {
  for (const name of readdirSync(join(root, ".ai/tools"))) utimesSync(join(root, ".ai/tools", name), new Date(2020, 0, 1), new Date(2020, 0, 1));
  return root;
}

function snapshot(root: string, cacheDir?: string) {
  return readProject(root, { cacheDir }).tools.map((t) => [t.id, renderCanonicalJson(t.manifest)]);
}

describe("the parsed-manifest cache", () => {
  test("gives the same tools, numbers included, as a fresh parse", () => {
    const root = settle(makeProject({ ".ai/tools/a.yaml": manifest("a"), ".ai/tools/b.json": '{"tool_id": "b", "n": 12345678901234567890, "f": 2.0}', ".ai/tools/c.py": "print(1)\n" }));
    const cache = makeTemp();
    const fresh = snapshot(root);
    expect(snapshot(root, cache)).toEqual(fresh); // fills the cache
    expect(readdirSync(join(cache, "manifests"))).toHaveLength(1);
    expect(snapshot(root, cache)).toEqual(fresh); // served from it
  });

  test("parses a file again when it changes", () => {
    const root = settle(makeProject({ ".ai/tools/a.yaml": manifest("a") }));
    const cache = makeTemp();
    snapshot(root, cache);
    const file = join(root, ".ai/tools/a.yaml");
    writeFileSync(file, manifest("a", "2.5"));
    utimesSync(file, new Date(2000, 1, 1), new Date(2000, 1, 1));
    const tool = readProject(root, { cacheDir: cache }).tools.find((t) => t.id === "a")!;
    expect((tool.config as Record<string, unknown>).timeout).toBe(2.5);
  });

  test("still locates findings' positions for a cached manifest", () => {
    const root = makeProject({ ".ai/tools/a.yaml": manifest("a") });
    const cache = makeTemp();
    snapshot(root, cache);
    const tool = readProject(root, { cacheDir: cache }).tools.find((t) => t.id === "a")!;
    expect(tool.locate("/config/timeout")).toEqual({ line: 7, column: 3 });
  });

  test("does not remember a file changed in the last two seconds", () => {
    const root = makeProject({ ".ai/tools/a.yaml": manifest("a") });
    const cache = makeTemp();
    snapshot(root, cache);
    expect(readdirSync(cache)).toEqual([]);
    const stat = { size: 1, mtimeMs: Date.now(), ctimeMs: Date.now(), ino: 1 } as import("node:fs").Stats;
    const c = ManifestCache.open(cache, root);
    c.set("x", stat, null);
    c.save();
    expect(readdirSync(cache)).toEqual([]);
  });

  test("keeps a manifest's kiwi-ignore comments, which its parsed document does not hold", () => {
    const text = `${manifest("a")}  # kiwi-ignore: security/secret-value -- example\n  headers: { X-Api-Key: k }\n`;
    const root = settle(makeProject({ ".ai/tools/a.yaml": text, ".ai/tools/b.yaml": manifest("b") }));
    const cache = makeTemp();
    const ignoresOf = () => readProject(root, { cacheDir: cache }).tools.filter((t) => t.id === "a" || t.id === "b").map((t) => [t.id, t.ignores]);
    const expected = [["a", [{ line: 8, column: 3, target: 9, rules: ["security/secret-value"], invalid: [], reason: "example" }]], ["b", undefined]];
    expect(ignoresOf()).toEqual(expected); // fills the cache
    const [name] = readdirSync(join(cache, "manifests"));
    const stored = JSON.parse(readFileSync(join(cache, "manifests", name!), "utf8")) as { format: number; entries: Record<string, { ignores?: unknown }> };
    expect([stored.format, stored.entries[".ai/tools/a.yaml"]!.ignores, "ignores" in stored.entries[".ai/tools/b.yaml"]!]).toEqual([5, expected[0]![1], false]);
    expect(ignoresOf()).toEqual(expected); // served from it
  });

  test("does not reuse the entries of another cache format (ones kept before ignore comments were)", () => {
    const root = settle(makeProject({ ".ai/tools/a.yaml": `${manifest("a")}  # kiwi-ignore: security/host-any\n` }));
    const cache = makeTemp();
    readProject(root, { cacheDir: cache });
    const [name] = readdirSync(join(cache, "manifests"));
    const file = join(cache, "manifests", name!);
    const stored = JSON.parse(readFileSync(file, "utf8")) as { format?: number; entries: Record<string, { ignores?: unknown; value: unknown }> };
    delete stored.format;
    delete stored.entries[".ai/tools/a.yaml"]!.ignores;
    stored.entries[".ai/tools/a.yaml"]!.value = { tool_id: "stale" };
    writeFileSync(file, JSON.stringify(stored));
    const tool = readProject(root, { cacheDir: cache }).tools[0]!;
    expect([tool.id, tool.ignores?.[0]?.rules]).toEqual(["a", ["security/host-any"]]);
  });

  test("ignores a corrupt cache file and rewrites it", () => {
    const root = settle(makeProject({ ".ai/tools/a.yaml": manifest("a") }));
    const cache = makeTemp();
    snapshot(root, cache);
    const [name] = readdirSync(join(cache, "manifests"));
    writeFileSync(join(cache, "manifests", name!), "{ not json");
    expect(snapshot(root, cache)).toEqual(snapshot(root));
    expect(snapshot(root, cache)).toEqual(snapshot(root));
  });
});

describe("remembered PEP 723 answers", () => {
  const dirTool = ".ai/tools/py/tool.yaml";
  const yaml = "tool_id: py\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n";
  const backdate = (file: string) => utimesSync(file, new Date(2020, 0, 1), new Date(2020, 0, 1));

  test("a script without a block is remembered as such, and read again once it changes", () => {
    const root = makeProject({ [dirTool]: yaml, ".ai/tools/py/main.py": "print(1)\n" });
    const script = join(root, ".ai/tools/py/main.py");
    backdate(script);
    const cache = makeTemp();
    const first = readProject(root, { cacheDir: cache }).tools.find((t) => t.id === "py")!;
    expect(first.fileRequirements).toBeUndefined();
    const stored = JSON.parse(readFileSync(join(cache, "manifests", readdirSync(join(cache, "manifests"))[0]!), "utf8")) as { entries: Record<string, { value: unknown }> };
    expect(stored.entries[".ai/tools/py/main.py\0pep723"]).toEqual(expect.objectContaining({ value: null }));
    writeFileSync(script, '# /// script\n# dependencies = ["requests>=2"]\n# ///\nprint(1)\n');
    backdate(script);
    const after = readProject(root, { cacheDir: cache }).tools.find((t) => t.id === "py")!;
    expect(after.fileRequirements?.pypi.map((r) => r.spec)).toEqual(["requests>=2"]);
  });

  test("a script with a block is never remembered as without one", () => {
    const root = makeProject({ [dirTool]: yaml, ".ai/tools/py/main.py": '# /// script\n# dependencies = ["rich"]\n# ///\n' });
    backdate(join(root, ".ai/tools/py/main.py"));
    const cache = makeTemp();
    for (let i = 0; i < 2; i++) expect(readProject(root, { cacheDir: cache }).tools.find((t) => t.id === "py")!.fileRequirements?.pypi.map((r) => r.spec)).toEqual(["rich"]);
  });
});
