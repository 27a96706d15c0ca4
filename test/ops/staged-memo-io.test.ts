import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { RACY_MARGIN_MS } from "../../src/cache/stat-cache-io.ts";
import { join } from "node:path";
import { createContext } from "../../src/context.ts";
import { type StagedProject, checkStaged } from "../../src/ops/staged-io.ts";
import { dependenciesOf, dependencyPositions, identifyTree, manifestTable, keyedOnCurrentIndex, peekStagedMemo, readProjectIndex, stagedMemoFile } from "../../src/ops/staged-memo-io.ts";
import { statIdentity } from "../../src/cache/memo-file-io.ts";
import { lockIndexPath, scanLockIndexFast } from "../../src/lockfile/lock-index-io.ts";
import { lockProject } from "../../src/ops/lock-io.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";
import { STAGED_TOOLS } from "../helpers/staged-tools.ts";
import { git, gitEnv } from "../hook/git.ts";

afterAll(cleanupTemps);

const home = makeTemp("kiwi-home-");
const env = { ...gitEnv(home), KIWI_CACHE_DIR: join(home, "cache"), KIWI_MCP_MODE: "off" };

/** A committed, locked repository. */
async function lockedRepo(): Promise<string> {
  const root = makeTemp("kiwi-memo-");
  writeTree(root, STAGED_TOOLS);
  await relock(root);
  git(root, ["init", "-q", "-b", "main", "."], env);
  git(root, ["add", "-A"], env);
  git(root, ["commit", "-q", "-m", "init"], env);
  return root;
}

const relock = (root: string) => lockProject(createContext({ cwd: root, env }));
// Files written by a test are seconds old at most: the check runs "later" so they are not racy.
const later = () => Date.now() + 10_000;
const staged = (root: string, options: { strict?: boolean; files?: string[]; cacheDir?: string; now?: () => number } = {}) =>
  checkStaged({ cwd: root, env, cacheDir: options.cacheDir ?? env.KIWI_CACHE_DIR, now: options.now ?? later, strict: options.strict, files: options.files });
/** The same check with an empty cache: what a fresh check says of the tree now. */
const cold = (root: string, options: { strict?: boolean; files?: string[] } = {}) => staged(root, { ...options, cacheDir: makeTemp("kiwi-cold-cache-") });
const verdicts = (projects: StagedProject[]) => projects.map(({ remembered: _, ...p }) => p);

/** Runs the check twice: the second must come from the memo and equal the first. */
async function primed(root: string, options: { strict?: boolean; files?: string[] } = {}): Promise<StagedProject[]> {
  const first = await staged(root, options);
  const second = await staged(root, options);
  expect(first.map((p) => p.remembered)).toEqual(first.map(() => false));
  expect(second.map((p) => p.remembered)).toEqual(second.map(() => true));
  expect(verdicts(second)).toEqual(verdicts(first));
  return second;
}

/** True when the check answers from the memo (and then as a fresh check would). */
async function remembered(root: string, options: { strict?: boolean; files?: string[] } = {}): Promise<boolean> {
  const again = await staged(root, options);
  expect(verdicts(again)).toEqual(verdicts(await cold(root, options)));
  return again.every((p) => p.remembered);
}

/** After a change, the memo must not answer, and the answer must be a fresh check's. */
async function expectFresh(root: string, options: { strict?: boolean; files?: string[] } = {}): Promise<StagedProject[]> {
  const after = await staged(root, options);
  expect(after.map((p) => p.remembered)).toEqual(after.map(() => false));
  expect(verdicts(after)).toEqual(verdicts(await cold(root, options)));
  return after;
}

