// `kiwi install` from the compiled binary: locks then fills the cache; frozen mode (flag or
// CI=true) never writes the lockfile and lists per tool which files differ.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobRelPath } from "../../src/cache/cache-layout.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { KIWI_BIN } from "../helpers/kiwi.ts";
import { cleanupTemps } from "../helpers/tree.ts";
import { demoProject, kiwiIn, listFiles } from "./lock-helpers.ts";
import { needsTerminal } from "../helpers/needs.ts";

afterAll(cleanupTemps);

const MAIN = "from lib.helper import X\nprint(X)\n";
const lockText = (root: string) => readFileSync(join(root, "tool.lock.json"), "utf8");

describe("kiwi install progress", () => {
  test.skipIf(!needsTerminal())("is drawn on a terminal (stderr), then cleared; never in a pipe", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    // script(1) gives kiwi a real pseudo-terminal; everything it prints comes back on stdout.
    const proc = Bun.spawn(["script", "-qec", `${KIWI_BIN} install`, "/dev/null"], { cwd: root, env: k.env, stdout: "pipe", stderr: "pipe" });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    expect(out).toContain("\r\x1b[2Khashing 3/3 files (100%)");
    expect(out).toContain("\r\x1b[2Kstoring 3/3 files (100%)\r\x1b[2K");
    const piped = await kiwiIn(demoProject()).run(["install"]);
    expect([piped.exitCode, piped.stderr]).toEqual([0, ""]);
  });
});

