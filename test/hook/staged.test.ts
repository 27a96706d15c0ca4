import { afterAll, describe, expect, test } from "bun:test";
import { committedRemoteTools, groupByProject, reverseDependents, selectAffected, toolOfPath } from "../../src/hook/staged.ts";
import { readProject } from "../../src/manifest/discover-io.ts";
import { builtinTool } from "../../src/manifest/builtins.ts";
import type { Lockfile } from "../../src/schema/lockfile.ts";
import { lockedToolsOf } from "../../src/lockfile/locked-tools.ts";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";

afterAll(cleanupTemps);

// A small chain: py_rt (a project runtime) runs two scripts, one of which runs a third tool.
const project = readProject(
  makeProject({
    ".ai/tools/py_rt.yaml": "tool_id: py_rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: python3 }\n",
    ".ai/tools/a/tool.yaml": "tool_id: a\ntool_type: script\nversion: 1.0.0\nexecutor: py_rt\nconfig: { entrypoint: main.py }\n",
    ".ai/tools/a/main.py": "print(1)\n",
    ".ai/tools/a/lib/util.py": "X = 1\n",
    ".ai/tools/b.py": '"""\ntool_id: b\ntool_type: script\nversion: 1.0.0\nexecutor: py_rt\n"""\nprint(2)\n',
    ".ai/tools/c.yaml": "tool_id: c\ntool_type: runtime\nversion: 1.0.0\nexecutor: a\nconfig: { command: x }\n",
    ".ai/tools/web.yaml": "tool_id: web\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { method: GET, url: https://x.test/ }\n",
  }),
);
const ids = (tools: { id: string }[]) => tools.map((t) => t.id).sort();
const byId = (id: string) => project.tools.find((t) => t.id === id)!;

describe("grouping changed paths by project", () => {
  test.each([
    ["a tool at the repository root", [".ai/tools/x.yaml"], [{ root: "", paths: [".ai/tools/x.yaml"] }]],
    ["the lockfile", ["tool.lock.json"], [{ root: "", paths: ["tool.lock.json"] }]],
    ["nested projects, each on its own", ["svc/a/.ai/tools/t.sh", "svc/a/tool.lock.json", ".ai/tools/u.py"], [
      { root: "", paths: [".ai/tools/u.py"] },
      { root: "svc/a", paths: [".ai/tools/t.sh", "tool.lock.json"] },
    ]],
    ["the ignore file, at the root and in a nested project", [".ai/kiwi-ignore.yaml", "svc/a/.ai/kiwi-ignore.yaml"], [
      { root: "", paths: [".ai/kiwi-ignore.yaml"] },
      { root: "svc/a", paths: [".ai/kiwi-ignore.yaml"] },
    ]],
    ["files that belong to no project", ["README.md", "src/tool.lock.json.bak", "docs/.ai/notes.md", "docs/kiwi-ignore.yaml", ".ai/kiwi-ignore.yml"], []],
    ["a leading ./ and duplicates", ["./.ai/tools/x.yaml", ".ai/tools/x.yaml"], [{ root: "", paths: [".ai/tools/x.yaml"] }]],
  ])("handles %s", (_name, paths, expected) => {
    expect(groupByProject(paths)).toEqual(expected);
  });
});

