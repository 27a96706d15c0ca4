// The staged check's partial read of a project from the lock index (staged-project-io.ts): the
// project it gives is the one discovery gives, tool for tool, and every case it cannot vouch for
// falls back to full discovery; verdicts are the same either way.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, chmodSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { BUILTIN_IDS, builtinTool } from "../../src/manifest/builtins.ts";
import { join } from "node:path";
import { createContext } from "../../src/context.ts";
import { type Project, readProject } from "../../src/manifest/discover-io.ts";
import { lockProject } from "../../src/ops/lock-io.ts";
import { checkStaged } from "../../src/ops/staged-io.ts";
import { identifyTree } from "../../src/ops/staged-memo-io.ts";
import { readStagedProject } from "../../src/ops/staged-project-io.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";
import { git, gitEnv } from "../hook/git.ts";

afterAll(cleanupTemps);

const script = (id: string, executor = "rt", body = "echo hi") => ({ content: `#!/bin/bash\n# ---\n# tool_id: ${id}\n# tool_type: script\n# version: 1.0.0\n# executor: ${executor}\n# ---\n${body}\n`, mode: 0o755 });
const TOOLS = {
  ".ai/tools/rt.yaml": "tool_id: rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: bash }\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { type: object }\n",
  ".ai/tools/hi.sh": script("hi"),
  ".ai/tools/two.sh": script("two"),
  ".ai/tools/web.yaml": "tool_id: web\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { method: GET, url: https://x.test/ }\n",
  ".ai/tools/py/tool.yaml": "tool_id: py\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\nparameters: params.yaml\n",
  ".ai/tools/py/params.yaml": "- name: city\n  type: string\n  required: true\n",
  ".ai/tools/py/main.py": "print(1)\n",
  ".ai/tools/py/lib/util.py": "X = 1\n",
};

interface Repo {
  root: string;
  env: Record<string, string>;
  cacheDir: string;
}

/**
 * A committed repository locked with a clock a minute ahead, so the lock index records every
 * entry (none is within the racy margin of that lock) and the partial read has stubs to serve.
 */
async function lockedRepo(extra: Record<string, string | { content: string; mode: number }> = {}): Promise<Repo> {
  const home = makeTemp("kiwi-home-");
  const env = { ...gitEnv(home), KIWI_CACHE_DIR: join(home, "cache"), KIWI_MCP_MODE: "off" };
  const root = makeTemp("kiwi-partial-");
  writeTree(root, { ...TOOLS, ...extra });
  await relock({ root, env, cacheDir: env.KIWI_CACHE_DIR });
  git(root, ["init", "-q", "-b", "main", "."], env);
  git(root, ["add", "-A"], env);
  git(root, ["commit", "-q", "-m", "init"], env);
  return { root, env, cacheDir: env.KIWI_CACHE_DIR };
}

const relock = (repo: Repo) => lockProject({ ...createContext({ cwd: repo.root, env: repo.env }), now: () => Date.now() + 60_000 });

/**
 * The project the staged check reads for `paths`, and whether the index served it: read as the
 * memo key reads the tree (through the index's scan when it holds). A partial read must give,
 * field for field, the project full discovery gives.
 */
async function partialRead(repo: Repo, paths: string[]): Promise<{ project: Project; partial: boolean }> {
  const identity = await identifyTree(repo.root, Date.now() + 60_000, { cacheDir: repo.cacheDir });
  const read = () => readStagedProject(repo.root, paths, { cacheDir: repo.cacheDir, indexed: identity.indexed, raw: identity.raw ? { root: repo.root, tree: identity.raw } : undefined });
  const compared = read();
  if (compared.partial) expect(plain(compared.project)).toBe(plain(readProject(repo.root)));
  return read(); // untouched: no stub of it has been read yet
}

/** A project as plain data: every field read (stubs included), keys sorted, `locate` left out. */
function plain(project: Project): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(sorted) : value !== null && typeof value === "object" ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])])) : value;
  return JSON.stringify(sorted(JSON.parse(JSON.stringify(project, (key, value) => (key === "locate" ? undefined : value)))));
}

/** The staged verdicts with the index and then without it (index and memo removed): they must agree. */
async function bothWays(repo: Repo, strict = false): Promise<[unknown, unknown]> {
  const run = async () => (await checkStaged({ cwd: repo.root, env: repo.env, cacheDir: repo.cacheDir, now: Date.now, strict })).map(({ remembered: _, ...p }) => p);
  rmSync(join(repo.cacheDir, "check", "staged"), { recursive: true, force: true });
  const withIndex = await run();
  rmSync(join(repo.cacheDir, "check", "staged"), { recursive: true, force: true });
  for (const name of readdirSync(join(repo.cacheDir, "stat"))) if (name.endsWith(".index")) rmSync(join(repo.cacheDir, "stat", name));
  return [withIndex, await run()];
}

