import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderCanonicalJson } from "../../src/integrity/canonical.ts";
import { readProject } from "../../src/manifest/discover-io.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const manifest = (id: string, timeout = "1.0") => `tool_id: ${id}\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig:\n  url: https://example.com\n  timeout: ${timeout}\n`;

function snapshot(root: string, cacheDir?: string) {
  return readProject(root, { cacheDir }).tools.map((t) => [t.id, renderCanonicalJson(t.manifest)]);
}

describe("the parsed-manifest cache", () => {
  test("gives the same tools, numbers included, as a fresh parse", () => {
    const root = makeProject({ ".ai/tools/a.yaml": manifest("a"), ".ai/tools/b.json": '{"tool_id": "b", "n": 12345678901234567890, "f": 2.0}', ".ai/tools/c.py": "print(1)\n" });
    const cache = makeTemp();
    const fresh = snapshot(root);
    expect(snapshot(root, cache)).toEqual(fresh); // fills the cache
    expect(readdirSync(join(cache, "manifests"))).toHaveLength(1);
    expect(snapshot(root, cache)).toEqual(fresh); // served from it
  });

  test("parses a file again when it changes", () => {
    const root = makeProject({ ".ai/tools/a.yaml": manifest("a") });
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

  test("ignores a corrupt cache file and rewrites it", () => {
    const root = makeProject({ ".ai/tools/a.yaml": manifest("a") });
    const cache = makeTemp();
    snapshot(root, cache);
    const [name] = readdirSync(join(cache, "manifests"));
    writeFileSync(join(cache, "manifests", name!), "{ not json");
    expect(snapshot(root, cache)).toEqual(snapshot(root));
    expect(snapshot(root, cache)).toEqual(snapshot(root));
  });
});
