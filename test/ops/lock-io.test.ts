// lockProject in-process, with the clock moved forward so freshly written files are not "racy":
// the tree memo skips all work when nothing changed and never hides a change.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createContext } from "../../src/context.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import pkg from "../../package.json" with { type: "json" };
import { loadTreeMemo } from "../../src/cache/stat-cache-io.ts";
import { statCacheRelPath, statRelPath } from "../../src/cache/cache-layout.ts";
import { lockProject } from "../../src/ops/lock-io.ts";
import { lockIndexPath } from "../../src/lockfile/lock-index-io.ts";
import { rawTreeFingerprint } from "../../src/manifest/raw-tree-io.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

function setup() {
  const root = makeProject({
    ".ai/tools/dp/tool.yaml": "tool_id: dp\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n",
    ".ai/tools/dp/main.py": "print(1)\n",
  });
  const ctx = { ...createContext({ cwd: root, env: { KIWI_CACHE_DIR: makeTemp() } }), now: () => Date.now() + 60_000 };
  return { root, ctx, lockPath: join(root, "tool.lock.json") };
}

describe("lockProject and its tree memo", () => {
  test("an ignore entry that expires is judged again on its day: no memo of the day before (the index, the remembered check) answers for it", async () => {
    // A JSON tool with a vendor's sample key (an error no comment can let through) and the entry that lets it.
    const token = "ghp_" + "Kw9".repeat(12);
    const tool = JSON.stringify({ tool_id: "docs_example", tool_type: "api", version: "1.0.0", executor: "http_client", config: { url: "https://api.example.test/v1", headers: { "X-Example": token } }, requires: [{ "net.outbound": ["api.example.test"] }] });
    const entry = "ignore:\n  - rule: security/secret-literal\n    tool: docs_example\n    reason: the vendor's published sample key\n    expires: 2030-01-01\n";
    for (const dropIndex of [true, false]) {
      const root = makeProject({ ".ai/tools/docs_example/tool.json": tool, ".ai/kiwi-ignore.yaml": entry });
      const cacheDir = makeTemp();
      const on = (iso: string) => ({ ...createContext({ cwd: root, env: { KIWI_CACHE_DIR: cacheDir } }), now: () => Date.parse(iso) });
      // Written "years ago" by these clocks: no stat is racy.
      expect((await lockProject(on("2029-12-31T10:00:00Z"))).written).toBe(true);
      expect((await lockProject(on("2029-12-31T23:59:00Z"))).stats.memo).toBe(true);
      // Without the index, the full lock's own memos (the tree memo, the remembered check) are asked.
      if (dropIndex) rmSync(lockIndexPath(cacheDir, realpathSync(root)));
      await expect(lockProject(on("2030-01-01T00:01:00Z"))).rejects.toMatchObject({ code: "E_CHECK_FAILED", details: { findings: expect.arrayContaining([expect.objectContaining({ rule: "ignore/expired" }), expect.objectContaining({ rule: "security/secret-literal", tool: "docs_example" })]) } });
    }
  });

  test("a second lock with nothing changed hashes nothing and writes nothing", async () => {
    const { ctx } = setup();
    const first = await lockProject(ctx);
    expect([first.written, first.stats.memo, first.stats.hashed]).toEqual([true, false, 1]);
    const second = await lockProject(ctx);
    expect([second.written, second.stats.memo, second.stats.hashed, second.tree]).toEqual([false, true, 0, undefined]);
  });

  test("a changed file misses the memo and is locked", async () => {
    const { root, ctx, lockPath } = setup();
    await lockProject(ctx);
    await lockProject(ctx);
    writeFileSync(join(root, ".ai/tools/dp/main.py"), "print(2)\n");
    const r = await lockProject(ctx);
    expect([r.written, r.stats.memo, r.diff.changed.map((c) => c.id)]).toEqual([true, false, ["dp"]]);
    expect(readFileSync(lockPath, "utf8")).toContain(sha256Hex("print(2)\n"));
  });

  test("a hand-edited lockfile misses the memo (its bytes changed) and is rewritten with a warning", async () => {
    const { ctx, lockPath } = setup();
    await lockProject(ctx);
    const good = readFileSync(lockPath, "utf8");
    writeFileSync(lockPath, good.replace(sha256Hex("print(1)\n"), sha256Hex("evil")));
    const r = await lockProject(ctx);
    expect(r.stats.memo).toBe(false);
    expect(r.warnings.join("\n")).toContain('the entry for "dp" disagrees with itself');
    expect(readFileSync(lockPath, "utf8")).toBe(good);
  });

  test("a lockfile hand-edited while a file changed is still read in full, named and rewritten", async () => {
    const { root, ctx, lockPath } = setup();
    await lockProject(ctx);
    writeFileSync(join(root, ".ai/tools/dp/main.py"), "print(2)\n");
    const bad = readFileSync(lockPath, "utf8").replace('"version": "1.0.0"', '"version": "9.9.9"');
    writeFileSync(lockPath, bad);
    const r = await lockProject(ctx);
    expect(r.written).toBe(true);
    expect(r.warnings.join("\n")).toContain("rewritten from the tool tree");
    expect(readFileSync(lockPath, "utf8")).toContain('"version": "1.0.0"');
  });

  test("a lockfile made invalid by hand while a file changed is refused, not trusted as kiwi's own", async () => {
    const { root, ctx, lockPath } = setup();
    await lockProject(ctx);
    writeFileSync(join(root, ".ai/tools/dp/main.py"), "print(2)\n");
    writeFileSync(lockPath, readFileSync(lockPath, "utf8").replace(/"integrity": "sha256:[0-9a-f]+"/, '"integrity": "sha256:not-hex"'));
    await expect(lockProject(ctx)).rejects.toMatchObject({ code: "E_LOCK_INVALID" });
  });

  test("after a racy relock the memo keeps only the digest of the bytes written, vouching for no tree", async () => {
    const { root, ctx, lockPath } = setup();
    const racyCtx = { ...ctx, now: () => Date.now() };
    await lockProject(ctx);
    writeFileSync(join(root, ".ai/tools/dp/main.py"), "print(3)\n");
    expect((await lockProject(racyCtx)).written).toBe(true);
    const memo = loadTreeMemo(ctx.cacheDir, root);
    expect(memo?.fingerprint).toBe("");
    expect(memo?.lockfile).toBe(sha256Hex(readFileSync(lockPath, "utf8")));
    // The next lock still checks the tree (no memo answer) and finds nothing to write.
    const next = await lockProject(ctx);
    expect([next.written, next.stats.memo]).toEqual([false, false]);
  });

  test("a deleted lockfile is written again", async () => {
    const { ctx, lockPath } = setup();
    await lockProject(ctx);
    const good = readFileSync(lockPath, "utf8");
    writeFileSync(lockPath, "");
    await expect(lockProject(ctx)).rejects.toMatchObject({ code: "E_LOCK_INVALID" });
    rmSync(lockPath);
    expect((await lockProject(ctx)).written).toBe(true);
    expect(readFileSync(lockPath, "utf8")).toBe(good);
  });

  test("install's needTree always hashes", async () => {
    const { ctx } = setup();
    await lockProject(ctx);
    const r = await lockProject(ctx, { needTree: true });
    expect(r.stats.memo).toBe(false);
    expect(r.tree?.map((t) => t.tool.id)).toContain("dp");
  });

  test("files written just now are not remembered (racy), so the next run checks them again", async () => {
    const { ctx } = setup();
    const realClock = { ...ctx, now: () => Date.now() };
    await lockProject(realClock);
    expect((await lockProject(realClock)).stats.memo).toBe(false);
  });
});