describe("the staged check's partial read", () => {
  test("gives the project discovery gives, tool for tool, when one tool changed", async () => {
    const repo = await lockedRepo();
    appendFileSync(join(repo.root, ".ai/tools/hi.sh"), "echo again\n");
    const { project, partial } = await partialRead(repo, [".ai/tools/hi.sh"]);
    expect(partial).toBe(true);
    expect(project.tools.map((t) => t.id)).toEqual(readProject(repo.root).tools.map((t) => t.id));
    expect(plain(project)).toBe(plain(readProject(repo.root)));
  });

  test("leaves out the built-ins project tools override, as discovery does, and falls back once a changed tool takes or leaves a built-in's id", async () => {
    const runtime = (id: string) => `tool_id: ${id}\ntool_type: runtime\nversion: 2.0.0\nexecutor: subprocess\nconfig: { command: bash }\n`;
    const repo = await lockedRepo({ ".ai/tools/own_bash.yaml": runtime("bash_runtime") });
    appendFileSync(join(repo.root, ".ai/tools/hi.sh"), "echo again\n");
    const served = await partialRead(repo, [".ai/tools/hi.sh"]);
    expect(served.partial).toBe(true);
    expect(served.project.tools.filter((t) => t.id === "bash_runtime").map((t) => t.form)).toEqual(["file"]);
    // The changed tool now takes another built-in's id, or gives its own back: the index's built-ins no longer hold.
    writeFileSync(join(repo.root, ".ai/tools/web.yaml"), runtime("node_runtime"));
    expect((await partialRead(repo, [".ai/tools/web.yaml"])).partial).toBe(false);
    writeFileSync(join(repo.root, ".ai/tools/web.yaml"), "tool_id: web\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { method: GET, url: https://x.test/ }\n");
    writeFileSync(join(repo.root, ".ai/tools/own_bash.yaml"), runtime("my_bash"));
    expect((await partialRead(repo, [".ai/tools/own_bash.yaml"])).partial).toBe(false);
  });

  test("a built-in's stub reads as the built-in itself, positions included, through exec's manifest memo cold, warm or damaged", async () => {
    const repo = await lockedRepo();
    appendFileSync(join(repo.root, ".ai/tools/hi.sh"), "echo again\n");
    const manifests = join(repo.cacheDir, "exec", "manifests");
    const builtinsOf = async () => {
      const { project, partial } = await partialRead(repo, [".ai/tools/hi.sh"]);
      expect(partial).toBe(true);
      return project.tools.filter((t) => t.form === "builtin");
    };
    const damage = () => {
      for (const dir of readdirSync(manifests)) for (const name of readdirSync(join(manifests, dir))) {
        const file = join(manifests, dir, name);
        chmodSync(file, 0o644);
        writeFileSync(file, readFileSync(file, "utf8").replace(/"/g, "'"));
      }
    };
    for (const before of [() => rmSync(manifests, { recursive: true, force: true }), () => undefined, damage]) {
      before();
      const read = await builtinsOf();
      expect(read.map((t) => t.id)).toEqual([...BUILTIN_IDS]);
      for (const stub of read) {
        const own = builtinTool(stub.id)!;
        expect(JSON.stringify(stub)).toBe(JSON.stringify(own));
        for (const pointer of ["", "/tool_id", "/executor", "/config", "/validation/child_schemas/0/schema", "/nope"]) expect([stub.id, pointer, stub.locate(pointer)]).toEqual([stub.id, pointer, own.locate(pointer)]);
      }
    }
    expect(readdirSync(manifests).length).toBeGreaterThan(0);
  });

  test("a stub reads and JSON-copies as the tool discovery reads, and refuses writes to what it reads from disk", async () => {
    const repo = await lockedRepo();
    appendFileSync(join(repo.root, ".ai/tools/hi.sh"), "echo again\n");
    const { project, partial } = await partialRead(repo, [".ai/tools/hi.sh"]);
    expect(partial).toBe(true);
    const web = project.tools.find((t) => t.id === "web")!;
    const twin = readProject(repo.root).tools.find((t) => t.id === "web")!;
    expect(JSON.stringify(web)).toBe(JSON.stringify(twin));
    expect([web.version, web.type, web.description, web.config]).toEqual([twin.version, twin.type, twin.description, twin.config]);
    expect(() => {
      (web as { version: string }).version = "9.9.9";
    }).toThrow(TypeError);
    expect(web.version).toBe(twin.version);
  });

  test("a stub gives its manifest's kiwi-ignore comments, as discovery reads them", async () => {
    const repo = await lockedRepo({ ".ai/tools/quiet.yaml": "tool_id: quiet\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig:\n  url: https://x.test/\n  # kiwi-ignore: security/secret-value -- a sample key\n  headers: { X-Api-Key: 3f9a7c2e5b8d1f4a6c0e9b7d2a5f8c1e }\n" });
    appendFileSync(join(repo.root, ".ai/tools/hi.sh"), "echo again\n");
    const { project, partial } = await partialRead(repo, [".ai/tools/hi.sh"]);
    expect(partial).toBe(true);
    const quiet = project.tools.find((t) => t.id === "quiet")!;
    expect(quiet.ignores).toEqual([{ line: 7, column: 3, target: 8, rules: ["security/secret-value"], invalid: [], reason: "a sample key" }]);
    expect(quiet.ignores).toEqual(readProject(repo.root).tools.find((t) => t.id === "quiet")!.ignores);
  });

  test("reads an unchanged tool only when asked, and refuses one that changed since the tree was walked", async () => {
    const repo = await lockedRepo();
    appendFileSync(join(repo.root, ".ai/tools/hi.sh"), "echo again\n");
    const { project, partial } = await partialRead(repo, [".ai/tools/hi.sh"]);
    expect(partial).toBe(true);
    // Written after the walk: the stub of web, never read so far, reads the new file and notices.
    writeFileSync(join(repo.root, ".ai/tools/web.yaml"), "tool_id: other\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\n");
    const web = project.tools.find((t) => t.id === "web")!;
    expect(() => web.version).toThrow(expect.objectContaining({ code: "E_IO", message: expect.stringContaining(".ai/tools/web.yaml changed while") }));
  });

  test("falls back to discovery whenever the index cannot vouch for the tree", async () => {
    const fallsBack = async (change: (repo: Repo) => void, paths: string[]) => {
      const repo = await lockedRepo({ ".ai/tools/NOTES.txt": "not a tool\n" });
      change(repo);
      return (await partialRead(repo, paths)).partial;
    };
    // No index (another cache).
    expect(await fallsBack((repo) => (repo.cacheDir = makeTemp("kiwi-cache-")), [".ai/tools/hi.sh"])).toBe(false);
    // An entry added, or one removed.
    expect(await fallsBack((repo) => writeFileSync(join(repo.root, ".ai/tools/py/extra.py"), "Y = 2\n"), [".ai/tools/py/extra.py"])).toBe(false);
    expect(await fallsBack((repo) => rmSync(join(repo.root, ".ai/tools/py/lib/util.py")), [".ai/tools/py/lib/util.py"])).toBe(false);
    // A staged path the index does not know, or that belongs to no tool.
    expect(await fallsBack(() => undefined, [".ai/tools/gone.sh"])).toBe(false);
    expect(await fallsBack(() => undefined, [".ai/tools/NOTES.txt"])).toBe(false);
    // A script that lost its metadata is no tool: discovery's walk reports that.
    expect(await fallsBack((repo) => writeFileSync(join(repo.root, ".ai/tools/two.sh"), "echo plain\n"), [".ai/tools/two.sh"])).toBe(false);
    // An index whose tools section is damaged (not JSON) vouches for nothing.
    const damageTools = (repo: Repo) => {
      const dir = join(repo.cacheDir, "stat");
      const file = join(dir, readdirSync(dir).find((n) => n.endsWith(".index"))!);
      const bytes = readFileSync(file);
      bytes.write("x", 24 + bytes.readUInt32LE(8)); // the section's "[" (after the 24-byte head and the header)
      writeFileSync(file, bytes);
    };
    expect(await fallsBack(damageTools, [".ai/tools/hi.sh"])).toBe(false);
    // A project tool that takes a built-in's id changes which built-ins the project has.
    expect(await fallsBack((repo) => writeFileSync(join(repo.root, ".ai/tools/two.sh"), script("bash_runtime", "subprocess").content), [".ai/tools/two.sh"])).toBe(false);
  });

  test("reads a tool a discovery finding was about at once, with its finding, as discovery does", async () => {
    // A kiwi_mcp module edited after it was signed: a discovery warning about that tool.
    const signed = '# kiwi-mcp:validated:2026-01-26T04:13:30Z:000000000000\n__tool_type__ = "script"\n__version__ = "1.0.0"\n__executor_id__ = "python_runtime"\n\nprint(1)\n';
    const repo = await lockedRepo({ ".ai/tools/signed.py": signed });
    expect(readProject(repo.root).findings.map((f) => f.rule)).toEqual(["kiwi_mcp/signature-stale"]);
    // Unchanged and not staged, it is still read at once: a stub never hides a finding.
    appendFileSync(join(repo.root, ".ai/tools/hi.sh"), "echo again\n");
    const first = await partialRead(repo, [".ai/tools/hi.sh"]);
    expect([first.partial, first.project.findings.map((f) => [f.file, f.rule])]).toEqual([true, [[".ai/tools/signed.py", "kiwi_mcp/signature-stale"]]]);
    // Staged itself: its finding is part of the verdict, as full discovery gives it.
    appendFileSync(join(repo.root, ".ai/tools/signed.py"), "print(2)\n");
    git(repo.root, ["add", "-A"], repo.env);
    expect((await partialRead(repo, [".ai/tools/hi.sh", ".ai/tools/signed.py"])).partial).toBe(true);
    const [withIndex, without] = await bothWays(repo);
    expect(withIndex).toEqual(without);
    expect(JSON.stringify(withIndex)).toContain("kiwi_mcp/signature-stale");
  });

  const scenarios: [string, (repo: Repo) => string[]][] = [
    ["a tool's file changed", (repo) => (appendFileSync(join(repo.root, ".ai/tools/py/main.py"), "print(2)\n"), [".ai/tools/py/main.py"])],
    ["a runtime changed (its dependents are judged)", (repo) => {
      const rt = join(repo.root, ".ai/tools/rt.yaml");
      writeFileSync(rt, readFileSync(rt, "utf8").replace("version: 1.0.0", "version: 1.1.0").replace("{ type: object }", "{ type: object, required: [nothing] }"));
      return [".ai/tools/rt.yaml"];
    }],
    ["a tool took another tool's id", (repo) => (writeFileSync(join(repo.root, ".ai/tools/two.sh"), script("hi").content), [".ai/tools/two.sh"])],
    ["an executor that does not exist", (repo) => (writeFileSync(join(repo.root, ".ai/tools/two.sh"), script("two", "rtx").content), [".ai/tools/two.sh"])],
    ["a manifest that no longer parses", (repo) => (writeFileSync(join(repo.root, ".ai/tools/web.yaml"), "tool_id: [web\n"), [".ai/tools/web.yaml"])],
    ["a parameters file changed", (repo) => (writeFileSync(join(repo.root, ".ai/tools/py/params.yaml"), "- name: city\n  type: nope\n"), [".ai/tools/py/params.yaml"])],
  ];
  for (const [name, change] of scenarios) {
    test(`judges the same with the index as without it: ${name}`, async () => {
      const repo = await lockedRepo();
      const paths = change(repo);
      git(repo.root, ["add", "-A"], repo.env);
      expect((await partialRead(repo, paths)).partial).toBe(true);
      const [withIndex, without] = await bothWays(repo);
      expect(withIndex).toEqual(without);
      expect(JSON.stringify(withIndex)).toContain(paths[0]!.split("/").pop()!.split(".")[0]!);
    });
  }

  test("a --strict check reads the tree through the index a plain lock wrote, and judges as full discovery does", async () => {
    const repo = await lockedRepo();
    appendFileSync(join(repo.root, ".ai/tools/web.yaml"), "limits: { memory_mb: 4096 }\n");
    git(repo.root, ["add", "-A"], repo.env);
    expect((await identifyTree(repo.root, Date.now() + 60_000, { cacheDir: repo.cacheDir })).indexed).toBeDefined();
    const [withIndex, without] = await bothWays(repo, true);
    expect(withIndex).toEqual(without);
    // The high memory limit is a warning that --strict makes an error.
    expect((withIndex as { check: { ok: boolean } }[])[0]!.check.ok).toBe(false);
  });

  test("judges the same with the index as without it once the relocked lockfile is staged", async () => {
    const repo = await lockedRepo();
    appendFileSync(join(repo.root, ".ai/tools/hi.sh"), "echo again\n");
    await relock(repo);
    git(repo.root, ["add", "-A"], repo.env);
    expect((await partialRead(repo, [".ai/tools/hi.sh", "tool.lock.json"])).partial).toBe(true);
    const [withIndex, without] = await bothWays(repo);
    expect(withIndex).toEqual(without);
    expect((withIndex as { lock: { status: string } }[])[0]!.lock.status).toBe("fresh");
  });
});
