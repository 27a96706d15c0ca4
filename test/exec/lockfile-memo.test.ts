// exec reads the lockfile through a memo: bytes one process checked in full are trusted as the same
// valid lockfile by the next; anything else (new bytes, hand-formatted text, a bad memo, an invalid
// lockfile) goes through the full check every time.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createContext } from "../../src/context.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { readLockfileMemo, rememberWrittenLockfile } from "../../src/exec/chain-io.ts";
import { parseLockfile } from "../../src/lockfile/parse.ts";
import { lockProject } from "../../src/ops/lock-io.ts";
import { thrownBy } from "../helpers/errors.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const TOOL = {
  ".ai/tools/hi.sh": "#!/bin/bash\n# ---\n# tool_id: hi\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\necho hi\n",
};

async function lockedProject() {
  const root = makeProject(TOOL);
  const cacheDir = join(makeTemp("kiwi-cache-"), "kiwi");
  await lockProject(createContext({ cwd: root, env: { PATH: process.env.PATH, HOME: makeTemp("kiwi-home-"), KIWI_CACHE_DIR: cacheDir } }));
  const memoDir = join(cacheDir, "exec", "lockfiles");
  const memos = () => (existsSync(memoDir) ? readdirSync(memoDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)) : []);
  return { root, cacheDir, lockPath: join(root, "tool.lock.json"), memos };
}

describe("readLockfileMemo", () => {
  test("the bytes kiwi lock wrote are remembered by the lock itself, and read back as the same Lockfile", async () => {
    const p = await lockedProject();
    const text = readFileSync(p.lockPath, "utf8");
    expect(p.memos()).toHaveLength(1);
    expect(readLockfileMemo(p.root, p.cacheDir)!.lock).toEqual(parseLockfile(text));
    expect(p.memos()).toHaveLength(1);
  });

  test("a lockfile kiwi wrote is checked once, then rebuilt from the memo as the same Lockfile", async () => {
    const p = await lockedProject();
    rmSync(join(p.cacheDir, "exec", "lockfiles"), { recursive: true, force: true });
    const first = readLockfileMemo(p.root, p.cacheDir)!;
    expect(p.memos()).toHaveLength(1);
    const second = readLockfileMemo(p.root, p.cacheDir)!;
    expect(second.lock).toEqual(parseLockfile(readFileSync(p.lockPath, "utf8")));
    expect(second).toEqual(first);
  });

  test("changed bytes are checked again: an invalid digest is refused although the old bytes were remembered", async () => {
    const p = await lockedProject();
    readLockfileMemo(p.root, p.cacheDir);
    const text = readFileSync(p.lockPath, "utf8");
    writeFileSync(p.lockPath, text.replace(/"integrity": "sha256:[0-9a-f]{64}"/, '"integrity": "sha256:abc"'));
    expect(thrownBy(() => readLockfileMemo(p.root, p.cacheDir)).code).toBe("E_LOCK_INVALID");
    expect(p.memos()).toHaveLength(1);
  });

  test("an invalid lockfile is refused every time and never remembered", async () => {
    const p = await lockedProject();
    const before = p.memos();
    writeFileSync(p.lockPath, readFileSync(p.lockPath, "utf8").replace('"lockfileVersion": 1', '"lockfileVersion": 99'));
    for (let i = 0; i < 2; i++) expect(thrownBy(() => readLockfileMemo(p.root, p.cacheDir)).code).toBe("E_LOCK_INVALID");
    expect(p.memos()).toEqual(before);
  });

  test("text kiwi did not render (reformatted by hand) is parsed losslessly and not remembered", async () => {
    const p = await lockedProject();
    const before = p.memos();
    const compact = JSON.stringify(JSON.parse(readFileSync(p.lockPath, "utf8")));
    writeFileSync(p.lockPath, compact);
    const read = readLockfileMemo(p.root, p.cacheDir)!;
    expect(read.lock).toEqual(parseLockfile(compact));
    expect(p.memos()).toEqual(before);
  });

  test("kiwi lock leaves a lockfile with MCP pins or remote records to its first reader's full check", async () => {
    const p = await lockedProject();
    rmSync(join(p.cacheDir, "exec", "lockfiles"), { recursive: true, force: true });
    const text = readFileSync(p.lockPath, "utf8");
    const lock = parseLockfile(text);
    rememberWrittenLockfile(p.cacheDir, text, { ...lock, mcp_servers: { srv: {} as never } });
    rememberWrittenLockfile(p.cacheDir, text, { ...lock, remote: {} });
    expect(p.memos()).toEqual([]);
    rememberWrittenLockfile(p.cacheDir, text, lock);
    expect(p.memos()).toHaveLength(1);
  });

  test("a damaged memo is ignored: the lockfile is checked in full and the memo written again", async () => {
    const p = await lockedProject();
    readLockfileMemo(p.root, p.cacheDir);
    const [memo] = p.memos();
    chmodSync(memo!, 0o644);
    writeFileSync(memo!, `${"0".repeat(64)}\nchecked`);
    expect(readLockfileMemo(p.root, p.cacheDir)!.lock).toEqual(parseLockfile(readFileSync(p.lockPath, "utf8")));
    expect(readFileSync(memo!, "utf8")).toBe(`${sha256Hex("checked")}\nchecked`);
  });
});
