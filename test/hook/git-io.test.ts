import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { findWorkTree, movesWorkTree, resolveWorkTree } from "../../src/hook/git-io.ts";
import { makeTemp } from "../helpers/tree.ts";
import { git, gitEnv, makeRepo } from "./git.ts";

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
