// `kiwi init` from the compiled binary: a working example of each tool type that passes
// `kiwi check`, installs and runs; never overwriting anything, and saying what it kept.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, hermeticEnv, runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const SLOW = 60_000;
const CREATED = [".ai/tools/", ".ai/tools/word_count.py", ".ai/tools/greet.sh", ".ai/tools/weather_forecast.yaml", ".ai/tools/everything.yaml", ".ai/tools/everything_echo.yaml", "tool.lock.json"];

function kiwiAt(cwd: string) {
  // MCP pinning is pin.test's and mcp.test's subject; here the calls need no pin.
  const env = hermeticEnv({ KIWI_MCP_MODE: "off" });
  return (args: string[]) => runKiwi(args, { cwd, env, timeoutMs: 50_000 });
}

describe("kiwi init", () => {
  test("scaffolds one example of each tool type and the lockfile, listing what it created", async () => {
    const root = makeTemp("kiwi-init-");
    const r = await kiwiAt(root)(["init"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`${CREATED.join("\n")}\n`);
    expect(r.stderr).toBe(`next: "kiwi exec word_count --param text='to be or not to be'"\n`);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    expect(Object.keys(lock.tools)).toEqual(expect.arrayContaining(["word_count", "greet", "weather_forecast", "everything", "everything_echo"]));
  }, SLOW);

  test("gives a tree that kiwi check passes without a single finding, --strict included", async () => {
    const root = makeTemp("kiwi-init-");
    const kiwi = kiwiAt(root);
    await kiwi(["init"]);
    for (const args of [["check"], ["check", "--strict"]]) {
      const r = await kiwi(args);
      expect([r.exitCode, r.stdout]).toEqual([0, ""]);
      expect(r.stderr).toMatch(/^✔ 5 tools checked, no problems \(\d+ ms\)\n$/);
    }
  }, SLOW);

  test("runs the README's main job: init, install, exec the two scripts", async () => {
    const root = makeTemp("kiwi-init-");
    const kiwi = kiwiAt(root);
    await kiwi(["init"]);
    expect((await kiwi(["install"])).exitCode).toBe(0);
    const words = await kiwi(["exec", "word_count", "--param", "text=to be or not to be", "--param", "top=1"]);
    expect([words.exitCode, JSON.parse(words.stdout)]).toEqual([0, { lines: 1, words: 6, characters: 18, top: [{ word: "to", count: 2 }] }]);
    const greet = await kiwi(["exec", "greet", "--param", "name=Ada", "--param", "times=2"]);
    expect([greet.exitCode, greet.stdout]).toEqual([0, "Hello, Ada!\nHello, Ada!\n"]);
  }, SLOW);

  test("refuses the scripts' parameter violations before running anything", async () => {
    const root = makeTemp("kiwi-init-");
    const kiwi = kiwiAt(root);
    await kiwi(["init"]);
    const r = await kiwi(["exec", "greet", "--param", "name=Ada", "--param", "times=9"]);
    expect(r.exitCode).toBe(7);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("times");
  }, SLOW);

  test("plans the api tool's request offline with --dry-run", async () => {
    const root = makeTemp("kiwi-init-");
    const kiwi = kiwiAt(root);
    await kiwi(["init"]);
    const r = await kiwi(["exec", "weather_forecast", "--param", "latitude=52.52", "--param", "longitude=13.41", "--dry-run"]);
    expect(r.exitCode).toBe(0);
    const plan = JSON.stringify(JSON.parse(r.stdout));
    expect(plan).toContain("https://api.open-meteo.com/v1/forecast?");
    expect(plan).toContain("latitude=52.52");
    expect(plan).toContain("forecast_days=3");
  }, SLOW);

  test("installs server-everything from its package and calls the mcp_tool through it in the sandbox", async () => {
    const root = makeTemp("kiwi-init-");
    const kiwi = kiwiAt(root);
    await kiwi(["init"]);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    expect(lock.dependencies.everything.npm.requires).toEqual({ "@modelcontextprotocol/server-everything": "2026.8.31" });
    expect((await kiwi(["install"])).exitCode).toBe(0);
    const r = await kiwi(["exec", "everything_echo", "--param", "message=hello"]);
    expect([r.exitCode, r.stdout]).toEqual([0, "Echo: hello\n"]);
  }, SLOW);

  test("adds nothing the second time, and says so", async () => {
    const root = makeTemp("kiwi-init-");
    const kiwi = kiwiAt(root);
    await kiwi(["init"]);
    const lockBefore = readFileSync(join(root, "tool.lock.json"), "utf8");
    const r = await kiwi(["init"]);
    expect([r.exitCode, r.stdout]).toEqual([0, ""]);
    expect(r.stderr).toContain("kept .ai/tools/greet.sh: already exists\n");
    expect(r.stderr).toContain("nothing to add: all 5 examples are already there\n");
    expect(readFileSync(join(root, "tool.lock.json"), "utf8")).toBe(lockBefore);
  }, SLOW);

  test("in a non-empty tree adds only what is missing and leaves the user's files and lockfile alone", async () => {
    const root = makeTemp("kiwi-init-");
    writeTree(root, { ".ai/tools/greet.sh": "#!/bin/bash\necho mine\n", "tool.lock.json": "not even JSON\n" });
    const r = await kiwiAt(root)(["init", "--json"]);
    expect(r.exitCode).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toEqual({
      ok: true,
      root,
      created: [".ai/tools/word_count.py", ".ai/tools/weather_forecast.yaml", ".ai/tools/everything.yaml", ".ai/tools/everything_echo.yaml"],
      skipped: [{ path: ".ai/tools/greet.sh", reason: "already exists" }],
      lockfile: { status: "kept" },
    });
    expect(r.stderr).toContain("kept .ai/tools/greet.sh: already exists\n");
    expect(r.stderr).toContain('tool.lock.json was left as it is; run "kiwi lock" to add the new tools\n');
    expect(readFileSync(join(root, ".ai/tools/greet.sh"), "utf8")).toBe("#!/bin/bash\necho mine\n");
    expect(readFileSync(join(root, "tool.lock.json"), "utf8")).toBe("not even JSON\n");
  }, SLOW);

  test("an example left out because its tool id is taken is not said to be kept: no file is there", async () => {
    const root = makeTemp("kiwi-init-");
    writeTree(root, { ".ai/tools/mine.yaml": "tool_id: greet\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { method: GET, url: https://x.test/ }\n" });
    const r = await kiwiAt(root)(["init", "--no-lock"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toStartWith('did not write .ai/tools/greet.sh: the tool id "greet" is already defined by .ai/tools/mine.yaml\n');
    expect(r.stderr).not.toContain("kept");
    expect(existsSync(join(root, ".ai/tools/greet.sh"))).toBe(false);
    const doc = JSON.parse((await kiwiAt(root)(["init", "--no-lock", "--json"])).stdout);
    expect(doc.skipped).toContainEqual({ path: ".ai/tools/greet.sh", reason: 'the tool id "greet" is already defined by .ai/tools/mine.yaml' });
  }, SLOW);

  test("suggests running an example it wrote: not word_count when the user's word_count was kept", async () => {
    const root = makeTemp("kiwi-init-");
    // The user's own word_count: a tool of another kind, with no text parameter.
    writeTree(root, { ".ai/tools/word_count.py": '"""\ntool_id: word_count\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\n"""\nprint(0)\n' });
    const r = await kiwiAt(root)(["init", "--no-lock"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('kept .ai/tools/word_count.py: already exists\nnext: "kiwi exec greet --param name=Ada --param times=2"\n');
  }, SLOW);

  test("with --no-lock writes no lockfile", async () => {
    const root = makeTemp("kiwi-init-");
    const r = await kiwiAt(root)(["init", "--no-lock"]);
    expect([r.exitCode, r.stdout]).toEqual([0, `${CREATED.slice(0, -1).join("\n")}\n`]);
    expect(existsSync(join(root, "tool.lock.json"))).toBe(false);
  }, SLOW);

  test("keeps the examples but reports the check errors when the user's own tools stop the lock", async () => {
    const root = makeTemp("kiwi-init-");
    writeTree(root, { ".ai/tools/mine.yaml": "tool_id: mine\ntool_type: scirpt\nversion: 1.0.0\nexecutor: python_runtime\n" });
    const r = await kiwiAt(root)(["init"]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe(`${CREATED.slice(1, -1).join("\n")}\n`);
    expect(r.stderr).toContain(".ai/tools/mine.yaml:2:1  error  universal/type-unknown");
    expect(r.stderr).toContain("error[E_CHECK_FAILED]: kiwi lock stopped: validation found 2 errors");
    expect(existsSync(join(root, ".ai/tools/word_count.py"))).toBe(true);
    expect(existsSync(join(root, "tool.lock.json"))).toBe(false);
  }, SLOW);
});
