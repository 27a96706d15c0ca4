// kiwi hash's use case over real files: a JSON document and an integrity input hashed as the
// pure functions hash them, read from disk exactly as written.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createContext } from "../../src/context.ts";
import { formatDigest, hashCanonical } from "../../src/integrity/digest.ts";
import { parseHashInput } from "../../src/lockfile/hash-inputs.ts";
import { hashIntegrityInput, hashJsonInput } from "../../src/ops/integrity-io.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";

afterAll(cleanupTemps);

describe("kiwi hash json and integrity over files", () => {
  test("a JSON file's canonical text and digest, big integers exact", async () => {
    const dir = makeTemp();
    writeTree(dir, { "doc.json": '{"b": 12345678901234567890, "a": [1.5, "x"]}' });
    const ctx = createContext({ cwd: dir, env: { HOME: dir, KIWI_CACHE_DIR: join(dir, "cache") } });
    const result = await hashJsonInput(ctx, "doc.json");
    expect(result.canonical).toBe('{"a":[1.5,"x"],"b":12345678901234567890}');
    expect(result.digest).toBe(formatDigest(hashCanonical(parseHashInput('{"b": 12345678901234567890, "a": [1.5, "x"]}', "doc.json")).hex));
  });

  test("an integrity input that is not the vector shape is refused, naming the file", async () => {
    const dir = makeTemp();
    writeTree(dir, { "in.json": '{"tool_id": "a"}' });
    const ctx = createContext({ cwd: dir, env: { HOME: dir, KIWI_CACHE_DIR: join(dir, "cache") } });
    const error = await hashIntegrityInput(ctx, "in.json").then(() => undefined, (e: Error) => e);
    expect(error?.message).toContain("in.json");
  });

  test("a missing file is a coded error, not a stack trace", async () => {
    const dir = makeTemp();
    const ctx = createContext({ cwd: dir, env: { HOME: dir, KIWI_CACHE_DIR: join(dir, "cache") } });
    const error = await hashJsonInput(ctx, "nope.json").then(() => undefined, (e: { code?: string }) => e);
    expect(error?.code).toMatch(/^E_/);
  });
});