describe("the staged check's memo", () => {
  test("replays a verdict with findings and a stale lock diff exactly as the check computed it", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    writeFileSync(join(root, ".ai/tools/web.yaml"), readFileSync(join(root, ".ai/tools/web.yaml"), "utf8").replace("version: 1.0.0", "version: 1.0.0\nunknown_field: 1"));
    git(root, ["add", "-A"], env);
    const [p] = await primed(root);
    expect(p!.lock.status).toBe("stale");
    expect(p!.check.findings.length).toBeGreaterThan(0);
    expect(verdicts([p!])).toEqual(verdicts(await cold(root)));
  });

  test("reads the tree through the lock index, and is not trusted past a stat changed, a file added or the index rewritten", async () => {
    const root = await lockedRepo();
    // Locked with the clock a minute ahead: the index records every entry's stat (none is racy).
    await lockProject({ ...createContext({ cwd: root, env }), now: () => Date.now() + 60_000 });
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    git(root, ["add", "-A"], env);
    const read = () => identifyTree(root, later(), { cacheDir: env.KIWI_CACHE_DIR });
    expect([(await read()).indexed?.scan.tools.size, (await read()).raw]).toEqual([1, undefined]);
    await primed(root);
    // The staged tool edited again (its stat), then an unrelated file edited (another stat).
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo not staged\n");
    expect((await expectFresh(root))[0]!.unstaged).toEqual([".ai/tools/hi.sh"]);
    expect(await remembered(root)).toBe(true);
    // A file of a tool the verdict never read is no input of it (the memo keys on what the check read) ...
    appendFileSync(join(root, ".ai/tools/py/main.py"), "print('x')\n");
    expect(await remembered(root)).toBe(true);
    // ... a manifest of one is (its id and executor place it in the chains).
    appendFileSync(join(root, ".ai/tools/web.yaml"), "# touched\n");
    await expectFresh(root);
    expect(await remembered(root)).toBe(true);
    // A file added: the index no longer holds the tree. In a folder tool the verdict never read,
    // it is no input of the verdict either ...
    writeFileSync(join(root, ".ai/tools/py/extra.txt"), "x\n");
    expect([(await read()).indexed, (await read()).raw !== undefined]).toEqual([undefined, true]);
    expect(await remembered(root)).toBe(true);
    // ... beside the tools it is (the tool set may change), and the tree is walked instead.
    writeFileSync(join(root, ".ai/tools/extra.txt"), "x\n");
    await expectFresh(root);
    expect(await remembered(root)).toBe(true);
    // The index rewritten by a lock of the same tree: a new identity, so the memo does not answer.
    rmSync(join(root, ".ai/tools/py/extra.txt"));
    rmSync(join(root, ".ai/tools/extra.txt"));
    await lockProject({ ...createContext({ cwd: root, env }), now: () => Date.now() + 60_000 });
    expect((await read()).indexed).toBeDefined();
    await expectFresh(root);
  });

  test("is not trusted once a staged tool's file is edited again", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/py/main.py"), "print('again')\n");
    git(root, ["add", "-A"], env);
    await primed(root);
    appendFileSync(join(root, ".ai/tools/py/main.py"), "def broken(:\n");
    const [p] = await expectFresh(root);
    expect(p!.check.findings.map((f) => f.rule)).toContain("script/syntax");
    expect(p!.unstaged).toEqual([".ai/tools/py/main.py"]);
    expect(await remembered(root)).toBe(true);
    // Edited once more: git's unstaged list is the same, only the file's stat tells.
    writeFileSync(join(root, ".ai/tools/py/main.py"), "print('fixed')\n");
    expect((await expectFresh(root))[0]!.check.findings.map((f) => f.rule)).not.toContain("script/syntax");
  });

  test("is not trusted once a staged manifest is edited", async () => {
    const root = await lockedRepo();
    const web = join(root, ".ai/tools/web.yaml");
    writeFileSync(web, readFileSync(web, "utf8").replace("1.0.0", "1.0.1"));
    git(root, ["add", "-A"], env);
    await primed(root);
    writeFileSync(web, readFileSync(web, "utf8").replace("1.0.1", "not-a-version"));
    const [p] = await expectFresh(root);
    expect(p!.check.ok).toBe(false);
  });

  test("is not trusted once the executor of a staged tool is edited, staged or not", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    await relock(root);
    git(root, ["add", "-A"], env);
    expect((await primed(root))[0]!.lock.status).toBe("fresh");
    const rt = join(root, ".ai/tools/rt.yaml");
    writeFileSync(rt, readFileSync(rt, "utf8").replace("{ type: object }", "{ type: object, required: [limits] }"));
    const [p] = await expectFresh(root);
    expect(p!.check.findings.map((f) => [f.file, f.rule])).toEqual([[".ai/tools/hi.sh", "child-schema/mismatch"]]);
  });

  test("is not trusted once a new, unstaged tool reuses a judged tool's id", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    git(root, ["add", "-A"], env);
    await primed(root);
    writeFileSync(join(root, ".ai/tools/hi2.yaml"), "tool_id: hi\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { method: GET, url: https://x.test/ }\n");
    const [p] = await expectFresh(root);
    expect(p!.check.findings.map((f) => f.rule)).toContain("universal/duplicate-id");
  });

  test("is not trusted once the lockfile to be committed differs: relocked, then staged", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    git(root, ["add", "-A"], env);
    expect((await primed(root))[0]!.lock.status).toBe("stale");
    await relock(root); // the working copy changes, the index still holds the old lockfile
    expect((await expectFresh(root))[0]!.lock).toMatchObject({ status: "stale", fromIndex: true });
    expect(await remembered(root)).toBe(true);
    git(root, ["add", "tool.lock.json"], env);
    expect((await expectFresh(root))[0]!.lock).toMatchObject({ status: "fresh", fromIndex: false });
  });

  test("is not trusted once a staged lockfile differs from HEAD's in another way", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    await relock(root);
    git(root, ["add", "-A"], env);
    expect((await primed(root))[0]!.lock.status).toBe("fresh");
    // HEAD moves (the lockfile in it changes) while the tree and the index stay as they are.
    git(root, ["commit", "-q", "-m", "relocked"], env);
    git(root, ["reset", "-q", "--soft", "HEAD~1"], env);
    const lock = join(root, "tool.lock.json");
    const edited = readFileSync(lock, "utf8").replace(/"version": "1\.0\.0"/, '"version": "9.9.9"');
    writeFileSync(lock, edited);
    git(root, ["add", "tool.lock.json"], env);
    // A version edited by hand: its entry disagrees with itself.
    expect((await expectFresh(root))[0]!.lock.status).toBe("invalid");
  });

  test("keeps --strict and the plain check apart", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/web.yaml"), "# touched\n");
    git(root, ["add", "-A"], env);
    const plain = await primed(root);
    const strict = await expectFresh(root, { strict: true });
    expect(plain[0]!.check.counts.warning).toBeGreaterThan(0);
    expect(strict[0]!.check.counts.error).toBeGreaterThan(plain[0]!.check.counts.error);
    expect(await remembered(root, { strict: true })).toBe(true);
    expect(await remembered(root)).toBe(true);
  });

  test("is not trusted once what is staged changes though the tree does not", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    appendFileSync(join(root, ".ai/tools/py/main.py"), "print('again')\n");
    git(root, ["add", ".ai/tools/hi.sh"], env);
    expect((await primed(root))[0]!.affected.changed).toEqual(["hi"]);
    git(root, ["add", ".ai/tools/py/main.py"], env);
    expect((await expectFresh(root))[0]!.affected.changed).toEqual(["hi", "py"]);
  });

  test("answers pre-commit's file list and git's staged list alike, each from its own paths", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    git(root, ["add", "-A"], env);
    await primed(root, { files: [".ai/tools/hi.sh"] });
    expect(await remembered(root)).toBe(true);
    expect((await expectFresh(root, { files: [".ai/tools/hi.sh", ".ai/tools/web.yaml"] }))[0]!.affected.changed).toEqual(["hi", "web"]);
  });

  test("is not trusted under another PATH, where the syntax checkers may differ", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/py/main.py"), "print('again')\n");
    git(root, ["add", "-A"], env);
    await primed(root);
    const bin = makeTemp("kiwi-bin-");
    for (const name of ["git", "bash"]) symlinkSync(Bun.which(name)!, join(bin, name));
    const noPython = { ...env, PATH: bin };
    const [p] = await checkStaged({ cwd: root, env: noPython, cacheDir: env.KIWI_CACHE_DIR, now: later });
    expect(p!.remembered).toBe(false);
    expect(p!.check.findings.map((f) => f.rule)).toEqual(["script/interpreter-missing"]);
  });

  test("is not trusted the next day while the project has an ignore file (an entry of it may expire)", async () => {
    const root = await lockedRepo();
    writeFileSync(join(root, ".ai/kiwi-ignore.yaml"), "ignore:\n  - { rule: security/host-any, tool: py, reason: r, expires: 2030-01-01 }\n");
    appendFileSync(join(root, ".ai/tools/py/main.py"), "print('again')\n");
    git(root, ["add", "-A"], env);
    const on = (iso: string) => () => Date.parse(iso);
    const [first] = await staged(root, { now: on("2029-12-31T10:00:00Z") });
    const [same] = await staged(root, { now: on("2029-12-31T23:59:00Z") });
    const [next] = await staged(root, { now: on("2030-01-01T00:01:00Z") });
    expect([first!.remembered, same!.remembered, next!.remembered]).toEqual([false, true, false]);
    expect(next!.check.findings.map((f) => f.rule)).toContain("ignore/expired");
  });

  test("remembers nothing while a file is within the racy margin", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    git(root, ["add", "-A"], env);
    await staged(root, { now: Date.now });
    expect((await staged(root, { now: Date.now }))[0]!.remembered).toBe(false);
    expect(await remembered(root)).toBe(false); // and nothing was stored for later either
  });

  test("remembers nothing for a tree with a symbolic link (its stat says nothing of the target)", async () => {
    const root = await lockedRepo();
    symlinkSync("main.py", join(root, ".ai/tools/py/link.py"));
    git(root, ["add", "-A"], env);
    await staged(root);
    expect(await remembered(root)).toBe(false);
  });

  test("reads a damaged memo as absent", async () => {
    const cacheDir = makeTemp("kiwi-cache-");
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    git(root, ["add", "-A"], env);
    const first = await staged(root, { cacheDir });
    const dir = join(cacheDir, "check/staged");
    for (const name of readdirSync(dir)) {
      rmSync(join(dir, name));
      writeFileSync(join(dir, name), `${"0".repeat(64)}\n{"digest":"x"}`);
    }
    const again = await staged(root, { cacheDir });
    expect(again[0]!.remembered).toBe(false);
    expect(verdicts(again)).toEqual(verdicts(first));
  });
});