describe("selecting the tools a commit affects", () => {
  test.each([
    ["a directory tool's manifest", ".ai/tools/a/tool.yaml", "a"],
    ["a file deep inside a directory tool", ".ai/tools/a/lib/util.py", "a"],
    ["a script with embedded metadata", ".ai/tools/b.py", "b"],
    ["a single-file manifest", ".ai/tools/web.yaml", "web"],
  ])("maps %s to its tool", (_name, path, id) => {
    expect(toolOfPath(project.tools, path)?.id).toBe(id);
  });

  test("maps a path outside every tool to none", () => {
    expect(toolOfPath(project.tools, ".ai/tools/notes.txt")).toBeUndefined();
  });

  test.each([
    ["a directory tool's folder itself", ".ai/tools/a"],
    ["a sibling folder whose name starts with a tool's folder name", ".ai/tools/ab/main.py"],
    ["a file beside the folder sharing its name as a prefix", ".ai/tools/a.py"],
    ["the lockfile", "tool.lock.json"],
  ])("maps %s to no tool", (_name, path) => {
    expect(toolOfPath(project.tools, path)).toBeUndefined();
  });

  test("lists the changed and dependent tools in tree order, each once, and none when nothing is changed", () => {
    const affected = selectAffected(project.tools, [".ai/tools/c.yaml", ".ai/tools/a/main.py", ".ai/tools/a/tool.yaml"]);
    const order = project.tools.map((t) => t.id);
    expect(affected.changed.map((t) => t.id)).toEqual(order.filter((id) => id === "a" || id === "c"));
    expect(affected.dependents).toEqual([]);
    expect(selectAffected(project.tools, [".ai/tools/notes.txt"])).toEqual({ changed: [], dependents: [], gone: [], lockfileChanged: false, ignoresChanged: false });
  });

  test("adds every tool whose chain runs through a changed one, transitively", () => {
    const affected = selectAffected(project.tools, [".ai/tools/py_rt.yaml"]);
    expect(ids(affected.changed)).toEqual(["py_rt"]);
    expect(ids(affected.dependents)).toEqual(["a", "b", "c"]);
  });

  test("leaves tools on other chains alone", () => {
    const affected = selectAffected(project.tools, [".ai/tools/a/main.py"]);
    expect([ids(affected.changed), ids(affected.dependents)]).toEqual([["a"], ["c"]]);
    expect(ids(selectAffected(project.tools, [".ai/tools/web.yaml"]).dependents)).toEqual([]);
  });

  test("names locked tools whose source was deleted or renamed away", () => {
    const entry = (source: string) => ({ version: "1.0.0", type: "script", source, executor: null, integrity: "sha256:x", manifest_digest: "sha256:y", files: [] });
    const lock = {
      lockfileVersion: 1,
      tools: { old_dir: entry(".ai/tools/old/tool.yaml"), old_file: entry(".ai/tools/old_file.sh"), untouched: entry(".ai/tools/elsewhere.sh"), a: entry(".ai/tools/a/tool.yaml") },
      mcp_servers: {},
    } as unknown as Lockfile;
    const affected = selectAffected(project.tools, [".ai/tools/old/main.py", ".ai/tools/old_file.sh"], lockedToolsOf(lock.tools));
    expect(affected.gone).toEqual(["old_dir", "old_file"]);
  });

  test("notices a changed lockfile", () => {
    expect(selectAffected(project.tools, ["tool.lock.json"]).lockfileChanged).toBe(true);
    expect(selectAffected(project.tools, [".ai/tools/b.py"]).lockfileChanged).toBe(false);
  });

  test("notices a changed ignore file, which changes no tool by itself", () => {
    expect(selectAffected(project.tools, [".ai/kiwi-ignore.yaml"])).toEqual({ changed: [], dependents: [], gone: [], lockfileChanged: false, ignoresChanged: true });
    expect(selectAffected(project.tools, [".ai/tools/b.py"]).ignoresChanged).toBe(false);
  });

  test("stops at a cycle instead of looping", () => {
    const cyclic = readProject(
      makeProject({
        ".ai/tools/x.yaml": "tool_id: x\ntool_type: runtime\nversion: 1.0.0\nexecutor: y\nconfig: { command: a }\n",
        ".ai/tools/y.yaml": "tool_id: y\ntool_type: runtime\nversion: 1.0.0\nexecutor: x\nconfig: { command: b }\n",
      }),
    );
    const x = cyclic.tools.find((t) => t.id === "x")!;
    expect(ids([...reverseDependents(cyclic.tools, new Set([x]))])).toEqual(["y"]);
  });

  test("runs a chain through the first tool with an id only: a shadowed built-in or a second tool of an id has no dependents", () => {
    const shadowed = readProject(
      makeProject({
        ".ai/tools/python_runtime.yaml": "tool_id: python_runtime\ntool_type: runtime\nversion: 2.0.0\nexecutor: subprocess\nconfig: { command: python3 }\n",
        ".ai/tools/s.py": '"""\ntool_id: s\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\n"""\nprint(1)\n',
        ".ai/tools/a1.yaml": "tool_id: rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: a }\n",
        ".ai/tools/a2.yaml": "tool_id: rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: b }\n",
        ".ai/tools/u.yaml": "tool_id: u\ntool_type: runtime\nversion: 1.0.0\nexecutor: rt\nconfig: { command: c }\n",
        ".ai/tools/v.yaml": "tool_id: v\ntool_type: runtime\nversion: 1.0.0\nexecutor: u\nconfig: { command: d }\n",
      }),
    );
    const all = (id: string) => shadowed.tools.filter((t) => t.id === id);
    // The project's python_runtime replaces the built-in, which runs nothing here.
    expect(all("python_runtime").map((t) => t.form)).toEqual(["file"]);
    expect(ids([...reverseDependents(shadowed.tools, new Set(all("python_runtime")))])).toEqual(["s"]);
    expect(ids([...reverseDependents(shadowed.tools, new Set([builtinTool("python_runtime")!]))])).toEqual([]);
    const [first, second] = all("rt");
    expect(ids([...reverseDependents(shadowed.tools, new Set([first!]))])).toEqual(["u", "v"]);
    expect(ids([...reverseDependents(shadowed.tools, new Set([second!]))])).toEqual([]);
    // A dependent among the targets is a target, never a dependent; the chain past it still counts.
    expect(ids([...reverseDependents(shadowed.tools, new Set([first!, all("u")[0]!]))])).toEqual(["v"]);
    expect(ids([...reverseDependents(shadowed.tools, new Set([second!, all("u")[0]!]))])).toEqual(["v"]);
  });

  test("follows a built-in runtime to the project tools that use it", () => {
    const python = project.tools.find((t) => t.id === "subprocess")!;
    expect(ids([...reverseDependents(project.tools, new Set([python]))])).toEqual(["a", "b", "bash_runtime", "bun_runtime", "c", "node_runtime", "py_rt", "python_runtime", "wasm_runtime"]);
    expect(byId("py_rt").executor?.id).toBe("subprocess");
  });
});

describe("remote tools in a commit", () => {
  test("counts the files a commit adds or changes per remote tool; kiwi's .gitignore, deletions and other tools are none", () => {
    const paths = [".ai/tools/.remote/crawl/crawl.yaml", ".ai/tools/.remote/crawl/lib/a.py", ".ai/tools/.remote/gone/tool.yaml", ".ai/tools/.remote/.gitignore", ".ai/tools/remote-notes/tool.yaml", ".ai/tools/x/.remote/y.txt"];
    expect([...committedRemoteTools(paths, new Set([".ai/tools/.remote/gone/tool.yaml"]))]).toEqual([["crawl", 2]]);
    expect(committedRemoteTools([], new Set()).size).toBe(0);
  });
});
