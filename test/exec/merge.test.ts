import { describe, expect, test } from "bun:test";
import { mergeConfigs } from "../../src/exec/merge.ts";

describe("config merges down the chain (root first, child overrides)", () => {
  test("worked example: subprocess -> python_runtime -> script", () => {
    const runtime = { command: "python3", args: ["-B", "-u"], env: { PYTHONUNBUFFERED: "1", LANG: "C" } };
    const script = { entrypoint: "main.py", args: ["--city", "{city}"], env: { LANG: "C.UTF-8", API_TOKEN: "${API_TOKEN}" }, secrets: ["API_TOKEN"] };
    expect(mergeConfigs([{}, runtime, script])).toEqual({
      command: "python3",
      args: ["-B", "-u", "--city", "{city}"],
      env: { PYTHONUNBUFFERED: "1", LANG: "C.UTF-8", API_TOKEN: "${API_TOKEN}" },
      entrypoint: "main.py",
      secrets: ["API_TOKEN"],
    });
  });

  test.each([
    ["a scalar is replaced", { timeout: 10 }, { timeout: 5 }, { timeout: 5 }],
    ["maps merge recursively", { headers: { a: "1", b: { x: 1 } } }, { headers: { b: { y: 2 } } }, { headers: { a: "1", b: { x: 1, y: 2 } } }],
    ["null removes a key", { env: { A: "1", B: "2" } }, { env: { B: null } }, { env: { A: "1" } }],
    ["lists other than args are replaced", { allow_redirect_hosts: ["a"] }, { allow_redirect_hosts: ["b"] }, { allow_redirect_hosts: ["b"] }],
    ["args concatenate, parent first", { args: ["-x"] }, { args: ["-y"] }, { args: ["-x", "-y"] }],
    ["secrets are a union", { secrets: ["A", "B"] }, { secrets: ["B", "C"] }, { secrets: ["A", "B", "C"] }],
    ["body is replaced whole", { body: { a: 1, b: 2 } }, { body: { c: 3 } }, { body: { c: 3 } }],
    ["a map replaces a scalar", { query: "x" }, { query: { a: "1" } }, { query: { a: "1" } }],
  ])("%s", (_name, parent, child, expected) => {
    expect(mergeConfigs([parent, child])).toEqual(expected);
  });

  test("merging never mutates its inputs", () => {
    const parent = { env: { A: "1" }, args: ["-x"] };
    mergeConfigs([parent, { env: { B: "2" }, args: ["-y"] }]);
    expect(parent).toEqual({ env: { A: "1" }, args: ["-x"] });
  });
});
