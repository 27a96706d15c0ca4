// npm's package-lock as kiwi keeps it: entries read (and refused when not from a registry with an
// integrity), the package-lock rebuilt for npm ci, an installed tree's digest, a server's bin.
import { describe, expect, test } from "bun:test";
import { renderInstalledTree } from "../../src/deps/installed-tree.ts";
import { binLinks, deprecatedPackages, packageLockOf, parsePackageLock, serverBin } from "../../src/deps/npm-lock.ts";
import { thrownBy } from "../helpers/errors.ts";

const lockText = (packages: Record<string, unknown>) => JSON.stringify({ name: "x", lockfileVersion: 3, packages: { "": { dependencies: { a: "^1" } }, ...packages } });
const a = { version: "1.0.0", resolved: "https://registry.npmjs.org/a/-/a-1.0.0.tgz", integrity: "sha512-AAA", bin: { a: "bin/a.js" } };

describe("npm's package-lock entries", () => {
  test("are kept as npm wrote them, sorted by path, without the root", () => {
    const parsed = parsePackageLock(lockText({ "node_modules/b": { version: "2.0.0", integrity: "sha512-B" }, "node_modules/a": a }), "t");
    expect(Object.keys(parsed)).toEqual(["node_modules/a", "node_modules/b"]);
    expect(parsed["node_modules/a"]).toEqual(a);
  });

  test.each([
    [{ "node_modules/a": { version: "1.0.0", resolved: "git+ssh://git@example.com/a.git#abc" } }, "does not come from a registry tarball"],
    [{ "node_modules/a": { version: "1.0.0", resolved: "file:../a", integrity: "sha512-A" } }, "does not come from a registry tarball"],
    [{ "node_modules/a": { link: true, resolved: "../a" } }, "does not come from a registry tarball"],
    [{ "node_modules/a": { version: "1.0.0" } }, "does not come from a registry tarball"],
    [{ "node_modules/a": { version: "1.0.0", inBundle: true, resolved: "git+ssh://git@example.com/a.git#abc" } }, "does not come from a registry tarball"],
  ])("refuses what cannot be pinned by digest: %o", (packages, message) => {
    const error = thrownBy(() => parsePackageLock(lockText(packages), "t"));
    expect([error.code, error.message.includes(message)]).toEqual(["E_DEPS", true]);
  });

  test("a bundled package (bundleDependencies) comes inside its bundler's tarball, so it has no integrity of its own", () => {
    const inner = { version: "1.0.0", inBundle: true };
    const parsed = parsePackageLock(lockText({ "node_modules/a": { ...a, bundleDependencies: ["inner"] }, "node_modules/a/node_modules/inner": inner }), "t");
    expect(parsed["node_modules/a/node_modules/inner"]).toEqual(inner);
  });

  test("the rebuilt package-lock gives npm ci the locked entries under the requirements", () => {
    const text = packageLockOf({ requires: { a: "^1" }, packages: { "node_modules/a": a } });
    const doc = JSON.parse(text);
    expect(doc.lockfileVersion).toBe(3);
    expect(doc.packages[""].dependencies).toEqual({ a: "^1" });
    expect(doc.packages["node_modules/a"]).toEqual(a);
  });
});

test("a tree's digest does not depend on the order files were found in", () => {
  const f = (path: string) => ({ path, sha256: "0".repeat(64), is_executable: false });
  expect(renderInstalledTree("npm-tree", [f("node_modules/b/x"), f("node_modules/a/y")])).toBe(renderInstalledTree("npm-tree", [f("node_modules/a/y"), f("node_modules/b/x")]));
});

describe("an mcp_server package's bin", () => {
  const packages = { "node_modules/srv": { version: "1.0.0", integrity: "sha512-S", bin: { srv: "./dist/index.js" } }, "node_modules/two": { version: "1.0.0", integrity: "sha512-T", bin: { one: "a.js", two: "b.js" } }, "node_modules/bad": { version: "1.0.0", integrity: "sha512-B", bin: { bad: "../../evil.js" } } };
  test.each([
    ["srv", undefined, { path: "node_modules/srv/dist/index.js" }],
    ["two", "two", { path: "node_modules/two/b.js" }],
    ["two", undefined, { problem: "two has several bins (one, two): name one with config.bin" }],
    ["two", "three", { problem: "two has no bin named three (it has one, two)" }],
    ["bad", undefined, { problem: "bad's bin bad points outside the package (../../evil.js)" }],
    ["gone", undefined, { problem: "the lock has no package gone" }],
  ])("%s (bin %s)", (name, bin, expected) => {
    expect(serverBin({ packages }, name, bin)).toEqual(expected);
  });
});

test("deprecated packages are named with their version and the registry's message, on one line", () => {
  const packages = parsePackageLock(lockText({ "node_modules/a": { ...a, deprecated: "use b\r\n\u001b[2J  instead" }, "node_modules/@s/c": { ...a, version: "2.0.0", deprecated: "gone" }, "node_modules/d": a }), "t");
  expect(deprecatedPackages({ packages })).toEqual(["@s/c@2.0.0: gone", "a@1.0.0: use b [2J instead"]);
});

test("the .bin links npm would make point at installed files of their package; odd names and targets get none", () => {
  const packages = parsePackageLock(
    lockText({
      "node_modules/a": { ...a, bin: { a: "./bin/a.js", "../evil": "bin/a.js", up: "../b/x.js", gone: "bin/missing.js" } },
      "node_modules/@s/c": { ...a, bin: { a: "cli.js", c: "cli.js" } },
      "node_modules/a/node_modules/d": { ...a, bin: { d: "d.js" } },
    }),
    "t",
  );
  const files = new Set(["node_modules/a/bin/a.js", "node_modules/@s/c/cli.js", "node_modules/a/node_modules/d/d.js", "node_modules/b/x.js"]);
  expect(binLinks({ packages }, files)).toEqual([
    { path: "node_modules/.bin/a", target: "../@s/c/cli.js" },
    { path: "node_modules/.bin/c", target: "../@s/c/cli.js" },
    { path: "node_modules/a/node_modules/.bin/d", target: "../d/d.js" },
  ]);
});