// A verdict taken through the lock index is remembered under the entries it can depend on (every
// folder, every manifest, every file of a tool the check read) and answers past a change anywhere
// else. The tree: a folder runtime `prt` (the changed tool), a folder tool `pd` on it (a dependent,
// read and hashed), and a knowledge tool `dt` with data files no check of `prt` reads.
const DEPENDENCY_TOOLS = {
  ...STAGED_TOOLS,
  ".ai/tools/prt/tool.yaml": "tool_id: prt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: bash }\n",
  ".ai/tools/prt/run.sh": "echo run\n",
  ".ai/tools/pd/tool.yaml": "tool_id: pd\ntool_type: script\nversion: 1.0.0\nexecutor: prt\nconfig: { entrypoint: main.sh }\n",
  ".ai/tools/pd/main.sh": "echo pd\n",
  ".ai/tools/dt/tool.yaml": "tool_id: dt\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\nconfig: { entrypoint: notes.md }\n",
  ".ai/tools/dt/notes.md": "# notes\n",
  ".ai/tools/dt/data/a.bin": "aaaa\n",
  ".ai/tools/jt/tool.json": '{ "tool_id": "jt", "tool_type": "knowledge", "version": "1.0.0", "executor": null, "config": { "entrypoint": "notes.md" } }\n',
  ".ai/tools/jt/notes.md": "# notes\n",
};

