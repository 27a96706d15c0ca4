// Discovery reading a raw tree the caller walked (TreeListing) instead of the disk: the project it
// gives is the one a disk walk gives, for every manifest form, and the walk is what it reads.
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, lstatSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Project, readProject } from "../../src/manifest/discover-io.ts";
import { TreeListing, walkRawTree } from "../../src/manifest/raw-tree-io.ts";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const REAL = join(import.meta.dir, "..", "fixtures", "real");
// Far enough ahead that nothing written by the test is within the racy margin.
const later = Date.now() + 60_000;

/** A project as plain data: every field but the `locate` functions (bigints as text). */
function plain(project: Project): string {
  return JSON.stringify(project, (key, value) => (key === "locate" ? undefined : typeof value === "bigint" ? `${value}n` : value));
}

function richProject(): string {
  const root = makeProject({
    ".ai/tools/dp/tool.yaml": "tool_id: dp\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime@^1\nconfig:\n  entrypoint: main.py\n  big: 9007199254740993\n  ratio: 1.0\nparameters: params.yaml\n",
    ".ai/tools/dp/params.yaml": "- name: city\n  type: string\n  required: true\n",
    ".ai/tools/dp/main.py": '# /// script\n# dependencies = ["requests>=2"]\n# ///\nprint(1)\n',
    ".ai/tools/dp/requirements.txt": "rich==13.0.0\n",
    ".ai/tools/dp/lib/helper.py": "X = 1\n",
    ".ai/tools/dp/__pycache__/x.pyc": "junk",
    ".ai/tools/node_tool/tool.json": '{"tool_id": "node_tool", "tool_type": "script", "version": "1.0.0", "executor": "node_runtime", "config": {"entrypoint": "x.js"}}',
    ".ai/tools/node_tool/x.js": "console.log(1)\n",
    ".ai/tools/node_tool/package.json": '{"dependencies": {"left-pad": "1.3.0"}}',
    ".ai/tools/weather.yaml": "tool_id: weather\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig:\n  method: GET\n  url: https://example.com\n",
    ".ai/tools/nested/deeper/hello.py": '"""\ntool_id: hello\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\n"""\nprint("hi")\n',
    ".ai/tools/greet.sh": { content: "#!/bin/bash\n# ---\n# tool_id: greet\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\necho hi\n", mode: 0o755 },
    ".ai/tools/notes.md": "---\ntool_id: notes\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\n---\n# Notes\n",
    ".ai/tools/plain.py": "print('no metadata')\n",
    ".ai/tools/broken.yaml": "tool_id: [unclosed\n",
    ".ai/tools/twice/tool.yaml": "tool_id: twice\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\n",
    ".ai/tools/twice/tool.json": "{}",
    ".ai/tools/mg/tool.json": '{"name": "mg", "version": "1.0.0", "type": "native", "entry_point": "bin/run", "capabilities": ["network"], "permissions": {"network": {"hosts": ["api.example.com"]}}}',
    ".ai/tools/mg/bin/run": { content: "#!/bin/sh\n", mode: 0o755 },
  });
  cpSync(join(REAL, "skills", "template-skill"), join(root, ".ai/tools/skills/template-skill"), { recursive: true });
  cpSync(join(REAL, "plugins", "hello-plugin"), join(root, ".ai/tools/plugins/hello-plugin"), { recursive: true });
  cpSync(join(REAL, "rye-os", "core"), join(root, ".ai/tools/ryeos/core"), { recursive: true });
  return root;
}

describe("the raw walk", () => {
  test("records lstatSync's numbers for every entry, folders and files", () => {
    const files: Record<string, string> = {};
    for (let t = 0; t < 30; t++) for (let f = 0; f < 12; f++) files[`.ai/tools/t${t}/d${f % 3}/f${f}.txt`] = "x".repeat(t * 13 + f);
    const root = makeProject(files);
    const tree = walkRawTree(root, Date.now() + 60_000)!;
    expect(tree.paths.length).toBeGreaterThan(400);
    tree.paths.forEach((path, i) => {
      const st = lstatSync(join(root, ".ai/tools", path));
      expect([path, ...tree.stats.slice(i * 5, i * 5 + 5)]).toEqual([path, st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode]);
    });
  });
});

describe("discovery over a raw tree", () => {
  test("gives the project a disk walk gives, for every manifest form", () => {
    const root = richProject();
    const tree = walkRawTree(root, later)!;
    expect(tree).toBeDefined();
    const fromDisk = readProject(root);
    const fromTree = readProject(root, { raw: { root, tree } });
    expect(fromDisk.tools.filter((t) => t.form !== "builtin").length).toBeGreaterThan(10);
    expect(fromDisk.findings.map((f) => f.rule)).toEqual(expect.arrayContaining(["discover/ambiguous-manifest", "discover/no-metadata"]));
    expect(plain(fromTree)).toBe(plain(fromDisk));
  });

  test("reads the walk, not the disk: a file removed after the walk is still listed", () => {
    const root = richProject();
    const tree = walkRawTree(root, later)!;
    rmSync(join(root, ".ai/tools/dp/lib/helper.py"));
    const fromTree = readProject(root, { raw: { root, tree } });
    expect(fromTree.tools.find((t) => t.id === "dp")!.files.map((f) => f.path)).toContain("lib/helper.py");
    expect(readProject(root).tools.find((t) => t.id === "dp")!.files.map((f) => f.path)).not.toContain("lib/helper.py");
  });

  test("a raw tree of another root is not used", () => {
    const root = richProject();
    const other = makeProject({ ".ai/tools/only.yaml": "tool_id: only\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\n" });
    const project = readProject(root, { raw: { root: other, tree: walkRawTree(other, later)! } });
    expect(project.tools.some((t) => t.id === "only")).toBe(false);
    expect(project.tools.some((t) => t.id === "dp")).toBe(true);
  });

  test("the listing answers only for the tree's own paths; anything else is left to the disk", () => {
    const root = richProject();
    const toolsDir = join(root, ".ai", "tools");
    const listing = new TreeListing(walkRawTree(root, later)!, toolsDir);
    expect(listing.entries(toolsDir)!.map((e) => e.name)).toContain("dp");
    expect(listing.entries(join(toolsDir, "dp"))!.find((e) => e.name === "lib")!.isDirectory()).toBe(true);
    expect(listing.entries(join(toolsDir, "dp", "main.py"))).toBeUndefined(); // a file is no folder
    expect(listing.entries(root)).toBeUndefined();
    expect(listing.stat(join(toolsDir, "greet.sh"))!.mode & 0o100).toBe(0o100);
    expect(listing.stat(join(root, "elsewhere"))).toBeUndefined();
  });
});
