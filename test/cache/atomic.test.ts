import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyFileHashedAtomic, writeFileAtomic } from "../../src/cache/atomic-io.ts";
import { faultsFromEnv } from "../../src/cache/faults-io.ts";
import { tempOwner, tempTarget } from "../../src/cache/cache-layout.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

describe("atomic writes", () => {
  test("replace the file whole and leave no temp file", () => {
    const dir = makeTemp();
    const path = join(dir, "tool.lock.json");
    writeFileSync(path, "old");
    writeFileAtomic(path, "new", { fsync: true });
    expect(readFileSync(path, "utf8")).toBe("new");
    expect(readdirSync(dir)).toEqual(["tool.lock.json"]);
  });

  test.each(["ENOSPC", "EIO", "EROFS"])("an injected %s mid-write keeps the old file and removes the temp file", (code) => {
    const dir = makeTemp();
    const path = join(dir, "tool.lock.json");
    writeFileSync(path, "old");
    const faults = faultsFromEnv({ KIWI_TEST_FAULT: `lockfile-write=${code}` });
    expect(() => writeFileAtomic(path, "x".repeat(1000), { faults, writePoint: "lockfile-write" })).toThrow(expect.objectContaining({ code }));
    expect(readFileSync(path, "utf8")).toBe("old");
    expect(readdirSync(dir)).toEqual(["tool.lock.json"]);
  });

  test.each([
    ["ASCII", "x".repeat(16 * 1024 * 3 + 7)],
    ["a surrogate pair on a chunk boundary", `${"a".repeat(16 * 1024 - 1)}😀${"b".repeat(16 * 1024)}é`],
    ["lone surrogates on and off a chunk boundary", `${"a".repeat(16 * 1024 - 1)}\ud83d${"b".repeat(100)}\ude00c\ud800`],
    ["three-byte characters throughout", "✓".repeat(40000)],
  ])("write long text (%s) as the bytes Buffer.from gives", (_, text) => {
    const dir = makeTemp();
    const path = join(dir, "blob");
    writeFileAtomic(path, text, { mode: 0o444 });
    expect(readFileSync(path).equals(Buffer.from(text))).toBe(true);
    expect(readdirSync(dir)).toEqual(["blob"]);
  });

  test("a fault on the n-th write only fires there", () => {
    const faults = faultsFromEnv({ KIWI_TEST_FAULT: "blob-write=ENOSPC@2" });
    const dir = makeTemp();
    writeFileAtomic(join(dir, "a"), "a", { faults, writePoint: "blob-write" });
    expect(() => writeFileAtomic(join(dir, "b"), "b", { faults, writePoint: "blob-write" })).toThrow(expect.objectContaining({ code: "ENOSPC" }));
    writeFileAtomic(join(dir, "c"), "c", { faults, writePoint: "blob-write" });
    expect(readdirSync(dir).sort()).toEqual(["a", "c"]);
  });

  test("a hashed copy renames only when the bytes match the expected digest", () => {
    const dir = makeTemp();
    const src = join(dir, "src");
    writeFileSync(src, "bytes");
    expect(copyFileHashedAtomic(src, join(dir, "ok"), sha256Hex("bytes"))).toEqual({ hex: sha256Hex("bytes"), ok: true });
    expect(copyFileHashedAtomic(src, join(dir, "bad"), sha256Hex("other"))).toEqual({ hex: sha256Hex("bytes"), ok: false });
    expect(existsSync(join(dir, "bad"))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(["ok", "src"]);
  });

  test("temp names carry the writer's pid and the target name", () => {
    expect(tempOwner(".tool.lock.json.tmp-1234-abc9")).toBe(1234);
    expect(tempTarget(".tool.lock.json.tmp-1234-abc9")).toBe("tool.lock.json");
    expect(tempOwner("tool.lock.json")).toBeUndefined();
  });
});
