import { describe, expect, test } from "bun:test";
import { resolveLockedChain } from "../../src/lockfile/locked-chain.ts";
import { entry, lockOf } from "./helpers.ts";

const lock = lockOf({
  dp: entry("dp", {}, [], { executor: "python_runtime@1.0.0" }),
  python_runtime: entry("python_runtime", {}, [], { executor: "subprocess@1.0.0" }),
  subprocess: entry("subprocess", {}, []),
  loop_a: entry("loop_a", {}, [], { executor: "loop_b@1.0.0" }),
  loop_b: entry("loop_b", {}, [], { executor: "loop_a@1.0.0" }),
});

describe("the locked chain is derivable from the lockfile", () => {
  test("follows executors down to the primitive", () => {
    expect(resolveLockedChain(lock, "dp")).toEqual(["dp@1.0.0", "python_runtime@1.0.0", "subprocess@1.0.0"]);
  });

  test("a primitive's chain is itself", () => {
    expect(resolveLockedChain(lock, "subprocess")).toEqual(["subprocess@1.0.0"]);
  });

  test("a tool missing from the lockfile is stale", () => {
    expect(() => resolveLockedChain(lock, "nope")).toThrow(expect.objectContaining({ code: "E_LOCK_STALE" }));
  });

  test("a loop is a chain error naming the path", () => {
    expect(() => resolveLockedChain(lock, "loop_a")).toThrow(expect.objectContaining({ code: "E_CHAIN", message: expect.stringContaining("loop_a@1.0.0 -> loop_b@1.0.0 -> loop_a@1.0.0") }));
  });
});