describe("the entries a verdict taken through the lock index depends on", () => {
  test("are the same found in the index's bytes as in its decoded paths, whatever was read", async () => {
    const root = realpathSync(makeTemp("kiwi-memo-positions-"));
    writeTree(root, { ...DEPENDENCY_TOOLS, ".ai/tools/dt/data/é.bin": "e\n", ".ai/tools/stray.txt": "not a tool\n" });
    await lockProject({ ...createContext({ cwd: root, env }), now: () => Date.now() + 60_000 });
    const index = readProjectIndex(env.KIWI_CACHE_DIR, root)!;
    expect(index.starts).toBeDefined();
    // The same index with its paths decoded and no bytes to search.
    const decoded = { ...index, names: undefined, starts: undefined, tools: index.tools, paths: index.paths };
    const tools = index.tools.map((_, t) => t);
    for (const read of [[], [0], tools.slice(0, 3), tools.slice(-2), tools]) {
      const positions = dependencyPositions(index, new Set(read));
      expect(positions).toBeDefined();
      expect(positions).toEqual(dependencyPositions(decoded, new Set(read)));
    }
    // The entries a narrow scan statted are taken as it read them: the same names and rows as copied from the index.
    writeFileSync(join(root, ".ai/tools/dt/data/é.bin"), "changed\n");
    for (const read of [[], tools.slice(0, 3), tools]) {
      const positions = dependencyPositions(index, new Set(read))!;
      const scan = await scanLockIndexFast(index, positions);
      const taken = dependenciesOf(index, scan, new Set(read), positions)!;
      const copied = dependenciesOf(index, scan, new Set(read), [...positions])!;
      expect(process.platform !== "linux" || taken.rows === scan.onlyRows).toBe(true);
      expect({ names: [...taken.names], rows: [...taken.rows], top: Array.from(taken.top) }).toEqual({ names: [...copied.names], rows: [...copied.rows], top: Array.from(copied.top) });
    }
    // A damaged tools section (placeholder rows, or a manifest outside .ai/tools) tells no entries apart.
    const at = index.tools.findIndex((t) => t.form !== "builtin");
    const damaged = (change: (t: (typeof index.tools)[number]) => object) => ({ ...index, tools: index.tools.map((t, i) => (i === at ? { ...t, ...change(t) } : t)) });
    expect(dependencyPositions(damaged(() => ({ source: "" })), new Set())).toBeUndefined();
    expect(dependencyPositions(damaged((t) => ({ source: t.source.replace(".ai/tools/", "elsewhere/") })), new Set())).toBeUndefined();
  });
});

