import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobPath, checkBlob, getVerifiedBlobPath, indexPath, openStore, putBlobFromFile, readToolEntry, writeToolEntry } from "../../src/cache/store-io.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { hashToolIntegrity } from "../../src/integrity/tool.ts";
import { Float } from "../../src/integrity/value.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

function setup(content = "print('hi')\n") {
  const store = openStore(join(makeTemp("kiwi-cache-"), "cache"));
  const src = join(makeTemp(), "main.py");
  writeFileSync(src, content);
  return { store, src, hex: sha256Hex(content) };
}

/** Overwrites a blob's bytes in place (as a stray process or an attacker would). */
function tamper(path: string, bytes: string) {
  chmodSync(path, 0o644);
  writeFileSync(path, bytes);
}

describe("the content-addressed store", () => {
  test("stores a blob under blobs/<2 hex>/<62 hex>, read-only, with the exact bytes", () => {
    const { store, src, hex } = setup();
    expect(putBlobFromFile(store, src, hex, "main.py")).toEqual({ status: "stored" });
    const path = blobPath(store, hex);
    expect(path).toBe(join(store.dir, "blobs", hex.slice(0, 2), hex.slice(2)));
    expect(readFileSync(path, "utf8")).toBe("print('hi')\n");
    expect(statSync(path).mode & 0o777).toBe(0o444);
    expect(readdirSync(join(store.dir, "blobs", hex.slice(0, 2)))).toEqual([hex.slice(2)]);
  });

  test("re-verifies a blob that already exists instead of trusting it", () => {
    const { store, src, hex } = setup();
    putBlobFromFile(store, src, hex, "main.py");
    expect(putBlobFromFile(store, src, hex, "main.py")).toEqual({ status: "present" });
    tamper(blobPath(store, hex), "evil");
    const again = putBlobFromFile(store, src, hex, "main.py");
    expect(again.status).toBe("stored");
    expect(again.evicted).toMatchObject({ kind: "blob", expected: hex, actual: sha256Hex("evil") });
    expect(readFileSync(blobPath(store, hex), "utf8")).toBe("print('hi')\n");
    expect(readFileSync(again.evicted!.quarantined, "utf8")).toBe("evil");
  });

  test("never serves a blob replaced with other bytes: it is evicted and reported", () => {
    const { store, src, hex } = setup();
    putBlobFromFile(store, src, hex, "main.py");
    tamper(blobPath(store, hex), "other bytes");
    expect(() => getVerifiedBlobPath(store, hex)).toThrow(expect.objectContaining({ code: "E_CACHE_CORRUPT", message: expect.stringContaining(`sha256:${sha256Hex("other bytes").slice(0, 12)}`) }));
    expect(existsSync(blobPath(store, hex))).toBe(false);
    expect(() => getVerifiedBlobPath(store, hex)).toThrow(expect.objectContaining({ code: "E_CACHE_MISSING", hint: 'run "kiwi install"' }));
  });

  test("refuses to store a source that no longer hashes to the locked digest, leaving nothing behind", () => {
    const { store, src } = setup();
    const locked = sha256Hex("the locked bytes");
    expect(() => putBlobFromFile(store, src, locked, ".ai/tools/dp/main.py")).toThrow(expect.objectContaining({ code: "E_INTEGRITY_MISMATCH", message: expect.stringContaining(".ai/tools/dp/main.py") }));
    expect(checkBlob(store, locked)).toBe("missing");
    expect(readdirSync(join(store.dir, "blobs", locked.slice(0, 2)))).toEqual([]);
  });

  test("tool index entries hold the canonical integrity text and read back losslessly", () => {
    const { store } = setup();
    const input = { tool_id: "t", version: "1.0.0", manifest: { timeout: new Float(1), big: 12345678901234567890n }, files: [] };
    const { canonical, hex } = hashToolIntegrity(input);
    writeToolEntry(store, hex, canonical);
    expect(readFileSync(indexPath(store, hex), "utf8")).toBe(canonical);
    const back = readToolEntry(store, hex)!;
    expect(back.manifest).toEqual({ timeout: new Float(1), big: 12345678901234567890n });
    expect(readToolEntry(store, sha256Hex("absent"))).toBeUndefined();
  });

  test("a corrupt tool index entry is evicted, not read", () => {
    const { store } = setup();
    const { canonical, hex } = hashToolIntegrity({ tool_id: "t", version: "1", manifest: {}, files: [] });
    writeToolEntry(store, hex, canonical);
    tamper(indexPath(store, hex), canonical.replace('"t"', '"u"'));
    expect(() => readToolEntry(store, hex)).toThrow(expect.objectContaining({ code: "E_CACHE_CORRUPT" }));
    expect(readToolEntry(store, hex)).toBeUndefined();
    writeToolEntry(store, hex, canonical);
    expect(readToolEntry(store, hex)?.tool_id).toBe("t");
  });
});