describe("a cold lock (the walk shared with the hashing worker)", () => {
  test("writes the lockfile, lock index and stat cache a lock walking alone writes", async () => {
    const files: Record<string, string | { content: string; mode: number }> = {};
    for (let t = 0; t < 30; t++) {
      files[`.ai/tools/g${t % 6}/t${t}/tool.yaml`] = `tool_id: t${t}\ntool_type: script\nversion: 1.0.${t}\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n`;
      files[`.ai/tools/g${t % 6}/t${t}/main.py`] = { content: `print(${t})\n`, mode: t % 2 ? 0o755 : 0o644 };
      for (let f = 0; f < 4; f++) files[`.ai/tools/g${t % 6}/t${t}/data/d${f}.txt`] = `${t}/${f}\n`.repeat(t + f);
    }
    files[".ai/tools/top.yaml"] = "tool_id: top\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig:\n  method: GET\n  url: https://example.com\n";
    const root = makeProject(files);
    const cacheDir = makeTemp();
    const ctx = { ...createContext({ cwd: root, env: { KIWI_CACHE_DIR: cacheDir } }), now: () => Date.now() + 60_000 };
    const index = join(cacheDir, statRelPath(root).replace(/\.json$/, ".index"));
    const statCache = join(cacheDir, statCacheRelPath(root));
    const lockPath = join(root, "tool.lock.json");
    const cold = await lockProject(ctx);
    expect([cold.written, cold.stats.hashed, cold.stats.files > 100]).toEqual([true, cold.stats.files, true]);
    const written = [readFileSync(lockPath), readFileSync(index), readFileSync(statCache)];
    // The same tree locked again with the stat cache kept (so no worker: one thread walks it all).
    rmSync(lockPath);
    rmSync(index);
    const alone = await lockProject(ctx);
    expect([alone.written, alone.stats.hashed, alone.stats.reused]).toEqual([true, 0, cold.stats.files]);
    expect([readFileSync(lockPath), readFileSync(index), readFileSync(statCache)]).toEqual(written);
  });
});

