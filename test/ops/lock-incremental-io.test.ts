// The incremental lock (ops/lock-incremental-io.ts): after any change, the lockfile it leaves is byte for
// byte what a cold lock of the same tree writes, whether the index answered or the full lock ran.
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { statRelPath } from "../../src/cache/cache-layout.ts";
import { createContext } from "../../src/context.ts";
import { lockProject } from "../../src/ops/lock-io.ts";
import { loadLockIndex, scanLockIndexFast } from "../../src/lockfile/lock-index-io.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const yaml = (id: string, extra = "") => `tool_id: ${id}\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime@^1\nconfig:\n  entrypoint: main.py\n${extra}`;

function setup() {
  const root = makeProject({
    ".ai/tools/rt/tool.yaml": "tool_id: rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  command: python3\n",
    ".ai/tools/a/tool.yaml": yaml("a"),
    ".ai/tools/a/main.py": "print('a')\n",
    ".ai/tools/a/data/one.txt": "one\n",
    ".ai/tools/b/tool.yaml": "tool_id: b\ntool_type: script\nversion: 1.0.0\nexecutor: rt@^1\nconfig:\n  entrypoint: main.py\n",
    ".ai/tools/b/main.py": "print('b')\n",
    ".ai/tools/helper/SKILL.md": "---\nname: helper\ndescription: Helps with things when asked to help.\n---\nRead ref.md.\n",
    ".ai/tools/helper/ref.md": "reference\n",
    ".ai/tools/group/c.py": '"""\ntool_id: c\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime@^1\n"""\nprint("c")\n',
  });
  const ctx = { ...createContext({ cwd: root, env: { KIWI_CACHE_DIR: makeTemp() } }), now: () => Date.now() + 60_000 };
  return { root, ctx, lockPath: join(root, "tool.lock.json") };
}

/** The lockfile a cold lock (no lockfile, empty cache) writes for a copy of the tree. */
async function coldLock(root: string): Promise<string> {
  const copy = join(makeTemp(), "p");
  cpSync(root, copy, { recursive: true });
  rmSync(join(copy, "tool.lock.json"), { force: true });
  const ctx = { ...createContext({ cwd: copy, env: { KIWI_CACHE_DIR: makeTemp() } }), now: () => Date.now() + 60_000 };
  await lockProject(ctx);
  return readFileSync(join(copy, "tool.lock.json"), "utf8");
}

/** Locks twice (the second answers from the index), applies `change`, locks again. */
async function afterChange(change: (root: string) => void) {
  const s = setup();
  await lockProject(s.ctx);
  const again = await lockProject(s.ctx);
  expect([again.stats.memo, again.tree]).toEqual([true, undefined]);
  change(s.root);
  const result = await lockProject(s.ctx);
  return { ...s, result, text: readFileSync(s.lockPath, "utf8") };
}

describe("files changed inside tools are locked from the index alone", () => {
  test.each([
    ["a data file's bytes", (root: string) => writeFileSync(join(root, ".ai/tools/a/data/one.txt"), "uno\n"), ["a"]],
    ["an executor's entry point (its dependents keep their entries)", (root: string) => writeFileSync(join(root, ".ai/tools/b/main.py"), "print('B')\n"), ["b"]],
    ["two tools at once", (root: string) => {
      writeFileSync(join(root, ".ai/tools/a/main.py"), "print('A')\n");
      writeFileSync(join(root, ".ai/tools/b/main.py"), "print('B')\n");
    }, ["a", "b"]],
    ["a single-file tool's code below its manifest", (root: string) => writeFileSync(join(root, ".ai/tools/group/c.py"), '"""\ntool_id: c\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime@^1\n"""\nprint("C")\n'), ["c"]],
    ["a file of an Agent Skill", (root: string) => writeFileSync(join(root, ".ai/tools/helper/ref.md"), "more reference\n"), ["helper"]],
    ["a file saved by rename (its folder's stat changes, its names do not)", (root: string) => {
      writeFileSync(join(root, ".ai/tools/a/data/one.tmp"), "eins\n");
      renameSync(join(root, ".ai/tools/a/data/one.tmp"), join(root, ".ai/tools/a/data/one.txt"));
    }, ["a"]],
  ] as const)("%s", async (_name, change, ids) => {
    const { root, result, text } = await afterChange(change);
    // No tree: discovery did not run; the check verdict was the index's.
    expect([result.written, result.stats.memo, result.tree, result.diff.changed.map((c) => c.id)]).toEqual([true, false, undefined, [...ids]]);
    expect(text).toBe(await coldLock(root));
  });

  test("a comment-only manifest edit keeps the model: the entry's bytes stay, nothing is written", async () => {
    const { root, result, text } = await afterChange((r) => writeFileSync(join(r, ".ai/tools/a/tool.yaml"), `# a comment\n${yaml("a")}`));
    expect([result.written, result.tree, result.stats.hashed]).toEqual([false, undefined, 0]);
    expect(text).toBe(await coldLock(root));
  });

  test("the same bytes written again change nothing and the next run is a plain memo answer", async () => {
    const { ctx, result } = await afterChange((r) => writeFileSync(join(r, ".ai/tools/a/main.py"), "print('a')\n"));
    expect([result.written, result.stats.hashed]).toEqual([false, 1]);
    const next = await lockProject(ctx);
    expect([next.stats.memo, next.stats.hashed]).toEqual([true, 0]);
  });
});

