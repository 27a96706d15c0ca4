import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createContext } from "../../src/context.ts";
import { checkStaged } from "../../src/ops/staged-io.ts";
import { lockProject } from "../../src/ops/lock-io.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";
import { git, gitEnv } from "../hook/git.ts";

afterAll(cleanupTemps);

const home = makeTemp("kiwi-home-");
const env = { ...gitEnv(home), KIWI_CACHE_DIR: join(home, "cache"), KIWI_MCP_MODE: "off" };

const TOOLS = {
  ".ai/tools/rt.yaml": "tool_id: rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: bash }\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { type: object }\n",
  ".ai/tools/hi.sh": { content: "#!/bin/bash\n# ---\n# tool_id: hi\n# tool_type: script\n# version: 1.0.0\n# executor: rt\n# ---\necho hi\n", mode: 0o755 },
  ".ai/tools/web.yaml": "tool_id: web\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { method: GET, url: https://x.test/ }\n",
};

/** A committed, locked repository. */
async function lockedRepo(): Promise<string> {
  const root = makeTemp("kiwi-staged-");
  writeTree(root, TOOLS);
  await lockProject(createContext({ cwd: root, env }));
  git(root, ["init", "-q", "-b", "main", "."], env);
  git(root, ["add", "-A"], env);
  git(root, ["commit", "-q", "-m", "init"], env);
  return root;
}

const relock = (root: string) => lockProject(createContext({ cwd: root, env }));
/** The check as a small repository gets it (git's status of the whole tree). */
const staged = (root: string, files?: string[]) => checkStaged({ cwd: root, env, cacheDir: env.KIWI_CACHE_DIR, now: Date.now, files });

