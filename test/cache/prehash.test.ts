import { afterAll, describe, expect, test } from "bun:test";
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { startPrehash } from "../../src/cache/prehash-io.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";

afterAll(cleanupTemps);

describe("hashing on a worker thread during discovery", () => {
  test("hashes every regular file with the stat it had, skipping ignored folders and symlinks", async () => {
    const dir = writeTree(makeTemp(), {
      "a/main.py": "print(1)\n",
      "a/lib/x.bin": new Uint8Array(3 * 1024 * 1024).fill(7),
      "a/__pycache__/junk.pyc": "junk",
      "a/link.py": { symlink: "main.py" },
    });
    const results = await startPrehash(dir).results();
    expect([...results.keys()].sort()).toEqual([join(dir, "a/lib/x.bin"), join(dir, "a/main.py")]);
    const main = results.get(join(dir, "a/main.py"))!;
    const st = lstatSync(join(dir, "a/main.py"));
    expect(main).toEqual({ size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: sha256Hex("print(1)\n") });
    expect(results.get(join(dir, "a/lib/x.bin"))!.sha256).toBe(sha256Hex(new Uint8Array(3 * 1024 * 1024).fill(7)));
  });

  test("a missing folder gives no results rather than an error", async () => {
    expect((await startPrehash(join(makeTemp(), "nope")).results()).size).toBe(0);
  });
});
