import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KiwiError } from "../../src/errors.ts";
import { findWorkTree, gitText, movesWorkTree, resolveWorkTree, runGitAsync, runGitLargeAsync } from "../../src/hook/git-io.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";
import { git, gitEnv, makeRepo } from "./git.ts";

afterAll(cleanupTemps);

/** A committed repository with a nested folder, at its real path (git reports real paths). */
function repoWithFolder(): { repo: string; nested: string } {
  const repo = realpathSync(makeRepo());
  const nested = join(repo, "svc", ".ai", "tools");
  mkdirSync(nested, { recursive: true });
  git(repo, ["commit", "-q", "--allow-empty", "-m", "init"]);
  return { repo, nested };
}

describe("finding the work tree as git finds it", () => {
  test("agrees with git rev-parse at the top and below it", () => {
    const { repo, nested } = repoWithFolder();
    const env = gitEnv(repo);
    for (const cwd of [repo, nested]) {
      expect(findWorkTree(cwd, env)).toBe(resolveWorkTree(cwd, env));
    }
  });

  test.each([
    ["GIT_DIR is set", (repo: string) => ({ GIT_DIR: join(repo, ".git") })],
    ["GIT_WORK_TREE is set", (repo: string) => ({ GIT_WORK_TREE: repo })],
    ["GIT_CEILING_DIRECTORIES is set", (repo: string) => ({ GIT_CEILING_DIRECTORIES: repo })],
    ["a -c option names core.worktree", () => ({ GIT_CONFIG_PARAMETERS: "'core.worktree'='/elsewhere'" })],
  ])("leaves the answer to git when %s", (_, extra) => {
    const { repo, nested } = repoWithFolder();
    expect(findWorkTree(nested, { ...gitEnv(repo), ...extra(repo) })).toBeUndefined();
  });

  test("leaves the answer to git when the repository's config moves the work tree", () => {
    const { repo, nested } = repoWithFolder();
    git(repo, ["config", "core.worktree", repo]);
    expect(findWorkTree(nested, gitEnv(repo))).toBeUndefined();
  });

  test("leaves the answer to git in a linked work tree (.git is a file)", () => {
    const { repo } = repoWithFolder();
    const linked = join(realpathSync(makeTemp("kiwi-linked-")), "wt");
    git(repo, ["worktree", "add", "-q", linked]);
    expect(findWorkTree(linked, gitEnv(repo))).toBeUndefined();
    expect(resolveWorkTree(linked, gitEnv(repo))).toBe(linked);
  });

  test("leaves the answer to git inside the .git folder itself", () => {
    const { repo } = repoWithFolder();
    expect(findWorkTree(join(repo, ".git"), gitEnv(repo))).toBeUndefined();
  });
});