// Both ways of asking git: its status of the whole tree (a small repository), and the staged diff
// with a status of the changed tools' working copies only (a large one; forced here).
describe.each([
  ["git's status of the whole tree", undefined],
  ["the staged diff, then the changed tools' working copies", 0],
])("kiwi check --staged (library), %s", (_how, scopedFrom) => {
  const stagedHere = (root: string, files?: string[]) => checkStaged({ cwd: root, env, cacheDir: env.KIWI_CACHE_DIR, now: Date.now, files, scopedFrom });
  test("finds nothing to do when no tool file is staged", async () => {
    const root = await lockedRepo();
    writeFileSync(join(root, "README.md"), "hi\n");
    git(root, ["add", "README.md"], env);
    expect(await stagedHere(root)).toEqual([]);
  });

  test("judges a staged change against the lockfile and names the changed file", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    git(root, ["add", ".ai/tools/hi.sh"], env);
    const [p] = await stagedHere(root);
    expect(p!.affected.changed).toEqual(["hi"]);
    expect(p!.check.ok).toBe(true);
    expect(p!.lock.status).toBe("stale");
    expect(p!.lock.diff!.changed.map((c) => [c.id, c.files.map((f) => [f.path, f.kind])])).toEqual([["hi", [["hi.sh", "changed"]]]]);
  });

  test("passes once the relocked lockfile is staged too", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    await relock(root);
    git(root, ["add", "-A"], env);
    const [p] = await stagedHere(root);
    expect([p!.lock.status, p!.lock.fromIndex]).toEqual(["fresh", false]);
  });

  test("reads the lockfile as staged when a relock was not added", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    git(root, ["add", ".ai/tools/hi.sh"], env);
    await relock(root);
    const [p] = await stagedHere(root);
    expect([p!.lock.status, p!.lock.fromIndex]).toEqual(["stale", true]);
  });

  test("re-judges the tools whose chain runs through a changed runtime", async () => {
    const root = await lockedRepo();
    const rt = join(root, ".ai/tools/rt.yaml");
    writeFileSync(rt, readFileSync(rt, "utf8").replace("version: 1.0.0", "version: 1.1.0"));
    git(root, ["add", ".ai/tools/rt.yaml"], env);
    const [p] = await stagedHere(root);
    expect(p!.affected.dependents).toEqual(["hi"]);
    const changed = p!.lock.diff!.changed.map((c) => [c.id, c.fields]);
    expect(changed).toEqual([["hi", ["executor"]], ["rt", ["version", "manifest_digest"]]]);
  });

  test("reports a deleted tool that the lockfile still lists", async () => {
    const root = await lockedRepo();
    git(root, ["rm", "-q", ".ai/tools/web.yaml"], env);
    const [p] = await stagedHere(root);
    expect(p!.affected.gone).toEqual(["web"]);
    expect(p!.lock.diff!.removed.map((c) => c.id)).toEqual(["web"]);
  });

  test("judges the entries a hand edit of the staged lockfile touched, beside the changed tool", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    await relock(root);
    const lockPath = join(root, "tool.lock.json");
    const relocked = readFileSync(lockPath, "utf8");
    const web = /"web": \{[^}]*"integrity": "(sha256:[0-9a-f]{64})"/.exec(relocked)!;
    writeFileSync(lockPath, relocked.replace(web[1]!, `sha256:${"0".repeat(64)}`));
    git(root, ["add", "-A"], env);
    const [p] = await stagedHere(root);
    // Its integrity is no longer the digest of its own manifest and files: invalid, as kiwi verify
    // says, not a stale lockfile whose diff for web shows nothing that changed.
    expect([p!.lock.status, p!.lock.message]).toEqual(["invalid", 'tool.lock.json: the entry for "web" disagrees with itself: its integrity is not the digest of its manifest and file list (edited by hand or merged badly)']);
  });

  test("a lockfile entry the staged lockfile changes consistently (a relock of a changed tool) is no hand edit", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/web.yaml"), "description: now described\n");
    await relock(root);
    git(root, ["add", "-A"], env);
    const [p] = await stagedHere(root);
    expect(p!.lock.status).toBe("fresh");
  });

  test("judges a tool of many files as a tool of few (through the stat cache, not around it)", async () => {
    const root = await lockedRepo();
    const files = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`.ai/tools/big/data/f${i}.txt`, `file ${i}\n`]));
    writeTree(root, { ...files, ".ai/tools/big/tool.yaml": "tool_id: big\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig:\n  entrypoint: run.sh\n", ".ai/tools/big/run.sh": "echo big\n" });
    await relock(root);
    git(root, ["add", "-A"], env);
    git(root, ["commit", "-q", "-m", "big"], env);
    appendFileSync(join(root, ".ai/tools/big/data/f7.txt"), "more\n");
    git(root, ["add", "-A"], env);
    const [stale] = await stagedHere(root);
    expect(stale!.lock.status).toBe("stale");
    expect(stale!.lock.diff!.changed.map((c) => [c.id, c.files.map((f) => [f.path, f.kind])])).toEqual([["big", [["data/f7.txt", "changed"]]]]);
    await relock(root);
    git(root, ["add", "-A"], env);
    const [fresh] = await stagedHere(root);
    expect(fresh!.lock.status).toBe("fresh");
  });

  test("reports a staged manifest that no longer parses as an error on its file", async () => {
    const root = await lockedRepo();
    writeFileSync(join(root, ".ai/tools/web.yaml"), "tool_id: [web\n");
    git(root, ["add", ".ai/tools/web.yaml"], env);
    const [p] = await stagedHere(root);
    expect(p!.check.ok).toBe(false);
    expect(p!.check.findings.map((f) => [f.file, f.rule])).toEqual([[".ai/tools/web.yaml", "parse/syntax"]]);
  });

  test("warns about changed tools whose working copy differs from what is staged", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo staged\n");
    git(root, ["add", ".ai/tools/hi.sh"], env);
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo not staged\n");
    const [p] = await stagedHere(root);
    expect(p!.unstaged).toEqual([".ai/tools/hi.sh"]);
  });

  test("warns about a tool whose entry the staged lockfile changes when its own change is not staged (relocked, only the lockfile added)", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo not staged\n");
    await relock(root);
    git(root, ["add", "tool.lock.json"], env);
    const [p] = await stagedHere(root);
    // The lockfile matches the working copy, which the commit does not carry.
    expect([p!.affected.changed, p!.lock.status, p!.unstaged]).toEqual([[], "fresh", [".ai/tools/hi.sh"]]);
    git(root, ["add", ".ai/tools/hi.sh"], env);
    const [added] = await stagedHere(root);
    expect([added!.affected.changed, added!.lock.status, added!.unstaged]).toEqual([["hi"], "fresh", []]);
  });

  test("warns about a staged file deleted from the working copy, whose tool was then judged removed", async () => {
    const root = await lockedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo staged\n");
    git(root, ["add", ".ai/tools/hi.sh"], env);
    rmSync(join(root, ".ai/tools/hi.sh"));
    const [p] = await stagedHere(root);
    // The commit records hi.sh; the working copy, which kiwi checks, has no hi: say so.
    expect([p!.affected.gone, p!.unstaged]).toEqual([["hi"], [".ai/tools/hi.sh"]]);
  });

  describe("the working copies the verdict reads", () => {
    /** A locked, committed repository with a folder tool of three files. */
    async function withFolderTool(): Promise<string> {
      const root = await lockedRepo();
      writeTree(root, { ".ai/tools/box/tool.yaml": "tool_id: box\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig:\n  entrypoint: run.sh\n", ".ai/tools/box/run.sh": "echo box\n", ".ai/tools/box/data/a.txt": "a\n" });
      await relock(root);
      git(root, ["add", "-A"], env);
      git(root, ["commit", "-q", "-m", "box"], env);
      return root;
    }

    test("a changed folder tool: another of its files differing from the index is warned about", async () => {
      const root = await withFolderTool();
      appendFileSync(join(root, ".ai/tools/box/run.sh"), "echo staged\n");
      git(root, ["add", ".ai/tools/box/run.sh"], env);
      appendFileSync(join(root, ".ai/tools/box/data/a.txt"), "not staged\n");
      const [p] = await stagedHere(root);
      expect([p!.affected.changed, p!.unstaged]).toEqual([["box"], [".ai/tools/box/data/a.txt"]]);
    });

    test("an unstaged edit of a tool the commit does not touch changes nothing, and is not asked for", async () => {
      const root = await withFolderTool();
      appendFileSync(join(root, ".ai/tools/hi.sh"), "echo staged\n");
      git(root, ["add", ".ai/tools/hi.sh"], env);
      const [before] = await stagedHere(root);
      appendFileSync(join(root, ".ai/tools/box/data/a.txt"), "not staged\n");
      const [after] = await stagedHere(root);
      expect([after!.affected.changed, after!.unstaged, after!.lock.status]).toEqual([["hi"], [], "stale"]);
      expect({ ...after!, remembered: false }).toEqual({ ...before!, remembered: false });
    });

    test("a new tool the lock index has never seen: its folder is read through git all the same", async () => {
      const root = await lockedRepo();
      writeTree(root, { ".ai/tools/fresh/tool.yaml": "tool_id: fresh\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig:\n  entrypoint: run.sh\n", ".ai/tools/fresh/run.sh": "echo one\n" });
      git(root, ["add", ".ai/tools/fresh"], env);
      appendFileSync(join(root, ".ai/tools/fresh/run.sh"), "echo two\n");
      const [p] = await stagedHere(root);
      expect([p!.affected.changed, p!.unstaged]).toEqual([["fresh"], [".ai/tools/fresh/run.sh"]]);
    });

    test("a tree that changed since the lock index: git is asked about the whole tools folder", async () => {
      const root = await lockedRepo();
      // At the lock, data.txt belonged to no tool; a manifest written since makes its folder one.
      writeTree(root, { ".ai/tools/pair/data.txt": "one\n" });
      await relock(root);
      git(root, ["add", "-A"], env);
      git(root, ["commit", "-q", "-m", "pair"], env);
      writeTree(root, { ".ai/tools/pair/tool.yaml": "tool_id: pair\ntool_type: script\nversion: 1.0.0\nexecutor: rt\nconfig:\n  entrypoint: run.sh\n", ".ai/tools/pair/run.sh": "echo pair\n" });
      appendFileSync(join(root, ".ai/tools/pair/data.txt"), "two\n");
      git(root, ["add", ".ai/tools/pair/data.txt"], env);
      appendFileSync(join(root, ".ai/tools/pair/data.txt"), "three\n");
      const [p] = await stagedHere(root);
      expect([p!.affected.changed, p!.unstaged]).toEqual([["pair"], [".ai/tools/pair/data.txt"]]);
    });

    test("a working copy changed after a remembered verdict is warned about: the memo is not replayed", async () => {
      const root = await withFolderTool();
      appendFileSync(join(root, ".ai/tools/box/run.sh"), "echo staged\n");
      git(root, ["add", ".ai/tools/box/run.sh"], env);
      // Checked a minute later, as a commit is: files younger than the racy margin are never remembered.
      const later = () => checkStaged({ cwd: root, env, cacheDir: env.KIWI_CACHE_DIR, now: () => Date.now() + 60_000, scopedFrom });
      const first = await later();
      const again = await later();
      expect([first[0]!.unstaged, again[0]!.remembered]).toEqual([[], true]);
      appendFileSync(join(root, ".ai/tools/box/data/a.txt"), "not staged\n");
      const [p] = await later();
      expect([p!.unstaged, p!.remembered]).toEqual([[".ai/tools/box/data/a.txt"], false]);
    });
  });

  test("says the lockfile is missing when the project has none", async () => {
    const root = await lockedRepo();
    git(root, ["rm", "-q", "tool.lock.json"], env);
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    git(root, ["add", ".ai/tools/hi.sh"], env);
    const [p] = await stagedHere(root);
    expect(p!.lock.status).toBe("missing");
  });

  test("takes the changed files from the command line outside any repository", async () => {
    const root = makeTemp("kiwi-nogit-");
    writeTree(root, TOOLS);
    await relock(root);
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    const [p] = await stagedHere(root, [".ai/tools/hi.sh", "NOTES.md"]);
    expect([p!.affected.changed, p!.lock.status, p!.unstaged]).toEqual([["hi"], "stale", []]);
  });

  test("adds git's staged deletions to the files it is given (pre-commit never passes them)", async () => {
    const root = await lockedRepo();
    git(root, ["rm", "-q", ".ai/tools/web.yaml"], env);
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    await relock(root);
    git(root, ["add", "-A"], env);
    git(root, ["reset", "-q", "--", "tool.lock.json"], env); // the relock is left unstaged
    const [p] = await stagedHere(root, [".ai/tools/hi.sh"]);
    expect(p!.affected.gone).toEqual(["web"]);
    expect(p!.lock.diff!.removed.map((c) => c.id)).toEqual(["web"]);
  });

  test("refuses to guess what is staged outside a repository", async () => {
    const root = makeTemp("kiwi-nogit-");
    writeTree(root, TOOLS);
    await expect(stagedHere(root)).rejects.toMatchObject({ code: "E_GIT" });
  });

  test("checks a nested project from the repository root", async () => {
    const root = makeTemp("kiwi-mono-");
    writeTree(join(root, "svc"), TOOLS);
    await lockProject(createContext({ cwd: join(root, "svc"), env }));
    git(root, ["init", "-q", "-b", "main", "."], env);
    git(root, ["add", "-A"], env);
    git(root, ["commit", "-q", "-m", "init"], env);
    rmSync(join(root, "svc/.ai/tools/web.yaml"));
    git(root, ["add", "-A"], env);
    const [p] = await stagedHere(root);
    expect(p!.root.endsWith("/svc")).toBe(true);
    expect(p!.lock.diff!.removed.map((c) => c.id)).toEqual(["web"]);
  });
});

