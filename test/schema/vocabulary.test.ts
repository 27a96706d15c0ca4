// The formats' vocabulary: the version range grammar executors and npm requirements share.
import { describe, expect, test } from "bun:test";
import { isSemverRange } from "../../src/schema/vocabulary.ts";

describe("isSemverRange", () => {
  test.each(["^1.4", "~1.2.3", ">=1 <2", ">= 1.2.0 < 2", "1.x", "*", "1.0.0 - 2.0.0", "^1 || ^2", "2.0.0-rc.1", ""])("accepts %s", (range) => {
    expect(isSemverRange(range)).toBe(true);
  });
  test.each(["^^1", "garbage", "1.2.3.4", ">=", "^1 ||| 2", "01.2.3", "latest", "next", "beta"])("rejects %s", (range) => {
    expect(isSemverRange(range)).toBe(false);
  });
});