describe("reading whether a repository config moves the work tree", () => {
  test.each([
    ["git init's config", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n", false],
    ["core.worktree", "[core]\n\tworktree = /elsewhere\n", true],
    ["core.worktree in any case", "[Core]\n\tWorkTree = ../x\n", true],
    ["a bare repository", "[core]\n\tbare = true\n", true],
    ["a bare key without a value (true)", "[core]\n\tbare\n", true],
    ["an include", "[include]\n\tpath = other.config\n", true],
    ["a conditional include", '[includeIf "gitdir:~/work/"]\n\tpath = work.config\n', true],
    ["a key on the section line", "[core] worktree = /x\n", true],
    ["worktree outside core", '[remote "origin"]\n\tworktree = x\n', false],
    ["a comment", "[core]\n\t# worktree = /x\n\tbare = no ; not bare\n", false],
  ])("%s", (_, config, moves) => {
    expect(movesWorkTree(config)).toBe(moves);
  });
});

/** What a promise settles to, as data: the text, or the error's code and message. */
async function settled(run: Promise<string>): Promise<{ text: string } | { code: string; message: string }> {
  try {
    return { text: await run };
  } catch (error) {
    if (!(error instanceof KiwiError)) throw error;
    return { code: error.code, message: error.message };
  }
}

describe("running git for a large output through a file", () => {
  /** A repository whose HEAD holds `files` (name -> bytes). */
  function committed(files: Record<string, string | Uint8Array>): string {
    const repo = realpathSync(makeRepo());
    for (const [name, bytes] of Object.entries(files)) writeFileSync(join(repo, name), bytes);
    git(repo, ["add", "-A"]);
    git(repo, ["commit", "-q", "-m", "files"]);
    return repo;
  }
  const big = `${"x".repeat(99)}\n`.repeat(6000); // 600 KB: far more than a pipe holds

  test.each([
    ["a 600 KB file", big],
    ["an empty file", ""],
    ["UTF-8 text", "é-tool ✓ \u{1F95D}\n"],
    ["a leading byte-order mark (dropped, as from a pipe)", new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d, 0x0a])],
    ["bytes that are not UTF-8", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0xc3])],
    ["overlong, surrogate and cut-off UTF-8 sequences", new Uint8Array([0xc0, 0x80, 0x41, 0xed, 0xa0, 0x80, 0x42, 0xe2, 0x82, 0x43, 0xf0, 0x9f, 0x98])],
    ["a byte-order mark not at the start (kept)", new Uint8Array([0x41, 0xef, 0xbb, 0xbf, 0x42])],
  ])("gives the bytes git wrote for %s, as text what runGitAsync gives, and leaves nothing in its folder", async (_, bytes) => {
    const repo = committed({ "f.txt": bytes });
    const dir = join(makeTemp("kiwi-spill-"), "check", "staged");
    const viaFile = await runGitLargeAsync(repo, ["show", "HEAD:f.txt"], gitEnv(repo), join(dir, ".out.tmp"));
    expect(Buffer.from(viaFile).equals(typeof bytes === "string" ? Buffer.from(bytes) : bytes)).toBe(true);
    expect(gitText(viaFile)).toEqual(await runGitAsync(repo, ["show", "HEAD:f.txt"], gitEnv(repo)));
    expect(readdirSync(dir)).toEqual([]);
  });

  test.each([
    ["a path HEAD does not have", (repo: string) => repo, ["show", "HEAD:missing.txt"]],
    ["a repository without commits", () => realpathSync(makeRepo()), ["show", "HEAD:f.txt"]],
    ["a folder outside any repository", () => realpathSync(makeTemp("kiwi-norepo-")), ["show", "HEAD:f.txt"]],
  ])("fails as runGitAsync fails for %s (E_GIT)", async (_, where, args) => {
    const cwd = where(committed({ "f.txt": big }));
    const env = { ...gitEnv(cwd), GIT_CEILING_DIRECTORIES: join(cwd, "..") };
    const dir = join(makeTemp("kiwi-spill-"), "spill");
    const viaFile = await settled(runGitLargeAsync(cwd, args, env, join(dir, ".out.tmp")).then(gitText));
    expect(viaFile).toEqual(await settled(runGitAsync(cwd, args, env)));
    expect(viaFile).toMatchObject({ code: "E_GIT" });
    expect(readdirSync(dir)).toEqual([]);
  });

  test("fails as runGitAsync fails when git cannot be started", async () => {
    const repo = committed({ "f.txt": "x" });
    const env = { ...gitEnv(repo), PATH: makeTemp("kiwi-nogit-") };
    const viaFile = await settled(runGitLargeAsync(repo, ["show", "HEAD:f.txt"], env, join(makeTemp("kiwi-spill-"), ".out.tmp")).then(gitText));
    expect(viaFile).toEqual(await settled(runGitAsync(repo, ["show", "HEAD:f.txt"], env)));
    expect(viaFile).toMatchObject({ code: "E_GIT" });
  });

  test("reads through a pipe when the file cannot be made: its folder is a file, or the path is taken", async () => {
    const repo = committed({ "f.txt": big });
    const taken = join(makeTemp("kiwi-spill-"), "file");
    writeFileSync(taken, "not a folder");
    expect(gitText(await runGitLargeAsync(repo, ["show", "HEAD:f.txt"], gitEnv(repo), join(taken, ".out.tmp")))).toBe(big);
    expect(gitText(await runGitLargeAsync(repo, ["show", "HEAD:f.txt"], gitEnv(repo), taken))).toBe(big);
    expect(readFileSync(taken, "utf8")).toBe("not a folder");
  });
});