describe("HEAD's lockfile, kept in the cache by the check of the commit that staged it", () => {
  /** An environment whose git logs each command to `log` before running the real git, and a fresh cache. */
  function loggedGit(): { env: Record<string, string>; log: string; cacheDir: string } {
    const dir = makeTemp("kiwi-git-log-");
    const log = join(dir, "log");
    const real = Bun.which("git")!;
    writeFileSync(join(dir, "git"), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
    writeFileSync(log, "");
    const cacheDir = join(makeTemp("kiwi-cache-"), "cache");
    return { env: { ...env, PATH: `${dir}:${gitEnv(home).PATH}`, KIWI_CACHE_DIR: cacheDir }, log, cacheDir };
  }
  const shows = (log: string) => readFileSync(log, "utf8").split("\n").filter((l) => l.startsWith("show "));
  const check = (root: string, e: Record<string, string>) => checkStaged({ cwd: root, env: e, cacheDir: e.KIWI_CACHE_DIR!, now: Date.now });
  const headId = (root: string) => git(root, ["rev-parse", "HEAD:tool.lock.json"], env).trim();
  const relockWith = (root: string, e: Record<string, string>) => lockProject(createContext({ cwd: root, env: e }));

  /** A repository (of `format`) whose HEAD's lockfile was staged and checked by the last commit, and a further change staged. */
  async function secondCommit(format: "sha1" | "sha256", g: ReturnType<typeof loggedGit>): Promise<string> {
    const root = makeTemp("kiwi-staged-");
    writeTree(root, TOOLS);
    await relockWith(root, g.env);
    git(root, ["init", "-q", `--object-format=${format}`, "-b", "main", "."], env);
    git(root, ["add", "-A"], env);
    git(root, ["commit", "-q", "-m", "init"], env);
    for (const line of ["echo one\n", "echo two\n"]) {
      appendFileSync(join(root, ".ai/tools/hi.sh"), line);
      await relockWith(root, g.env);
      git(root, ["add", "-A"], env);
      if (line === "echo one\n") {
        expect((await check(root, g.env))[0]!.lock.status).toBe("fresh");
        git(root, ["commit", "-q", "-m", "one"], env);
      }
    }
    writeFileSync(g.log, "");
    return root;
  }

  test.each(["sha1", "sha256"] as const)("reads it from the cache without asking git (%s repository), to the verdict git's copy gives", async (format) => {
    const g = loggedGit();
    const root = await secondCommit(format, g);
    expect(readdirSync(join(g.cacheDir, "check", "git-blobs"))).toContain(headId(root));
    const [kept] = await check(root, g.env);
    expect(shows(g.log)).toEqual([]);
    const asked = loggedGit();
    const [fromGit] = await check(root, asked.env);
    expect(shows(asked.log)).toEqual(["show HEAD:tool.lock.json"]);
    expect({ ...kept!, remembered: false }).toEqual({ ...fromGit!, remembered: false });
    expect([kept!.lock.status, kept!.affected.changed]).toEqual(["fresh", ["hi"]]);
  });

  test("asks git on a miss and keeps its answer for the next check", async () => {
    const g = loggedGit();
    const root = await secondCommit("sha1", g);
    rmSync(join(g.cacheDir, "check"), { recursive: true });
    await check(root, g.env);
    expect(shows(g.log)).toEqual(["show HEAD:tool.lock.json"]);
    expect(readFileSync(join(g.cacheDir, "check", "git-blobs", headId(root)), "utf8")).toBe(git(root, ["show", "HEAD:tool.lock.json"], env));
  });

  test.each([
    ["the staged lockfile planted under HEAD's id", (committed: string) => committed],
    ["a damaged copy", (committed: string) => committed.slice(0, -40)],
  ])("never trusts %s: git is asked and the hand edit is judged", async (_, plant) => {
    const g = loggedGit();
    const root = await lockedRepo();
    const lockPath = join(root, "tool.lock.json");
    const head = readFileSync(lockPath, "utf8");
    const web = /"web": \{[^}]*"integrity": "(sha256:[0-9a-f]{64})"/.exec(head)!;
    const edited = head.replace(web[1]!, `sha256:${"0".repeat(64)}`);
    writeFileSync(lockPath, edited);
    git(root, ["add", "tool.lock.json"], env);
    // Trusted, a copy of the staged lockfile as HEAD's would hide the edit: no entry would differ.
    const path = join(g.cacheDir, "check", "git-blobs", headId(root));
    writeTree(join(g.cacheDir, "check", "git-blobs"), { [headId(root)]: plant(edited) });
    const [p] = await check(root, g.env);
    expect(shows(g.log)).toEqual(["show HEAD:tool.lock.json"]);
    // Judged, the edited entry disagrees with itself.
    expect([p!.lock.status, p!.lock.message]).toEqual(["invalid", expect.stringContaining('the entry for "web" disagrees with itself')]);
    expect(readFileSync(path, "utf8")).toBe(head);
  });

  test("asks git nothing when the commit adds the lockfile (HEAD has none)", async () => {
    const g = loggedGit();
    const root = await lockedRepo();
    git(root, ["rm", "-q", "--cached", "tool.lock.json"], env);
    git(root, ["commit", "-q", "-m", "no lockfile"], env);
    git(root, ["add", "tool.lock.json"], env);
    const [p] = await check(root, g.env);
    expect(shows(g.log)).toEqual([]);
    expect([p!.lock.status, p!.lock.diff]).toEqual(["fresh", { added: [], removed: [], changed: [] }]);
  });
});

describe("the committed lockfile's entries, read whole or one at a time", () => {
  const check = (root: string, cacheDir: string) => checkStaged({ cwd: root, env: { ...env, KIWI_CACHE_DIR: cacheDir }, cacheDir, now: Date.now });
  const lockPath = (root: string) => join(root, "tool.lock.json");
  const changeHi = (root: string) => appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");

  test.each<[string, (root: string) => Promise<void> | void]>([
    ["a changed tool relocked and staged", async (root) => {
      changeHi(root);
      await relock(root);
      git(root, ["add", "-A"], env);
    }],
    ["a changed tool staged without a relock", (root) => {
      changeHi(root);
      git(root, ["add", "-A"], env);
    }],
    ["a hand edit of one entry staged", (root) => {
      const text = readFileSync(lockPath(root), "utf8");
      writeFileSync(lockPath(root), text.replace(/("web": \{[^}]*"integrity": "sha256:)[0-9a-f]{64}/, `$1${"0".repeat(64)}`));
      git(root, ["add", "-A"], env);
    }],
    ["a hand edit that is not kiwi's rendering staged", (root) => {
      writeFileSync(lockPath(root), readFileSync(lockPath(root), "utf8").replace('"version": "1.0.0"', '"version" :  "1.0.0"'));
      git(root, ["add", "-A"], env);
    }],
    ["a deleted tool staged with its relock", async (root) => {
      git(root, ["rm", "-q", ".ai/tools/web.yaml"], env);
      await relock(root);
      git(root, ["add", "-A"], env);
    }],
    ["a tool deleted, not relocked", (root) => {
      git(root, ["rm", "-q", ".ai/tools/hi.sh"], env);
    }],
    ["a relock left unstaged", async (root) => {
      changeHi(root);
      git(root, ["add", "-A"], env);
      await relock(root);
    }],
    ["a new tool named constructor, not locked", (root) => {
      writeFileSync(join(root, ".ai/tools/constructor.yaml"), "tool_id: constructor\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { method: GET, url: https://x.test/ }\n");
      git(root, ["add", "-A"], env);
    }],
  ])("%s: the same verdict either way", async (_, stage) => {
    const root = await lockedRepo();
    await stage(root);
    const cacheDir = join(makeTemp("kiwi-cache-"), "cache");
    // The first read of the text parses it whole (and remembers kiwi's rendering as checked); the second cuts it.
    const [whole] = await check(root, cacheDir);
    rmSync(join(cacheDir, "check", "staged"), { recursive: true, force: true });
    const [cut] = await check(root, cacheDir);
    expect(cut!.remembered).toBe(false);
    expect(cut).toEqual(whole!);
  });

  test("judges a new tool named constructor as added to the lockfile", async () => {
    const root = await lockedRepo();
    writeFileSync(join(root, ".ai/tools/constructor.yaml"), "tool_id: constructor\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { method: GET, url: https://x.test/ }\n");
    git(root, ["add", "-A"], env);
    const [p] = await staged(root);
    expect([p!.lock.status, p!.lock.diff!.added.map((c) => c.id), p!.lock.diff!.changed]).toEqual(["stale", ["constructor"], []]);
  });
});
