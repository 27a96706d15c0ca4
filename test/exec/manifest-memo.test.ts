// exec reads manifests through a content memo. A warm read must give exactly the document a fresh
// parse gives, integer/float identity and big integers included, since the parsed value is hashed
// and compared with the lockfile.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { parseManifestMemo } from "../../src/exec/chain-io.ts";
import { hashCanonical } from "../../src/integrity/digest.ts";
import { Float, survivesJsonParse } from "../../src/integrity/value.ts";
import { parseManifestText } from "../../src/manifest/forms.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const bytes = (text: string) => new TextEncoder().encode(text);

describe("parseManifestMemo", () => {
  test.each([
    ["a plain manifest", "tool_id: a\nversion: 1.0.0\nconfig: { n: 3, ratio: 0.5, on: true, list: [x, null] }\n"],
    ["integral floats and a big integer", "tool_id: b\nversion: 1.0.0\nconfig: { one: 1.0, big: 12345678901234567890, neg: -0.0, n: 1 }\n"],
    ["a __proto__ key kept as data", "tool_id: c\nversion: 1.0.0\nconfig: { __proto__: { polluted: true } }\n"],
  ])("%s reads back from the memo as the fresh parse did", (_name, text) => {
    const cache = makeTemp("kiwi-memo-");
    const fresh = parseManifestText(text, "yaml");
    if (fresh === "none") throw new Error("fixture is not a manifest");
    const cold = parseManifestMemo(bytes(text), "yaml", cache);
    const warm = parseManifestMemo(bytes(text), "yaml", cache);
    if (cold === "none" || warm === "none") throw new Error("expected documents");
    expect(warm.value).toEqual(fresh.value);
    expect(hashCanonical(warm.value)).toEqual(hashCanonical(fresh.value));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("a float stays a float and a big integer a bigint after a warm read", () => {
    const cache = join(makeTemp("kiwi-memo-"), "c");
    const text = "tool_id: f\nversion: 1.0.0\nconfig: { one: 1.0, big: 12345678901234567890 }\n";
    parseManifestMemo(bytes(text), "yaml", cache);
    const warm = parseManifestMemo(bytes(text), "yaml", cache);
    const config = (warm as unknown as { value: { config: Record<string, unknown> } }).value.config;
    expect(config.one).toBeInstanceOf(Float);
    expect(config.big).toBe(12345678901234567890n);
  });
});

describe("survivesJsonParse", () => {
  test.each([
    [{ a: [1, 0.5, "x", null, true] }, true],
    [{ a: [new Float(1)] }, false],
    [{ a: { b: 2n ** 60n } }, false],
    [new Float(-0), false],
  ])("%p -> %p", (value, expected) => {
    expect(survivesJsonParse(value as never)).toBe(expected);
  });
});
