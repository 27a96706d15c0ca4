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

  describe("without a tool: every top-level tool's chain, as npm ls shows the whole project", () => {
    /** dp and a project runtime that two scripts run on: the runtime is no top-level tool, the scripts are. */
    const PROJECT = {
      ...FILES,
      ".ai/tools/ruby_runtime.yaml": "tool_id: ruby_runtime\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  command: ruby\n",
      ".ai/tools/a/tool.yaml": "tool_id: a\ntool_type: script\nversion: 1.0.0\nexecutor: ruby_runtime\nconfig:\n  entrypoint: a.rb\n",
      ".ai/tools/a/a.rb": "puts 1\n",
      ".ai/tools/b/tool.yaml": "tool_id: b\ntool_type: script\nversion: 1.0.0\nexecutor: ruby_runtime\nconfig:\n  entrypoint: b.rb\n",
      ".ai/tools/b/b.rb": "puts 2\n",
    };

    test("prints each chain, a blank line between them, and exits 0 when every link is verified", async () => {
      const root = makeProject(PROJECT);
      const k = kiwiIn(root);
      expect((await k.run(["lock"])).exitCode).toBe(0);
      const r = await k.run(["tree"]);
      expect([r.exitCode, r.stderr]).toEqual([0, ""]);
      const heads = r.stdout.split("\n").filter((l) => l !== "" && !l.includes("└─")).map((l) => l.split(" ")[0]);
      expect(heads).toEqual(["a", "b", "dp"]);
      expect(r.stdout).toContain("\n\nb 1.0.0 (script)");
      expect(r.stdout).toContain("└─ ruby_runtime 1.0.0 (runtime)");
      const doc = JSON.parse((await k.run(["tree", "--json"])).stdout);
      expect(doc.ok).toBe(true);
      expect(doc.tools.map((t: { tool: string; ok: boolean; links: { id: string }[] }) => [t.tool, t.ok, t.links.map((l) => l.id)])).toEqual([
        ["a", true, ["a", "ruby_runtime", "subprocess"]],
        ["b", true, ["b", "ruby_runtime", "subprocess"]],
        ["dp", true, ["dp", "python_runtime", "subprocess"]],
      ]);
    });

    test("a changed link, a tool not locked and a broken chain are each shown, the others still printed; the exit is the most serious", async () => {
      const root = makeProject(PROJECT);
      const k = kiwiIn(root);
      expect((await k.run(["lock"])).exitCode).toBe(0);
      writeFileSync(join(root, ".ai/tools/new.yaml"), "tool_id: new\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: new.sh\n");
      const stale = await k.run(["tree", "--json"]);
      expect(stale.exitCode).toBe(3);
      expect(JSON.parse(stale.stdout).tools.map((t: { tool: string; mode: string }) => [t.tool, t.mode])).toEqual([["a", "locked"], ["b", "locked"], ["dp", "locked"], ["new", "unlocked"]]);
      writeFileSync(join(root, ".ai/tools/gone.yaml"), "tool_id: gone\ntool_type: script\nversion: 1.0.0\nexecutor: nowhere\nconfig:\n  entrypoint: x.sh\n");
      writeFileSync(join(root, ".ai/tools/dp/main.py"), "print(2)\n");
      const r = await k.run(["tree"]);
      expect(r.exitCode).toBe(6);
      expect(r.stdout).toContain('gone  chain broken: the chain of gone is broken: executor "nowhere" of gone does not exist');
      expect(r.stdout).toMatch(/\ndp 1\.2\.0 \(script\) .* changed since lock/);
      expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("not in tool.lock.json: new; their integrities are computed from the tree");
      const doc = JSON.parse((await k.run(["tree", "--json"])).stdout);
      expect(doc.ok).toBe(false);
      expect(doc.tools.find((t: { tool: string }) => t.tool === "gone")).toMatchObject({ ok: false, links: [], broken: { code: "E_CHAIN" } });
    });

    test("without a lockfile every chain comes from the tree, said once below them (exit 3)", async () => {
      const r = await kiwiIn(makeProject(PROJECT)).run(["tree"]);
      expect(r.exitCode).toBe(3);
      expect(r.stdout.match(/no tool\.lock\.json/g)?.length).toBe(1);
      expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("no tool.lock.json; integrities are computed from the tree");
    });

    test("a project without tools says so, and exits 0", async () => {
      const k = kiwiIn(makeProject({ ".ai/tools/.keep": "" }));
      expect(await k.run(["tree"])).toEqual({ exitCode: 0, stdout: "", stderr: "no tools in .ai/tools/ yet: kiwi init makes examples, kiwi add takes one from a registry\n" });
      expect(JSON.parse((await k.run(["tree", "--json"])).stdout)).toEqual({ ok: true, tools: [] });
    });
  });
});
