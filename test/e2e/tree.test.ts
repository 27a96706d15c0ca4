// `kiwi tree` through the compiled binary: the chain with versions, integrities, sources and
// lock status, as text and as one JSON document.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";
import { kiwiIn } from "./lock-helpers.ts";

afterAll(cleanupTemps);

const FILES = {
  ".ai/tools/dp/tool.yaml": "tool_id: dp\ntool_type: script\nversion: 1.2.0\nexecutor: python_runtime@^1\nconfig:\n  entrypoint: main.py\n",
  ".ai/tools/dp/main.py": "print(1)\n",
};

const short = (digest: string) => digest.slice("sha256:".length, "sha256:".length + 12);

describe("kiwi tree", () => {
  test("prints the locked chain with versions, short integrities, sources and status", async () => {
    const root = makeProject(FILES);
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).tools;
    expect(await k.run(["tree", "dp"])).toEqual({
      exitCode: 0,
      stdout: [
        `dp 1.2.0 (script)  sha256:${short(lock.dp.integrity)}  .ai/tools/dp/tool.yaml  verified`,
        `└─ python_runtime 1.0.0 (runtime)  sha256:${short(lock.python_runtime.integrity)}  <builtin>/python_runtime.yaml  verified`,
        `   └─ subprocess 1.1.0 (primitive)  sha256:${short(lock.subprocess.integrity)}  <builtin>/subprocess.yaml  verified`,
        "",
      ].join("\n"),
      stderr: "",
    });
  });

  test("--json gives one document with full integrities and where each link comes from", async () => {
    const root = makeProject(FILES);
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).tools;
    const r = await k.run(["tree", "dp", "--json"]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      ok: true,
      tool: "dp",
      mode: "locked",
      lockfile: "tool.lock.json",
      links: [
        { id: "dp", version: "1.2.0", type: "script", source: ".ai/tools/dp/tool.yaml", executor: "python_runtime@1.0.0", locked: lock.dp.integrity, tree: lock.dp.integrity, status: "verified", files: 1 },
        { id: "python_runtime", version: "1.0.0", type: "runtime", source: "<builtin>/python_runtime.yaml", executor: "subprocess@1.1.0", locked: lock.python_runtime.integrity, tree: lock.python_runtime.integrity, status: "verified", files: 0 },
        { id: "subprocess", version: "1.1.0", type: "primitive", source: "<builtin>/subprocess.yaml", executor: null, locked: lock.subprocess.integrity, tree: lock.subprocess.integrity, status: "verified", files: 0 },
      ],
    });
  });

  test("marks a link whose files changed since the lock, and exits 6 as exec would refuse it", async () => {
    const root = makeProject(FILES);
    const k = kiwiIn(root);
    await k.run(["lock"]);
    writeFileSync(join(root, ".ai/tools/dp/main.py"), "print(2)\n");
    const r = await k.run(["tree", "dp", "--json"]);
    expect(r.exitCode).toBe(6);
    expect(JSON.parse(r.stdout).ok).toBe(false);
    const links = JSON.parse(r.stdout).links;
    expect(links.map((l: { status: string }) => l.status)).toEqual(["changed", "verified", "verified"]);
    expect(links[0].tree).not.toBe(links[0].locked);
    expect((await k.run(["tree", "dp"])).stdout.split("\n")[0]).toMatch(/ changed since lock \(tree sha256:[0-9a-f]{12}\)$/);
  });

  test("without a lockfile the chain comes from the tree, marked as not locked (exit 3)", async () => {
    const k = kiwiIn(makeProject(FILES));
    const r = await k.run(["tree", "dp"]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toContain("not locked");
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("no tool.lock.json; integrities are computed from the tree");
  });

  test("an unknown tool suggests the nearest id (exit 2)", async () => {
    const k = kiwiIn(makeProject(FILES));
    expect(await k.run(["tree", "pd"])).toEqual({ exitCode: 2, stdout: "", stderr: 'error[E_TOOL_NOT_FOUND]: no tool has the id "pd"\n  hint: did you mean "dp"?\n' });
  });

  test("a broken chain is named (exit 6)", async () => {
    const k = kiwiIn(makeProject({ ".ai/tools/x.yaml": "tool_id: x\ntool_type: runtime\nversion: 1.0.0\nexecutor: nowhere\nconfig:\n  command: bash\n" }));
    const r = await k.run(["tree", "x"]);
    expect(r.exitCode).toBe(6);
    expect(r.stderr).toContain('executor "nowhere" of x does not exist');
  });
});