describe("manifests found among the entries by their bytes", () => {
  test.each([
    ["paths in UTF-8 (compared as bytes)", "é ✓", true],
    ["a path holding U+FFFD (compared as decoded text)", "x\ufffdy", false],
  ])("with %s, the same entries as the decoded paths give", async (_, folder, asBytes) => {
    const root = realpathSync(makeTemp("kiwi-memo-manifests-"));
    const named = (name: string) => `tool_id: ${name}\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\nconfig: { entrypoint: notes.md }\n`;
    writeTree(root, {
      ...DEPENDENCY_TOOLS,
      [`.ai/tools/${folder}/tool.yaml`]: named("odd"),
      [`.ai/tools/${folder}/notes.md`]: "# notes\n",
      [`.ai/tools/${folder}/data/tool.yaml`]: "not a manifest: below a folder tool's root\n",
      ".ai/tools/zz/tool.yaml": named("zz"),
      ".ai/tools/zz/notes.md": "# notes\n",
      ".ai/tools/zz/tool.yamx": "a name of the manifest's length\n",
    });
    await lockProject({ ...createContext({ cwd: root, env }), now: () => Date.now() + 60_000 });
    const index = readProjectIndex(env.KIWI_CACHE_DIR, root)!;
    expect(manifestTable(index)?.bytes !== undefined).toBe(asBytes);
    const decoded = { ...index, names: undefined, starts: undefined, tools: index.tools, paths: index.paths };
    const tools = index.tools.map((_, t) => t);
    for (const read of [[], tools.slice(0, 2), tools.slice(-3), tools]) expect(dependencyPositions(index, new Set(read))).toEqual(dependencyPositions(decoded, new Set(read)));
    expect(dependencyPositions(index, new Set())!.map((i) => index.paths[i])).toContain(`${folder}/tool.yaml`);
  });
});

