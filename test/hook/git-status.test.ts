import { afterAll, describe, expect, test } from "bun:test";
import { parseGitStatus, parseStagedDiff, scopedStatus } from "../../src/hook/git-status.ts";
import { git, makeRepo } from "./git.ts";
import { cleanupTemps } from "../helpers/tree.ts";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

afterAll(cleanupTemps);

/**
 * A committed repository with every kind of change: x staged and changed again, y deleted from the
 * index, new added, "a b.txt", lock.json and z changed but not staged.
 */
function repositoryWithChanges(): string {
  const repo = makeRepo();
  for (const name of ["a b.txt", "lock.json", "x", "y", "z"]) writeFileSync(join(repo, name), `${name}\n`);
  git(repo, ["add", "."]);
  git(repo, ["commit", "-q", "-m", "init"]);
  appendFileSync(join(repo, "x"), "1\n");
  git(repo, ["add", "x"]);
  appendFileSync(join(repo, "x"), "2\n");
  git(repo, ["rm", "-q", "--cached", "y"]);
  writeFileSync(join(repo, "new"), "n\n");
  git(repo, ["add", "new"]);
  for (const name of ["a b.txt", "lock.json", "z"]) appendFileSync(join(repo, name), "m\n");
  return repo;
}

const H = (c: string) => c.repeat(40);
const Z = H("0");

describe("reading git status --porcelain=v2 -z", () => {
  test.each([
    ["a staged modification", `1 M. N... 100644 100644 100644 ${H("a")} ${H("b")} x.yaml\0`, { staged: ["x.yaml"], deleted: [], unstaged: [] }],
    ["a modification staged and changed again", `1 MM N... 100644 100644 100644 ${H("a")} ${H("b")} x.yaml\0`, { staged: ["x.yaml"], deleted: [], unstaged: ["x.yaml"] }],
    ["an unstaged modification only", `1 .M N... 100644 100644 100644 ${H("a")} ${H("a")} x.yaml\0`, { staged: [], deleted: [], unstaged: ["x.yaml"] }],
    ["a new file", `1 A. N... 000000 100644 100644 ${Z} ${H("b")} new.sh\0`, { staged: ["new.sh"], deleted: [], unstaged: [] }],
    ["a staged deletion", `1 D. N... 100644 000000 000000 ${H("a")} ${Z} gone.py\0`, { staged: ["gone.py"], deleted: ["gone.py"], unstaged: [] }],
    ["a type change", `1 T. N... 100644 120000 120000 ${H("a")} ${H("b")} link\0`, { staged: ["link"], deleted: [], unstaged: [] }],
    ["a path with spaces", `1 M. N... 100644 100644 100644 ${H("a")} ${H("b")} a dir/my tool.yaml\0`, { staged: ["a dir/my tool.yaml"], deleted: [], unstaged: [] }],
    ["an unmerged path (never staged; unstaged, as git diff lists it)", `u UU N... 100644 100644 100644 100644 ${H("a")} ${H("b")} ${H("c")} c.yaml\0`, { staged: [], deleted: [], unstaged: ["c.yaml"] }],
    ["a rename record and its original path", `2 R. N... 100644 100644 100644 ${H("a")} ${H("a")} R100 new.yaml\0old.yaml\0`, { staged: ["new.yaml"], deleted: [], unstaged: [] }],
    ["untracked and ignored lines", "? u.txt\0! i.txt\0", { staged: [], deleted: [], unstaged: [] }],
    ["nothing", "", { staged: [], deleted: [], unstaged: [] }],
  ])("%s", (_, text, want) => {
    const status = parseGitStatus(text);
    expect({ staged: status.staged, deleted: status.deleted, unstaged: [...status.unstaged] }).toEqual(want);
  });

  test("keeps the HEAD and index blob ids of each path", () => {
    const status = parseGitStatus(`1 MM N... 100644 100644 100644 ${H("a")} ${H("b")} tool.lock.json\0u UU N... 100644 100644 100644 100644 ${H("a")} ${H("b")} ${H("c")} c.yaml\0`);
    expect(status.entries.get("tool.lock.json")).toEqual({ x: "M", y: "M", head: H("a"), index: H("b") });
    expect(status.entries.get("c.yaml")).toEqual({ x: "U", y: "U" });
  });

  test("lists what git diff --cached and git diff list, in a real repository", () => {
    const repo = repositoryWithChanges();
    const status = parseGitStatus(git(repo, ["status", "--porcelain=v2", "-z", "--untracked-files=no", "--no-renames"]));
    const z = (text: string) => text.split("\0").filter((p) => p !== "");
    expect(status.staged).toEqual(z(git(repo, ["diff", "--cached", "--name-only", "-z", "--no-renames", "--diff-filter=ACMRTD"])));
    expect([...status.unstaged]).toEqual(z(git(repo, ["diff", "--name-only", "-z", "--no-renames"])));
    expect(status.deleted).toEqual(["y"]);
  });
});

describe("reading git diff --cached --raw -z, and a status of some paths beside it", () => {
  test.each([
    ["a staged modification", `:100644 100644 ${H("a")} ${H("b")} M\0x.yaml\0`, { staged: ["x.yaml"], deleted: [], unstaged: [] }],
    ["a new file and a deletion", `:000000 100644 ${Z} ${H("b")} A\0new.sh\0:100644 000000 ${H("a")} ${Z} D\0gone.py\0`, { staged: ["new.sh", "gone.py"], deleted: ["gone.py"], unstaged: [] }],
    ["a path with spaces", `:100644 100644 ${H("a")} ${H("b")} M\0a dir/my tool.yaml\0`, { staged: ["a dir/my tool.yaml"], deleted: [], unstaged: [] }],
    ["an unmerged path (never staged; unstaged, as in the full status)", `:000000 000000 ${Z} ${Z} U\0c.yaml\0`, { staged: [], deleted: [], unstaged: ["c.yaml"] }],
    ["a damaged record (skipped)", `:100644 ${H("a")} M\0x\0`, { staged: [], deleted: [], unstaged: [] }],
    ["nothing", "", { staged: [], deleted: [], unstaged: [] }],
  ])("%s", (_, text, want) => {
    const status = parseStagedDiff(text);
    expect({ staged: status.staged, deleted: status.deleted, unstaged: [...status.unstaged] }).toEqual(want);
  });

  test("agrees with the full status on what is staged, and on the working copies it was asked about", () => {
    const repo = repositoryWithChanges();
    const full = parseGitStatus(git(repo, ["status", "--porcelain=v2", "-z", "--untracked-files=no", "--no-renames"]));
    const staged = parseStagedDiff(git(repo, ["diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev"]));
    expect([staged.staged, staged.deleted]).toEqual([full.staged, full.deleted]);
    for (const path of staged.staged) expect([path, staged.entries.get(path)!.head, staged.entries.get(path)!.index]).toEqual([path, full.entries.get(path)!.head, full.entries.get(path)!.index]);
    const asked = ["x", "a b.txt", "lock.json"];
    const scoped = scopedStatus(staged, parseGitStatus(git(repo, ["--literal-pathspecs", "status", "--porcelain=v2", "-z", "--untracked-files=no", "--no-renames", "--", ...asked.map((p) => join(repo, p))])));
    expect([...scoped.unstaged].sort()).toEqual([...full.unstaged].filter((p) => asked.includes(p)).sort());
    expect(scoped.entries.get("lock.json")).toEqual(full.entries.get("lock.json"));
    expect(scoped.staged).toEqual(full.staged);
  });
});
