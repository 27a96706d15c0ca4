// scripts/gen-tree.ts makes the benchmark tree: it must be valid, of every kind, and deterministic.
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readProject } from "../../src/manifest/discover-io.ts";
import { checkProject } from "../../src/validate/check-project.ts";
import { generateTree } from "../../scripts/gen-tree.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

test("generates a clean tree of every type and form", () => {
  const dir = makeTemp();
  const summary = generateTree({ dir, count: 44, filesPerTool: 0, fileSize: 0, seed: 1 });
  const project = readProject(dir);
  const result = checkProject(project);
  expect(result.findings).toEqual([]);
  expect(result.toolsChecked).toBe(44);
  expect(summary.tools).toBe(44);
  const types = new Set(project.tools.filter((t) => t.form !== "builtin").map((t) => `${t.type}/${t.form}/${t.dialect}`));
  expect([...types].sort()).toEqual([
    "api/file/kiwi",
    "knowledge/markdown/kiwi",
    "mcp_server/file/kiwi",
    "mcp_tool/file/kiwi",
    "runtime/file/kiwi",
    "script/directory/kiwi",
    "script/directory/magray",
    "script/script/kiwi",
    "wasm/directory/magray",
  ]);
});

test("--files-per-tool gives every tool its data files, deterministically", () => {
  const a = makeTemp();
  const b = makeTemp();
  const sa = generateTree({ dir: a, count: 11, filesPerTool: 3, fileSize: 1000, seed: 7 });
  generateTree({ dir: b, count: 11, filesPerTool: 3, fileSize: 1000, seed: 7 });
  const project = readProject(a);
  expect(checkProject(project).findings).toEqual([]);
  for (const tool of project.tools.filter((t) => t.form !== "builtin")) expect(tool.files.filter((f) => f.path.startsWith("data/")).length).toBe(3);
  expect(sa.bytes).toBeGreaterThan(11 * 3 * 1000);
  const file = ".ai/tools/group-04/api-00004/data/part-0002.bin";
  expect(readFileSync(join(a, file))).toEqual(readFileSync(join(b, file)));
});