describe("anything else takes the full lock, with exactly its result", () => {
  test.each([
    ["a tool added", (root: string) => {
      mkdirSync(join(root, ".ai/tools/d"));
      writeFileSync(join(root, ".ai/tools/d/tool.yaml"), yaml("d"));
      writeFileSync(join(root, ".ai/tools/d/main.py"), "print('d')\n");
    }],
    ["a tool removed", (root: string) => rmSync(join(root, ".ai/tools/a"), { recursive: true })],
    ["a tool folder renamed", (root: string) => renameSync(join(root, ".ai/tools/a"), join(root, ".ai/tools/a2"))],
    ["an empty folder added", (root: string) => mkdirSync(join(root, ".ai/tools/a/empty"))],
    ["a file added to a tool", (root: string) => writeFileSync(join(root, ".ai/tools/a/data/two.txt"), "two\n")],
    ["a file removed from a tool", (root: string) => rmSync(join(root, ".ai/tools/a/data/one.txt"))],
    ["a version bumped in tool.yaml", (root: string) => writeFileSync(join(root, ".ai/tools/a/tool.yaml"), yaml("a").replace("1.0.0", "1.1.0"))],
    ["an executor's version bumped (its dependents' entries change)", (root: string) => writeFileSync(join(root, ".ai/tools/rt/tool.yaml"), "tool_id: rt\ntool_type: runtime\nversion: 1.2.0\nexecutor: subprocess\nconfig:\n  command: python3\n")],
    ["a tool's executor changed", (root: string) => writeFileSync(join(root, ".ai/tools/a/tool.yaml"), yaml("a").replace("python_runtime@^1", "rt@^1"))],
    ["a single-file tool's manifest changed", (root: string) => writeFileSync(join(root, ".ai/tools/group/c.py"), '"""\ntool_id: c\ntool_type: script\nversion: 2.0.0\nexecutor: python_runtime@^1\n"""\nprint("c")\n')],
    ["an Agent Skill's body (its manifest holds it)", (root: string) => writeFileSync(join(root, ".ai/tools/helper/SKILL.md"), "---\nname: helper\ndescription: Helps with things when asked to help.\n---\nRead ref.md twice.\n")],
    ["a file made executable", (root: string) => {
      const p = join(root, ".ai/tools/a/data/one.txt");
      require("node:fs").chmodSync(p, 0o755);
    }],
  ] as const)("%s", async (_name, change) => {
    const { root, text } = await afterChange(change);
    expect(text).toBe(await coldLock(root));
  });

  test("a tool made invalid is refused as a full lock refuses it, and the lockfile is left alone", async () => {
    const s = setup();
    await lockProject(s.ctx);
    const good = readFileSync(s.lockPath, "utf8");
    writeFileSync(join(s.root, ".ai/tools/a/tool.yaml"), yaml("a").replace("main.py", "missing.py"));
    await expect(lockProject(s.ctx)).rejects.toMatchObject({ code: "E_CHECK_FAILED" });
    expect(readFileSync(s.lockPath, "utf8")).toBe(good);
  });

  test("a hand-edited lockfile is never spliced: the full lock rewrites it with a warning", async () => {
    const s = setup();
    await lockProject(s.ctx);
    const good = readFileSync(s.lockPath, "utf8");
    writeFileSync(s.lockPath, good.replace('"version": "1.0.0"', '"version": "9.9.9"'));
    writeFileSync(join(s.root, ".ai/tools/a/data/one.txt"), "uno\n");
    const r = await lockProject(s.ctx);
    expect(r.warnings.join("\n")).toContain("rewritten from the tool tree");
    expect(readFileSync(s.lockPath, "utf8")).toBe(await coldLock(s.root));
  });
});