describe("the pre-lock check after a change", () => {
  function chainProject() {
    const root = makeProject({
      ".ai/tools/rt/tool.yaml": "tool_id: rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  command: python3\n",
      ".ai/tools/app/tool.yaml": "tool_id: app\ntool_type: script\nversion: 1.0.0\nexecutor: rt@^1\nconfig:\n  entrypoint: main.py\n",
      ".ai/tools/app/main.py": "print(1)\n",
    });
    const ctx = { ...createContext({ cwd: root, env: { KIWI_CACHE_DIR: makeTemp() } }), now: () => Date.now() + 60_000 };
    return { root, ctx };
  }

  test("re-checks an unchanged tool whose executor changed under it", async () => {
    const { root, ctx } = chainProject();
    expect((await lockProject(ctx)).written).toBe(true);
    writeFileSync(join(root, ".ai/tools/rt/tool.yaml"), readFileSync(join(root, ".ai/tools/rt/tool.yaml"), "utf8").replace("1.0.0", "2.0.0"));
    await expect(lockProject(ctx)).rejects.toMatchObject({ code: "E_CHECK_FAILED", details: { findings: expect.arrayContaining([expect.objectContaining({ rule: "chain/version-mismatch", tool: "app" })]) } });
  });

  test("re-checks the tools of a removed executor", async () => {
    const { root, ctx } = chainProject();
    await lockProject(ctx);
    rmSync(join(root, ".ai/tools/rt"), { recursive: true });
    await expect(lockProject(ctx)).rejects.toMatchObject({ code: "E_CHECK_FAILED", details: { findings: expect.arrayContaining([expect.objectContaining({ rule: "chain/missing-executor", tool: "app" })]) } });
  });

  test("catches a new error in the changed tool itself", async () => {
    const { root, ctx } = chainProject();
    await lockProject(ctx);
    writeFileSync(join(root, ".ai/tools/app/tool.yaml"), "tool_id: app\ntool_type: script\nversion: 1.0.0\nexecutor: rt@^1\nconfig:\n  entrypoint: missing.py\n");
    await expect(lockProject(ctx)).rejects.toMatchObject({ code: "E_CHECK_FAILED" });
  });
});

describe("the raw fingerprint of .ai/tools (an unchanged tree recognised before discovery)", () => {
  const later = Date.now() + 60_000;
  const fp = (root: string, extra: unknown = ["v", false]) => rawTreeFingerprint(root, extra, later)!.digest;

  test("a lock records the tree (in the lock index, built from the walk); the next lock answers from it", async () => {
    const { ctx } = setup();
    await lockProject(ctx);
    const again = await lockProject(ctx);
    expect([again.written, again.stats.memo, again.stats.tools, again.tree]).toEqual([false, true, 8, undefined]);
  });

  test("a change after the memo is seen: same-size content, a new file no tool names, a removed file", async () => {
    const { root, ctx, lockPath } = setup();
    await lockProject(ctx);
    writeFileSync(join(root, ".ai/tools/dp/main.py"), "print(7)\n");
    expect((await lockProject(ctx)).diff.changed.map((c) => c.id)).toEqual(["dp"]);
    expect(readFileSync(lockPath, "utf8")).toContain(sha256Hex("print(7)\n"));
    writeFileSync(join(root, ".ai/tools/dp/extra.txt"), "x");
    expect((await lockProject(ctx)).diff.changed.map((c) => c.id)).toEqual(["dp"]);
    rmSync(join(root, ".ai/tools/dp/extra.txt"));
    expect((await lockProject(ctx)).diff.changed.map((c) => c.id)).toEqual(["dp"]);
  });

  test("changes with every stat part, path and option", () => {
    const { root } = setup();
    const before = fp(root);
    expect(fp(root)).toBe(before);
    expect(fp(root, ["v", true])).not.toBe(before);
    writeFileSync(join(root, ".ai/tools/dp/main.py"), "print(9)\n");
    const edited = fp(root);
    expect(edited).not.toBe(before);
    chmodSync(join(root, ".ai/tools/dp/main.py"), 0o755);
    expect(fp(root)).not.toBe(edited);
    mkdirSync(join(root, ".ai/tools/empty"));
    expect(fp(root)).not.toBe(edited);
  });

  test("a tree with a symbolic link gives none (a link's stat says nothing of its target)", () => {
    const { root } = setup();
    symlinkSync("main.py", join(root, ".ai/tools/dp/alias.py"));
    expect(rawTreeFingerprint(root, [], later)).toBeUndefined();
  });

  test("a file changed within the racy margin makes it racy", () => {
    const { root } = setup();
    expect(rawTreeFingerprint(root, [], Date.now())!.racy).toBe(true);
    expect(rawTreeFingerprint(root, [], later)!.racy).toBe(false);
  });
});
