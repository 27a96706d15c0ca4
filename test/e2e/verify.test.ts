// `kiwi verify`: each outcome has its own exit code — 0 verified, 3 tree differs, 4 cache
// corrupted or missing, 5 lockfile invalid — and --json prints one document either way.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobRelPath } from "../../src/cache/cache-layout.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { cleanupTemps } from "../helpers/tree.ts";
import { demoProject, kiwiIn } from "./lock-helpers.ts";

afterAll(cleanupTemps);

const HELPER = "X = 1\n";

async function installed() {
  const root = demoProject();
  const k = kiwiIn(root);
  expect((await k.run(["install"])).exitCode).toBe(0);
  return { root, k, lockPath: join(root, "tool.lock.json") };
}

describe("kiwi verify", () => {
  test("everything matches: exit 0 and a three-line report", async () => {
    const { k } = await installed();
    const r = await k.run(["verify"]);
    expect(r).toEqual({ exitCode: 0, stdout: "lockfile  ok  10 tools, 3 files\ntree      ok\ncache     ok  13 entries checked\n", stderr: "" });
    expect(JSON.parse((await k.run(["verify", "--json"])).stdout)).toMatchObject({ ok: true, outcome: "ok", tools: 10, files: 3 });
  });

  test("the tree differs: exit 3, naming the file", async () => {
    const { root, k } = await installed();
    writeFileSync(join(root, ".ai/tools/dp/lib/helper.py"), "X = 2\n");
    const r = await k.run(["verify"]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toContain(`tree      FAILED\n    ~ dp 1.0.0\n        ~ lib/helper.py  ${sha256Hex(HELPER).slice(0, 12)} -> ${sha256Hex("X = 2\n").slice(0, 12)}\n`);
    expect(r.stderr).toBe('error[E_LOCK_STALE]: the tool tree differs from tool.lock.json (dp changed)\n  hint: run "kiwi lock" if the change is intended\n');
  });

  test("only a file's line endings differ (a checkout with core.autocrlf): marked as a frozen install marks it, and the hint names .gitattributes, not a relock", async () => {
    const { root, k } = await installed();
    writeFileSync(join(root, ".ai/tools/dp/lib/helper.py"), HELPER.replaceAll("\n", "\r\n"));
    const r = await k.run(["verify"]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toContain(`    ~ dp 1.0.0\n        ~ lib/helper.py  ${sha256Hex(HELPER).slice(0, 12)} -> ${sha256Hex("X = 1\r\n").slice(0, 12)}  (only its line endings differ: CRLF)\n`);
    expect(r.stderr).toContain('hint: git converted line endings to CRLF when it checked a tool file out (core.autocrlf, or an eol=crlf attribute): add "/.ai/tools/** -text" to .gitattributes');
    const json = JSON.parse((await k.run(["verify", "--json"])).stdout);
    expect(json.error.details.tree.changed[0].files).toEqual([{ path: "lib/helper.py", change: "changed", before: sha256Hex(HELPER), after: sha256Hex("X = 1\r\n"), lineEndings: "crlf" }]);
    expect(json.error.hint).toStartWith("git converted line endings to CRLF");
  });

  test("a folder whose last tool was deleted but whose tool.lock.json is left: verify, a frozen install and lock say so, not only that there is no project", async () => {
    const { root, k } = await installed();
    rmSync(join(root, ".ai"), { recursive: true, force: true });
    for (const args of [["verify"], ["install", "--frozen-lockfile"], ["install"], ["lock"]]) {
      const r = await k.run(args);
      expect([args, r.exitCode]).toEqual([args, 2]);
      expect(r.stderr).toContain(`error[E_NO_PROJECT]: ${join(root, "tool.lock.json")} is left, but ${root} has no .ai/tools/ folder any more`);
      expect(r.stderr).toContain('hint: if the project keeps no tools, delete the lockfile too ("git rm tool.lock.json" there)');
    }
  });

  test("a cache blob replaced with other bytes: exit 4, and it is evicted", async () => {
    const { k } = await installed();
    const blob = join(k.cache, blobRelPath(sha256Hex(HELPER)));
    chmodSync(blob, 0o644);
    writeFileSync(blob, "X = 'pwned'\n");
    const r = await k.run(["verify", "--json"]);
    expect(r.exitCode).toBe(4);
    const doc = JSON.parse(r.stdout);
    expect(doc.error.code).toBe("E_CACHE_CORRUPT");
    expect(doc.error.details.cache.corrupt).toMatchObject([{ tool: "dp", path: "lib/helper.py", sha256: sha256Hex(HELPER), evicted: { actual: sha256Hex("X = 'pwned'\n") } }]);
    expect(existsSync(blob)).toBe(false);
    expect(r.stderr).toContain("error[E_CACHE_CORRUPT]: 1 cache entry failed verification and was evicted");
  });

  test("nothing installed yet: exit 4 with the hint to install", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const r = await k.run(["verify"]);
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain("error[E_CACHE_MISSING]: 13 locked entries are not in the cache");
    expect(r.stderr).toContain('hint: run "kiwi install": it locks and puts every locked file into the cache (kiwi lock only hashes)');
  });

  test.each([
    ["hand-edited (a file digest changed)", (t: string) => t.replace(sha256Hex(HELPER), sha256Hex("X = 3\n")), /the entry for "dp" disagrees with itself/],
    ["truncated", (t: string) => t.slice(0, t.length - 40), /the file is truncated/],
    ["from a newer kiwi", (t: string) => t.replace('"lockfileVersion": 1', '"lockfileVersion": 7'), /newer kiwi/],
    ["empty", () => "", /the file is empty/],
  ])("a lockfile that is %s: exit 5", async (_what, damage, message) => {
    const { k, lockPath } = await installed();
    writeFileSync(lockPath, damage(readFileSync(lockPath, "utf8")));
    const r = await k.run(["verify"]);
    expect(r.exitCode).toBe(5);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain("error[E_LOCK_INVALID]");
  });

  test("a hand-edited entry is caught even when the tool's manifest changed too (via the cached tool entry)", async () => {
    const { root, k, lockPath } = await installed();
    writeFileSync(lockPath, readFileSync(lockPath, "utf8").replace(sha256Hex(HELPER), sha256Hex("X = 3\n")));
    writeFileSync(join(root, ".ai/tools/dp/tool.yaml"), readFileSync(join(root, ".ai/tools/dp/tool.yaml"), "utf8").replace("timeout: 1.0", "timeout: 2.0"));
    const r = await k.run(["verify"]);
    expect(r.exitCode).toBe(5);
    expect(r.stdout).toContain("lockfile  FAILED");
  });

  test("no lockfile: exit 3 with the hint to lock", async () => {
    const r = await kiwiIn(demoProject()).run(["verify"]);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain("error[E_LOCK_MISSING]");
  });
});