describe("kiwi install", () => {
  test("locks, then stores every tool file as a read-only blob and every tool's index entry", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    const r = await k.run(["install"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/wrote tool\.lock\.json\ninstalled 10 tools, 3 files \(3 stored, 0 already cached\)\n$/);
    const blob = join(k.cache, blobRelPath(sha256Hex(MAIN)));
    expect(readFileSync(blob, "utf8")).toBe(MAIN);
    expect(statSync(blob).mode & 0o777).toBe(0o444);
    const index = listFiles(join(k.cache, "index"));
    expect(index).toHaveLength(10);
    const again = await k.run(["install", "--json"]);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, frozen: false, written: false, stats: { tools: 10, files: 3, stored: 0, present: 3 }, evicted: [] });
  });

  test("--frozen-lockfile installs from a matching lockfile without writing it", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const before = statSync(join(root, "tool.lock.json"));
    const r = await k.run(["install", "--frozen-lockfile"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("tool.lock.json matches the tree (frozen)\n");
    expect(statSync(join(root, "tool.lock.json")).mtimeMs).toBe(before.mtimeMs);
  });

  test("frozen and the tree differs: exit 3, each changed file with short hashes, lockfile untouched", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const locked = lockText(root);
    writeFileSync(join(root, ".ai/tools/dp/main.py"), "print('changed')\n");
    writeFileSync(join(root, ".ai/tools/dp/lib/extra.py"), "Y = 2\n");
    rmSync(join(root, ".ai/tools/dp/lib/helper.py"));
    chmodSync(join(root, ".ai/tools/greet.sh"), 0o644);
    const r = await k.run(["install", "--frozen-lockfile"]);
    expect([r.exitCode, r.stdout]).toEqual([3, ""]);
    const short = (s: string) => sha256Hex(s).slice(0, 12);
    expect(r.stderr).toBe(
      [
        "~ dp 1.0.0",
        `    + lib/extra.py  ${short("Y = 2\n")}`,
        `    - lib/helper.py  ${short("X = 1\n")}`,
        `    ~ main.py  ${short(MAIN)} -> ${short("print('changed')\n")}`,
        "~ greet 1.0.0",
        "    ~ greet.sh  no longer executable",
        "error[E_LOCK_STALE]: the tool tree differs from tool.lock.json (2 changed: dp, greet)",
        '  hint: run "kiwi lock" and commit tool.lock.json',
        "",
      ].join("\n"),
    );
    expect(lockText(root)).toBe(locked);
    expect(listFiles(join(k.cache, "blobs"))).toEqual([]);
  });

  test("frozen, and only a file's line endings differ (a checkout with core.autocrlf): the file is marked and the hint names .gitattributes, not a relock", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    // What git's core.autocrlf does on checkout; a real edit saved with CRLF is a change like any other.
    writeFileSync(join(root, ".ai/tools/dp/main.py"), MAIN.replaceAll("\n", "\r\n"));
    writeFileSync(join(root, ".ai/tools/dp/lib/helper.py"), "X = 2\r\n");
    const r = await k.run(["install", "--frozen-lockfile"]);
    expect([r.exitCode, r.stdout]).toEqual([3, ""]);
    const short = (s: string) => sha256Hex(s).slice(0, 12);
    expect(r.stderr).toBe(
      [
        "~ dp 1.0.0",
        `    ~ lib/helper.py  ${short("X = 1\n")} -> ${short("X = 2\r\n")}`,
        `    ~ main.py  ${short(MAIN)} -> ${short(MAIN.replaceAll("\n", "\r\n"))}  (only its line endings differ: CRLF)`,
        "error[E_LOCK_STALE]: the tool tree differs from tool.lock.json (1 changed: dp)",
        '  hint: git converted line endings to CRLF when it checked a tool file out (core.autocrlf, or an eol=crlf attribute): add "/.ai/tools/** -text" to .gitattributes so tool files keep their bytes, and check them out again; "kiwi lock" would lock the converted bytes',
        "",
      ].join("\n"),
    );
    const json = await k.run(["install", "--frozen-lockfile", "--json"]);
    expect(JSON.parse(json.stdout).error.details.diff.changed[0].files).toEqual([
      { path: "lib/helper.py", change: "changed", before: sha256Hex("X = 1\n"), after: sha256Hex("X = 2\r\n") },
      { path: "main.py", change: "changed", before: sha256Hex(MAIN), after: sha256Hex(MAIN.replaceAll("\n", "\r\n")), lineEndings: "crlf" },
    ]);
  });

  test("CI=true means frozen; --no-frozen-lockfile locks anyway", async () => {
    const root = demoProject();
    const k = kiwiIn(root, { CI: "true" });
    const missing = await k.run(["install"]);
    expect(missing.exitCode).toBe(3);
    expect(missing.stderr).toContain("error[E_LOCK_MISSING]: tool.lock.json does not exist");
    expect(missing.stderr).toContain('hint: run "kiwi lock"');
    const unfrozen = await k.run(["install", "--no-frozen-lockfile"]);
    expect(unfrozen.exitCode).toBe(0);
    expect(unfrozen.stdout).toContain("wrote tool.lock.json");
    expect((await k.run(["install"])).exitCode).toBe(0);
  });

  test("CI=1 (or a CI system's own name) is frozen too; CI=false and CI=0 are not", async () => {
    for (const [value, frozen] of [["1", true], ["woodpecker", true], ["false", false], ["0", false]] as const) {
      const r = await kiwiIn(demoProject(), { CI: value }).run(["install"]);
      expect([value, r.exitCode]).toEqual([value, frozen ? 3 : 0]);
    }
  });

  test("frozen with a hand-edited lockfile entry: exit 5, nothing written", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["lock"]);
    const edited = lockText(root).replace(sha256Hex("X = 1\n"), sha256Hex("X = 2\n"));
    writeFileSync(join(root, "tool.lock.json"), edited);
    writeFileSync(join(root, ".ai/tools/dp/lib/helper.py"), "X = 2\n");
    const r = await k.run(["install", "--frozen-lockfile"]);
    expect([r.exitCode, r.stdout]).toEqual([5, ""]);
    expect(r.stderr).toContain('error[E_LOCK_INVALID]: tool.lock.json: the entry for "dp" disagrees with itself');
    expect(lockText(root)).toBe(edited);
  });

  test("a cached blob replaced with other bytes is evicted, reported and restored", async () => {
    const root = demoProject();
    const k = kiwiIn(root);
    await k.run(["install"]);
    const blob = join(k.cache, blobRelPath(sha256Hex(MAIN)));
    chmodSync(blob, 0o644);
    writeFileSync(blob, "import os; os.system('evil')\n");
    const r = await k.run(["install"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`warning: evicted a corrupt cached blob sha256:${sha256Hex(MAIN).slice(0, 12)} \\(it held sha256:${sha256Hex("import os; os.system('evil')\n").slice(0, 12)}\\) to .*quarantine.*; restored from the tree`));
    expect(readFileSync(blob, "utf8")).toBe(MAIN);
  });
});
