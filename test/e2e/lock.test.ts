// `kiwi lock` from the compiled binary: deterministic bytes, writes only on change, reports
// added/removed/changed tools, validates first, and fails closed on a bad existing lockfile.
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { KIWI_BIN } from "../helpers/kiwi.ts";
import { formatDigest, sha256Hex } from "../../src/integrity/digest.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";
import { demoProject, kiwiIn, listFiles } from "./lock-helpers.ts";

afterAll(cleanupTemps);

const lockText = (root: string) => readFileSync(join(root, "tool.lock.json"), "utf8");

describe("kiwi lock", () => {
  test("says at once whom it waits for when another kiwi holds the lockfile's lock, then locks when it is released", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    const lockFile = join(root, "tool.lock.json.lock");
    // A live holder on this machine: this test process.
    writeFileSync(lockFile, JSON.stringify({ pid: process.pid, host: hostname(), nonce: "test" }));
    const proc = Bun.spawn([KIWI_BIN, "lock"], { cwd: root, env: k.env, stdout: "pipe", stderr: "pipe" });
    const reader = proc.stderr.getReader();
    let stderr = "";
    while (!stderr.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      stderr += new TextDecoder().decode(value);
    }
    expect(stderr).toBe(`waiting for kiwi process ${process.pid} on ${hostname()}, which holds ${lockFile} (up to 2 minutes; if no kiwi is running, delete that file)\n`);
    rmSync(lockFile);
    expect(await proc.exited).toBe(0);
    expect(await new Response(proc.stdout).text()).toContain("wrote tool.lock.json: 10 added");
    expect(existsSync(lockFile)).toBe(false);
  });

  test("writes tool.lock.json listing every tool, built-ins included, and says what it added", async () => {
    const root = demoProject();
    const r = await kiwiIn(root).run(["lock"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("+ dp 1.0.0\n");
    expect(r.stdout).toContain("+ subprocess 1.1.0\n");
    expect(r.stdout).toMatch(/wrote tool\.lock\.json: 10 added, 0 removed, 0 changed \(10 tools\)\n$/);
    const lock = JSON.parse(lockText(root));
    expect(lock.tools.dp).toMatchObject({ source: ".ai/tools/dp/tool.yaml", executor: "python_runtime@1.0.0", type: "script" });
    expect(lock.tools.greet.files).toEqual([{ path: "greet.sh", sha256: sha256Hex(readFileSync(join(root, ".ai/tools/greet.sh"))), is_executable: true }]);
    expect(lock.tools.weather.files).toEqual([]);
    expect(lock.tools.subprocess).toMatchObject({ source: "<builtin>/subprocess.yaml", executor: null, files: [] });
    expect(lock.mcp_servers).toEqual({});
  });

  test("the same tree gives byte-identical lockfiles in two places (no paths, no clocks)", async () => {
    const a = demoProject();
    const b = join(makeTemp(), "elsewhere");
    cpSync(a, b, { recursive: true });
    await kiwiIn(a).run(["lock"]);
    await kiwiIn(b).run(["lock"]);
    expect(lockText(b)).toBe(lockText(a));
    expect(lockText(a)).not.toContain(a);
  });

  test("a second lock with nothing changed leaves the file untouched", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const before = statSync(join(root, "tool.lock.json"));
    const r = await k.run(["lock", "--json"]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, written: false, added: [], removed: [], changed: [] });
    const after = statSync(join(root, "tool.lock.json"));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  test("a lockfile git converted to CRLF is written back with LF, and says that only its line endings changed", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const lf = lockText(root);
    const crlf = () => writeFileSync(join(root, "tool.lock.json"), lf.replaceAll("\n", "\r\n"));
    crlf();
    const r = await k.run(["lock"]);
    expect([r.exitCode, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toBe("wrote tool.lock.json: only its line endings changed (CRLF to LF) (10 tools)\n");
    expect(lockText(root)).toBe(lf);
    crlf();
    const json = await k.run(["lock", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, written: true, lineEndings: "crlf", added: [], removed: [], changed: [] });
    expect(lockText(root)).toBe(lf);
    // Not said when the lockfile has LF line ends or when entries changed too.
    expect(JSON.parse((await k.run(["lock", "--json"])).stdout).lineEndings).toBeUndefined();
    crlf();
    writeFileSync(join(root, ".ai/tools/dp/lib/helper.py"), "X = 2\n");
    const changed = await k.run(["lock"]);
    expect(changed.stdout).toContain("wrote tool.lock.json: 0 added, 0 removed, 1 changed (10 tools)");
  });

  test("reports a changed file, a removed tool and an added tool", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    writeFileSync(join(root, ".ai/tools/dp/lib/helper.py"), "X = 2\n");
    rmSync(join(root, ".ai/tools/weather.yaml"));
    writeFileSync(join(root, ".ai/tools/notes.md"), "---\ntool_id: notes\ntool_type: knowledge\nversion: 0.1.0\nexecutor: null\n---\n# Notes\n");
    const r = await k.run(["lock"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("~ dp 1.0.0 (1 file)\n");
    expect(r.stdout).toContain("- weather 1.0.0\n");
    expect(r.stdout).toContain("+ notes 0.1.0\n");
    expect(r.stdout).toContain("wrote tool.lock.json: 1 added, 1 removed, 1 changed");
  });

  test("validation errors abort with the check report; no lockfile is written", async () => {
    const root = demoProject();
    writeFileSync(join(root, ".ai/tools/broken.yaml"), "tool_id: broken\ntool_type: script\nversion: 1.0.0\nexecutor: no_such_runtime\n");
    const r = await kiwiIn(root).run(["lock"]);
    expect([r.exitCode, r.stdout]).toEqual([1, ""]);
    expect(r.stderr).toContain('.ai/tools/broken.yaml:4:1  error  chain/missing-executor  executor "no_such_runtime" of broken does not exist');
    expect(r.stderr).toMatch(/error\[E_CHECK_FAILED\]: kiwi lock stopped: validation found \d+ errors?\n/);
    expect(listFiles(root).includes("tool.lock.json")).toBe(false);
    // With --json nothing is printed before the error: its hint does not send the reader "above".
    const json = await kiwiIn(root).run(["lock", "--json"]);
    const error = JSON.parse(json.stdout).error;
    expect(error).toMatchObject({ code: "E_CHECK_FAILED", hint: 'fix them (run "kiwi check" for the full report), then run the command again' });
    expect(error.details.findings).toContainEqual(expect.objectContaining({ rule: "chain/missing-executor", file: ".ai/tools/broken.yaml" }));
  });

  test("its check remembers a project executor's child_schemas verdicts for the next check, and a remembered rejection stops it the same way", async () => {
    const root = demoProject();
    writeFileSync(join(root, ".ai/tools/rt.yaml"), "tool_id: rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: ruby }\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { type: object, properties: { config: { type: object, properties: { label: { type: string, pattern: '^[a-z]+$' } } } } }\n");
    mkdirSync(join(root, ".ai/tools/rb"));
    writeFileSync(join(root, ".ai/tools/rb/main.rb"), "puts 1\n");
    const manifest = join(root, ".ai/tools/rb/tool.yaml");
    writeFileSync(manifest, "tool_id: rb\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig:\n  entrypoint: main.rb\n  label: fine\n");
    const k = kiwiIn(root);
    expect((await k.run(["lock"])).exitCode).toBe(0);
    const memo = join(k.cache, "check", "child-schemas-v1.json");
    expect(Object.keys(JSON.parse(readFileSync(memo, "utf8").split("\n")[1]!).entries).length).toBeGreaterThan(0);
    writeFileSync(manifest, readFileSync(manifest, "utf8").replace("label: fine", "label: Not Fine"));
    const fresh = await k.run(["lock"]);
    expect([fresh.exitCode, fresh.stdout]).toEqual([1, ""]);
    expect(fresh.stderr).toContain('.ai/tools/rb/tool.yaml:7:3  error  child-schema/mismatch  executor rt rejects this manifest (child_schemas entry 0): /config/label must match pattern "^[a-z]+$"');
    expect(await k.run(["lock"])).toEqual(fresh);
  });

  test("a built-in runtime's rejection stops it with the same report on every run", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    expect((await k.run(["lock"])).exitCode).toBe(0);
    const manifest = join(root, ".ai/tools/dp/tool.yaml");
    writeFileSync(manifest, readFileSync(manifest, "utf8").replace("entrypoint: main.py", "entrypoint: main.rb"));
    const fresh = await k.run(["lock"]);
    expect([fresh.exitCode, fresh.stdout]).toEqual([1, ""]);
    expect(fresh.stderr).toContain('.ai/tools/dp/tool.yaml:6:3  error  child-schema/mismatch  executor python_runtime rejects this manifest (child_schemas entry 0): /config/entrypoint must match pattern "\\.py$"');
    expect(await k.run(["lock"])).toEqual(fresh);
  });

  test.each([
    ["truncated", (t: string) => t.slice(0, 300), /tool\.lock\.json: the file is truncated/],
    ["from a newer kiwi", (t: string) => t.replace('"lockfileVersion": 1', '"lockfileVersion": 2'), /written by a newer kiwi/],
    ["with an unknown digest algorithm", (t: string) => t.replace(/"integrity": "sha256:[0-9a-f]+"/, '"integrity": "md5:d41d8cd98f00b204e9800998ecf8427e"'), /unsupported algorithm "md5"/],
    ["left with git's conflict markers", (t: string) => t.replace(/( *"integrity": "sha256:[0-9a-f]+",\n)/, "<<<<<<< HEAD\n$1=======\n$1>>>>>>> feature\n"), /tool\.lock\.json: unresolved merge conflict \(line \d+: "<<<<<<< HEAD"\)\n  hint: take one side of the merge whole \("git checkout HEAD -- tool\.lock\.json", or MERGE_HEAD/],
  ])("refuses to overwrite a lockfile that is %s (exit 5, file untouched)", async (_what, damage, message) => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const bad = damage(lockText(root));
    writeFileSync(join(root, "tool.lock.json"), bad);
    const r = await k.run(["lock"]);
    expect([r.exitCode, r.stdout]).toEqual([5, ""]);
    expect(r.stderr).toMatch(message);
    expect(lockText(root)).toBe(bad);
  });

  test("rewrites a hand-edited entry from the tree, with a warning", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const good = lockText(root);
    writeFileSync(join(root, "tool.lock.json"), good.replace(sha256Hex("X = 1\n"), sha256Hex("X = 666\n")));
    const r = await k.run(["lock"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('warning: the entry for "dp" disagrees with itself');
    expect(lockText(root)).toBe(good);
  });

  test("keeps MCP pins of servers that are still locked", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const pin = `{"name": "w", "interface_hash": "${formatDigest(sha256Hex("i"))}", "full_hash": "${formatDigest(sha256Hex("f"))}", "interface": {"tools": [{"name": "t", "inputSchema": {"default": 3.0}}]}}`;
    writeFileSync(join(root, "tool.lock.json"), lockText(root).replace('"mcp_servers": {}', `"mcp_servers": {"weather": ${pin}}`));
    writeFileSync(join(root, ".ai/tools/dp/lib/helper.py"), "X = 3\n");
    expect((await k.run(["lock"])).exitCode).toBe(0);
    const text = lockText(root);
    expect(JSON.parse(text).mcp_servers.weather.name).toBe("w");
    expect(text).toContain('"default": 3.0');
  });

  test("outside a project it says how to start one", async () => {
    const r = await kiwiIn(makeTemp()).run(["lock"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("error[E_NO_PROJECT]");
  });
});

describe("what the lock's check says that does not stop it", () => {
  // A warning (every host) and nothing that stops a lock.
  const anyHost = "tool_id: crawl\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { url: 'https://${CRAWL_HOST}/{page}' }\nrequires: [{ net.outbound: ['*'] }]\nparameters:\n  - { name: page, type: string, required: true }\n";

  test("kiwi lock prints the check's warnings on stderr as kiwi check does, lists them under --json, and says nothing of a verdict it remembers", async () => {
    const root = makeTemp();
    mkdirSync(join(root, ".ai/tools"), { recursive: true });
    writeFileSync(join(root, ".ai/tools/crawl.yaml"), anyHost);
    const kiwi = kiwiIn(root);
    const first = await kiwi.run(["lock"]);
    expect(first.exitCode).toBe(0);
    expect(first.stderr).toContain(".ai/tools/crawl.yaml:6:12  warning  security/host-any");
    expect(first.stdout).toContain("wrote tool.lock.json");
    const again = await kiwi.run(["lock", "--json"]);
    expect([again.exitCode, again.stderr]).toEqual([0, ""]);
    expect(JSON.parse(again.stdout).findings).toBeUndefined();
    rmSync(join(root, "tool.lock.json"));
    const json = await kiwi.run(["lock", "--json"], { KIWI_CACHE_DIR: join(root, "fresh-cache") });
    expect(json.stderr).toBe("");
    expect(JSON.parse(json.stdout).findings).toEqual([expect.objectContaining({ rule: "security/host-any", severity: "warning", file: ".ai/tools/crawl.yaml", line: 6, tool: "crawl" })]);
  });

  test("from a subfolder, the warnings and the report that stops a lock name files from there, as kiwi check does; --json keeps project-relative paths", async () => {
    const root = makeTemp();
    mkdirSync(join(root, ".ai/tools/apis"), { recursive: true });
    writeFileSync(join(root, ".ai/tools/apis/crawl.yaml"), anyHost);
    const kiwi = kiwiIn(join(root, ".ai/tools/apis"));
    const warned = await kiwi.run(["lock"]);
    expect(warned.exitCode).toBe(0);
    expect(warned.stderr).toStartWith("crawl.yaml:6:12  warning  security/host-any");
    writeFileSync(join(root, ".ai/tools/bad.yaml"), "tool_id: bad\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { url: 'https://a.example.com', method: FETCH }\nrequires: [{ net.outbound: [a.example.com] }]\n");
    const stopped = await kiwi.run(["lock"]);
    expect(stopped.exitCode).toBe(1);
    expect(stopped.stderr).toStartWith("../bad.yaml:5:41  error  api/method  ");
    const json = await kiwi.run(["lock", "--json"]);
    expect(JSON.parse(json.stdout).error.details.findings.map((f: { file: string }) => f.file)).toContain(".ai/tools/bad.yaml");
  });

  test("kiwi install prints them too", async () => {
    const root = makeTemp();
    mkdirSync(join(root, ".ai/tools"), { recursive: true });
    writeFileSync(join(root, ".ai/tools/crawl.yaml"), anyHost);
    const r = await kiwiIn(root).run(["install"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain("warning  security/host-any");
  });
});