describe("a damaged or foreign index is ignored", () => {
  const indexFile = (ctx: { cacheDir: string }, root: string) => join(ctx.cacheDir, statRelPath(root).replace(/\.json$/, ".index"));

  test.each([
    ["truncated", (bytes: Buffer) => bytes.subarray(0, bytes.length - 9)],
    ["garbage", () => Buffer.from("not an index at all")],
    ["empty", () => Buffer.alloc(0)],
    ["a tools section that is not JSON", (bytes: Buffer) => {
      const copy = Buffer.from(bytes);
      copy.write("x", 24 + copy.readUInt32LE(8)); // the section's "[" (after the 24-byte head and the header)
      return copy;
    }],
    ["a flipped owner (points past the tools)", (bytes: Buffer) => {
      const copy = Buffer.from(bytes);
      copy.writeInt32LE(1 << 20, copy.length - 4);
      return copy;
    }],
  ] as const)("%s: the full lock runs and its result is a cold lock's", async (_name, damage) => {
    const s = setup();
    await lockProject(s.ctx);
    const file = indexFile(s.ctx, s.root);
    writeFileSync(file, damage(readFileSync(file)));
    writeFileSync(join(s.root, ".ai/tools/a/data/one.txt"), "uno\n");
    const r = await lockProject(s.ctx);
    expect([r.written, r.stats.memo, r.tree === undefined]).toEqual([true, false, false]);
    expect(readFileSync(s.lockPath, "utf8")).toBe(await coldLock(s.root));
    // The full lock wrote a good index again.
    expect(loadLockIndex(s.ctx.cacheDir, s.root, false)).toBeDefined();
  });

  test("another project's index (another root) is not used", async () => {
    const one = setup();
    const two = setup();
    await lockProject(one.ctx);
    await lockProject(two.ctx);
    const ctxTwo = { ...two.ctx, cacheDir: one.ctx.cacheDir };
    writeFileSync(indexFile(one.ctx, two.root), readFileSync(indexFile(one.ctx, one.root)));
    expect(loadLockIndex(one.ctx.cacheDir, two.root, false)).toBeUndefined();
    writeFileSync(join(two.root, ".ai/tools/a/data/one.txt"), "uno\n");
    const r = await lockProject(ctxTwo);
    expect(r.tree === undefined).toBe(false);
    expect(readFileSync(two.lockPath, "utf8")).toBe(await coldLock(two.root));
  });

  test("an index written without --strict is not used with it (the verdict it records differs)", async () => {
    const s = setup();
    await lockProject(s.ctx);
    expect(loadLockIndex(s.ctx.cacheDir, s.root, false)).toBeDefined();
    expect(loadLockIndex(s.ctx.cacheDir, s.root, true)).toBeUndefined();
  });
});

describe("the racy rule", () => {
  test("a file changed within the margin is recorded as unknown: the next run reads it again", async () => {
    const s = setup();
    await lockProject(s.ctx);
    writeFileSync(join(s.root, ".ai/tools/a/data/one.txt"), "uno\n");
    const racyCtx = { ...s.ctx, now: () => Date.now() };
    const first = await lockProject(racyCtx);
    expect([first.written, first.tree]).toEqual([true, undefined]);
    const second = await lockProject(s.ctx);
    expect([second.written, second.stats.hashed, second.stats.memo]).toEqual([false, 1, false]);
    expect((await lockProject(s.ctx)).stats.memo).toBe(true);
  });
});

describe("the lock index's scan (what the staged check reads instead of discovery)", () => {
  test("names the tools whose files changed, and no set for a structural change", async () => {
    const s = setup();
    await lockProject(s.ctx);
    // The changed tools' ids, or undefined when the change is structural (the project is read again).
    const changedSinceIndex = async () => {
      const index = loadLockIndex(s.ctx.cacheDir, s.root, false)!;
      const scan = await scanLockIndexFast(index);
      return { tools: index.tools, changed: scan.structural ? undefined : new Set([...scan.tools.keys()].map((t) => index.tools[t]!.id)) };
    };
    expect((await changedSinceIndex()).changed).toEqual(new Set());
    writeFileSync(join(s.root, ".ai/tools/b/main.py"), "print('B')\n");
    const since = await changedSinceIndex();
    expect(since.changed).toEqual(new Set(["b"]));
    expect(since.tools.map((t) => t.id)).toContain("rt");
    writeFileSync(join(s.root, ".ai/tools/b/new.txt"), "x");
    expect((await changedSinceIndex()).changed).toBeUndefined();
  });
});
