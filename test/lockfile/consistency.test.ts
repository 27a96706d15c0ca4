import { describe, expect, test } from "bun:test";
import { formatDigest, sha256Hex } from "../../src/integrity/digest.ts";
import type { CanonicalValue } from "../../src/integrity/value.ts";
import { checkEntryConsistency } from "../../src/lockfile/consistency.ts";
import type { LockedTool } from "../../src/schema/lockfile.ts";
import { entry, file } from "./helpers.ts";

const manifest = { tool_id: "dp", config: { entrypoint: "main.py" } };
const good = entry("dp", manifest, [file("main.py", "print(1)", true)]);

describe("detecting a hand-edited lockfile entry", () => {
  test.each([
    ["an untouched entry", good, manifest, "consistent"],
    ["a file digest edited by hand", { ...good, files: [file("main.py", "print(2)", true)] }, manifest, "inconsistent"],
    ["a flipped is_executable", { ...good, files: [file("main.py", "print(1)", false)] }, manifest, "inconsistent"],
    ["a file removed by hand", { ...good, files: [] }, manifest, "inconsistent"],
    ["an integrity edited by hand", { ...good, integrity: formatDigest(sha256Hex("other")) }, manifest, "inconsistent"],
    ["a manifest digest edited by hand", { ...good, manifest_digest: formatDigest(sha256Hex("other")) }, manifest, "inconsistent"],
    ["a version edited by hand", { ...good, version: "9.9.9" }, manifest, "inconsistent"],
    ["a tree whose manifest changed since locking", good, { ...manifest, extra: true }, "unknown"],
  ] as [string, LockedTool, CanonicalValue, string][])("%s is %s", (_what, e, m, expected) => {
    expect(checkEntryConsistency("dp", e, m)).toBe(expected as never);
  });
});