describe.each([
  ["git's status of the whole tree", undefined],
  ["the staged diff, then the changed tools' working copies", 0],
])("the staged check's memo, keyed on what the verdict read (%s)", (_how, scopedFrom) => {
  const check = (root: string, options: { cacheDir?: string; now?: () => number } = {}) =>
    checkStaged({ cwd: root, env, cacheDir: options.cacheDir ?? env.KIWI_CACHE_DIR, now: options.now ?? later, scopedFrom });
  const coldHere = (root: string) => check(root, { cacheDir: makeTemp("kiwi-cold-cache-") });
  /** The check answers from the memo, exactly as a fresh check of the tree now. */
  const answers = async (root: string) => {
    const again = await check(root);
    expect(verdicts(again)).toEqual(verdicts(await coldHere(root)));
    return again.every((p) => p.remembered);
  };
  /** The memo must not answer; the answer is a fresh check's. */
  const fresh = async (root: string) => {
    const after = await check(root);
    expect(after.map((p) => p.remembered)).toEqual(after.map(() => false));
    expect(verdicts(after)).toEqual(verdicts(await coldHere(root)));
    return after[0]!;
  };
  /** A committed repository locked with the clock a minute ahead (no racy index row), `prt`'s script changed, relocked and staged. */
  async function changedRuntime(): Promise<string> {
    const root = makeTemp("kiwi-memo-deps-");
    writeTree(root, DEPENDENCY_TOOLS);
    const lockAhead = () => lockProject({ ...createContext({ cwd: root, env }), now: () => Date.now() + 60_000 });
    await lockAhead();
    git(root, ["init", "-q", "-b", "main", "."], env);
    git(root, ["add", "-A"], env);
    git(root, ["commit", "-q", "-m", "init"], env);
    appendFileSync(join(root, ".ai/tools/prt/run.sh"), "echo again\n");
    await lockAhead();
    git(root, ["add", "-A"], env);
    const first = await check(root);
    expect(first[0]).toMatchObject({ remembered: false, affected: { changed: ["prt"], dependents: ["pd"] }, lock: { status: "fresh" } });
    expect(await answers(root)).toBe(true);
    return root;
  }

  /** The memo removed: the next check is the first of this staged state; it must be a cold check's, and then be remembered. */
  const firstCheck = async (root: string) => {
    rmSync(stagedMemoFile(env.KIWI_CACHE_DIR, realpathSync(root), false), { force: true });
    const p = await fresh(root);
    expect(await answers(root)).toBe(true);
    return p;
  };

  // The first check of a staged state stats only the entries its verdict can depend on (as the
  // memo keys on them); a tool it reads later must still be as the lock index recorded it.
  test("a first check is a cold check's past unstaged edits in tools it never read, and its memo is keyed on what it read", async () => {
    const root = await changedRuntime();
    appendFileSync(join(root, ".ai/tools/dt/data/a.bin"), "more\n");
    appendFileSync(join(root, ".ai/tools/py/main.py"), "def broken(:\n");
    writeFileSync(join(root, ".ai/tools/dt/data/b.bin"), "bbbb\n");
    const p = await firstCheck(root);
    expect(p).toMatchObject({ affected: { changed: ["prt"], dependents: ["pd"] }, lock: { status: "fresh" } });
    // The dependent it read is an input of that memo.
    appendFileSync(join(root, ".ai/tools/pd/main.sh"), "echo not staged\n");
    expect((await fresh(root)).lock.diff?.changed.map((c) => c.id)).toEqual(["pd"]);
  });

  test("a first check is a cold check's past an unstaged edit in a dependent it reads only later", async () => {
    const root = await changedRuntime();
    appendFileSync(join(root, ".ai/tools/pd/main.sh"), "echo not staged\n");
    const p = await firstCheck(root);
    expect(p.lock.diff?.changed.map((c) => c.id)).toEqual(["pd"]);
    expect(p.unstaged).toEqual([]);
  });

  test("a first check is a cold check's past a name added to a dependent it reads only later", async () => {
    const root = await changedRuntime();
    writeFileSync(join(root, ".ai/tools/pd/extra.sh"), "echo extra\n");
    expect((await firstCheck(root)).lock.diff?.changed.map((c) => c.id)).toEqual(["pd"]);
    symlinkSync("main.sh", join(root, ".ai/tools/pd/link.sh"));
    rmSync(stagedMemoFile(env.KIWI_CACHE_DIR, realpathSync(root), false), { force: true });
    await fresh(root);
  });

  test("a first check is a cold check's once the manifest of a tool it never read puts that tool on the changed one", async () => {
    const root = await changedRuntime();
    const manifest = join(root, ".ai/tools/py/tool.yaml");
    writeFileSync(manifest, readFileSync(manifest, "utf8").replace("executor: python_runtime", "executor: prt"));
    expect((await firstCheck(root)).affected.dependents).toEqual(["pd", "py"]);
  });

  test("a first check is a cold check's once a name is added beside tools it never read", async () => {
    const root = await changedRuntime();
    writeFileSync(join(root, ".ai/tools/jt/tool.yaml"), "tool_id: jt\ntool_type: script\nversion: 1.0.0\nexecutor: prt\nconfig: { entrypoint: notes.md }\n");
    expect((await firstCheck(root)).affected.dependents).toEqual(["jt", "pd"]);
    writeTree(root, { ".ai/tools/nt/tool.yaml": "tool_id: nt\ntool_type: script\nversion: 1.0.0\nexecutor: prt\nconfig: { entrypoint: main.sh }\n", ".ai/tools/nt/main.sh": "echo nt\n" });
    expect((await firstCheck(root)).affected.dependents).toEqual(["jt", "nt", "pd"]);
  });

  test("answers past an unstaged edit in a tool it never read", async () => {
    const root = await changedRuntime();
    appendFileSync(join(root, ".ai/tools/dt/data/a.bin"), "more\n");
    appendFileSync(join(root, ".ai/tools/py/main.py"), "def broken(:\n");
    expect(await answers(root)).toBe(true);
  });

  test("is not trusted past an unstaged edit in a dependent it read", async () => {
    const root = await changedRuntime();
    appendFileSync(join(root, ".ai/tools/pd/main.sh"), "echo not staged\n");
    const p = await fresh(root);
    expect(p.lock.status).toBe("stale");
    expect(p.lock.diff?.changed.map((c) => c.id)).toEqual(["pd"]);
    expect(p.unstaged).toEqual([]);
    expect(await answers(root)).toBe(true);
  });

  test("is not trusted past an unstaged edit in the changed tool, which it warns of", async () => {
    const root = await changedRuntime();
    appendFileSync(join(root, ".ai/tools/prt/run.sh"), "echo not staged\n");
    const p = await fresh(root);
    expect(p.unstaged).toEqual([".ai/tools/prt/run.sh"]);
    expect(p.lock.status).toBe("stale");
  });

  test("is not trusted once the manifest of a tool it never read puts that tool on the changed one", async () => {
    const root = await changedRuntime();
    const manifest = join(root, ".ai/tools/py/tool.yaml");
    writeFileSync(manifest, readFileSync(manifest, "utf8").replace("executor: python_runtime", "executor: prt"));
    const p = await fresh(root);
    expect(p.affected.dependents).toEqual(["pd", "py"]);
  });

  test("is not trusted once a name is added to a folder that may hold tools or manifests, even beside tools it never read", async () => {
    const root = await changedRuntime();
    // Below a folder tool's root, discovery looks for no tool: a name there is that tool's file only.
    writeFileSync(join(root, ".ai/tools/dt/data/b.bin"), "bbbb\n");
    expect(await answers(root)).toBe(true);
    // Nor in the root beside a tool.yaml, the first manifest name discovery looks for.
    writeFileSync(join(root, ".ai/tools/dt/more.md"), "# more\n");
    writeFileSync(join(root, ".ai/tools/dt/tool.json"), '{ "tool_id": "dt", "tool_type": "knowledge", "version": "1.0.0", "executor": "prt" }\n');
    expect(await answers(root)).toBe(true);
    // Beside a tool.json, a tool.yaml is the manifest discovery reads: here one on the changed tool.
    writeFileSync(join(root, ".ai/tools/jt/tool.yaml"), "tool_id: jt\ntool_type: script\nversion: 1.0.0\nexecutor: prt\nconfig: { entrypoint: notes.md }\n");
    expect((await fresh(root)).affected.dependents).toEqual(["jt", "pd"]);
    expect(await answers(root)).toBe(true);
    // A new folder in .ai/tools, holding a new tool on the changed one.
    writeTree(root, { ".ai/tools/nt/tool.yaml": "tool_id: nt\ntool_type: script\nversion: 1.0.0\nexecutor: prt\nconfig: { entrypoint: main.sh }\n", ".ai/tools/nt/main.sh": "echo nt\n" });
    expect((await fresh(root)).affected.dependents).toEqual(["jt", "nt", "pd"]);
  });

  test("is not trusted once another tool's change is staged", async () => {
    const root = await changedRuntime();
    appendFileSync(join(root, ".ai/tools/dt/data/a.bin"), "more\n");
    expect(await answers(root)).toBe(true);
    git(root, ["add", ".ai/tools/dt/data/a.bin"], env);
    const p = await fresh(root);
    expect(p.affected.changed).toEqual(["dt", "prt"]);
    expect(p.lock.status).toBe("stale");
  });

  test("answers after git add refreshes a stat without changing content, unless the file is one it read", async () => {
    const root = await changedRuntime();
    const past = new Date(Date.now() - 3_600_000);
    utimesSync(join(root, ".ai/tools/dt/data/a.bin"), past, past);
    git(root, ["add", ".ai/tools/dt/data/a.bin"], env);
    expect(git(root, ["diff", "--cached", "--name-only"], env).trim().split("\n").sort()).toEqual([".ai/tools/prt/run.sh", "tool.lock.json"]);
    expect(await answers(root)).toBe(true);
    utimesSync(join(root, ".ai/tools/pd/main.sh"), past, past);
    git(root, ["add", ".ai/tools/pd/main.sh"], env);
    await fresh(root);
    expect(await answers(root)).toBe(true);
  });

  test("is not trusted once HEAD holds another lockfile, the index and the tree unchanged", async () => {
    const root = await changedRuntime();
    // A commit on HEAD whose lockfile claims another version of pd (plumbing: no working file moves).
    const edited = git(root, ["show", "HEAD:tool.lock.json"], env).replace(/"version": "1\.0\.0"/g, '"version": "9.9.9"');
    writeFileSync(join(root, ".git/edited-lock"), edited);
    const blob = git(root, ["hash-object", "-w", ".git/edited-lock"], env).trim();
    const scratch = { ...env, GIT_INDEX_FILE: join(root, ".git/scratch-index") };
    git(root, ["read-tree", "HEAD"], scratch);
    git(root, ["update-index", "--cacheinfo", `100644,${blob},tool.lock.json`], scratch);
    const tree = git(root, ["write-tree"], scratch).trim();
    const commit = git(root, ["commit-tree", tree, "-p", "HEAD", "-m", "other lock"], env).trim();
    git(root, ["update-ref", "HEAD", commit], env);
    expect(git(root, ["diff", "--cached", "--name-only"], env).trim().split("\n").sort()).toEqual([".ai/tools/prt/run.sh", "tool.lock.json"]);
    const p = await fresh(root);
    expect(p.lock.status).toBe("fresh");
    expect(await answers(root)).toBe(true);
  });

  test("is not trusted once the lock index it was keyed on is rewritten, even for the same tree", async () => {
    const root = await changedRuntime();
    const lockfile = statSync(join(root, "tool.lock.json"));
    await lockProject({ ...createContext({ cwd: root, env }), now: () => Date.now() + 60_000 });
    expect(statSync(join(root, "tool.lock.json")).mtimeMs).toBe(lockfile.mtimeMs); // confirmed, not rewritten
    // The memo names the index its key holds: once that index is rewritten it is known not to answer, before anything is statted.
    const file = stagedMemoFile(env.KIWI_CACHE_DIR, realpathSync(root), false);
    const stale = peekStagedMemo(file)!;
    expect(stale.index).toBeDefined();
    expect(keyedOnCurrentIndex(stale, env.KIWI_CACHE_DIR, realpathSync(root))).toBe(false);
    await fresh(root);
    const now = peekStagedMemo(file)!;
    expect(now.index).toBe(statIdentity(lockIndexPath(env.KIWI_CACHE_DIR, realpathSync(root))));
    expect(keyedOnCurrentIndex(now, env.KIWI_CACHE_DIR, realpathSync(root))).toBe(true);
    expect(await answers(root)).toBe(true);
    // A memo written before the index was recorded may still answer: its entries are statted.
    const { index: _, ...unnamed } = now;
    expect(keyedOnCurrentIndex(unnamed, env.KIWI_CACHE_DIR, realpathSync(root))).toBe(true);
  });

  test("a truncated git index is judged as git reads it, never answered from the memo", async () => {
    const root = await changedRuntime();
    const index = join(root, ".git/index");
    // git reads the entries before the cut and no checksum: every later path reads as deleted.
    writeFileSync(index, readFileSync(index).subarray(0, 100));
    expect(git(root, ["diff", "--cached", "--name-only", "--diff-filter=D"], env)).toContain("tool.lock.json");
    const p = await fresh(root);
    expect(p.affected).toEqual({ changed: ["dt", "hi", "jt", "pd", "prt", "py", "rt", "web"], dependents: [], gone: [], lockfileChanged: true });
  });

  test("remembers a verdict past a racy file it never read, never one whose own inputs are racy", async () => {
    const root = await changedRuntime();
    // Past the racy margin of everything written so far, so only what is written next is racy.
    await Bun.sleep(RACY_MARGIN_MS + 100);
    appendFileSync(join(root, ".ai/tools/dt/data/a.bin"), "more\n");
    const now = () => Date.now();
    expect((await check(root, { now }))[0]!.remembered).toBe(true);
    appendFileSync(join(root, ".ai/tools/pd/main.sh"), "echo racy\n");
    expect((await check(root, { now }))[0]!.remembered).toBe(false);
    expect((await check(root, { now }))[0]!.remembered).toBe(false);
  });
});
