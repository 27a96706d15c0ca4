// npm's failures as kiwi reports them (npmError), from npm's own stderr: which package, and whose.
import { describe, expect, test } from "bun:test";
import { npmError } from "../../src/deps/npm-io.ts";

const E404 = `npm error code E404
npm error 404 Not Found - GET http://127.0.0.1:1/ghost-dep - Not found
npm error 404
npm error 404  'ghost-dep@^1.0.0' is not in this registry.
`;
const ETARGET = (spec: string) => `npm error code ETARGET
npm error notarget No matching version found for ${spec}.
npm error notarget In most cases you or one of your dependencies are requesting
`;

describe("npmError", () => {
  test.each([
    ["a missing dependency of the only requirement", E404, { "needs-ghost": "1.0.0" }, "t: cannot get needs-ghost@1.0.0: its dependency ghost-dep@^1.0.0 is not in the registry"],
    ["a missing dependency of one of several requirements", E404, { "needs-ghost": "1.0.0", other: "^2" }, "t: cannot get its packages: its dependency ghost-dep@^1.0.0 is not in the registry"],
    ["a dependency's range no version matches", ETARGET("old-dep@^5.0.0"), { "needs-newer": "1.0.0" }, "t: cannot get needs-newer@1.0.0: no version of its dependency old-dep@^5.0.0 matches"],
    ["the requirement itself, among several", ETARGET("@s/pad@9.0.0"), { "@s/pad": "9.0.0", other: "^2" }, "t: cannot get @s/pad@9.0.0: no version of @s/pad@9.0.0 matches"],
    ["a requirement not in the registry", E404.replaceAll("ghost-dep", "nothere").replace("^1.0.0", "1.0.0"), { nothere: "1.0.0" }, "t: cannot get nothere@1.0.0: nothere is not in the registry"],
    // An alias's package is the requirement, though npm names it by the package, not the alias.
    ["an alias's package not in the registry", E404.replaceAll("ghost-dep", "nothere").replace("^1.0.0", "1.0.0"), { x: "npm:nothere@1.0.0", other: "^2" }, "t: cannot get x@npm:nothere@1.0.0: nothere (which x installs) is not in the registry"],
    ["an alias's version no version matches", ETARGET("left-pad@9.0.0"), { pad: "npm:left-pad@9.0.0" }, "t: cannot get pad@npm:left-pad@9.0.0: no version of pad@npm:left-pad@9.0.0 matches"],
  ])("%s", (_what, stderr, dependencies, message) => {
    const e = npmError("t", stderr, 1, dependencies);
    expect([e.code, e.message]).toEqual(["E_DEPS", message]);
  });

  test("a dependency's failure says it is no fault of the manifest's requirement", () => {
    expect(npmError("t", E404, 1, { "needs-ghost": "1.0.0" }).hint).toContain("a package the tool requires needs a version the registry does not have");
  });
});
