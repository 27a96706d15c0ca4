// An installed tree against the packages its lock entry lists (treePackageMismatch): what a bad
// merge (one side's tree, the other's packages) looks like, and what is not one.
import { describe, expect, test } from "bun:test";
import { treePackageMismatch } from "../../src/deps/installed-tree.ts";
import type { FileEntry } from "../../src/integrity/tool.ts";

/** A tree of files whose text is given; sha256 stands in for the text (readText looks it up). */
function tree(files: Record<string, string>): { files: FileEntry[]; readText: (f: FileEntry) => string } {
  const entries = Object.keys(files).map((path) => ({ path, sha256: path, is_executable: false }));
  return { files: entries, readText: (f) => files[f.sha256]! };
}
const pkg = (version: string) => JSON.stringify({ name: "x", version });

describe("an installed npm tree", () => {
  const locked = { packages: { "node_modules/a": { version: "1.0.0" }, "node_modules/a/node_modules/b": { version: "2.0.0" }, "node_modules/@s/c": { version: "3.0.0" }, "node_modules/c-darwin": { version: "1.0.0", optional: true } } };

  test("agrees when every listed package is there at its version; a platform's optional package may be absent", () => {
    const t = tree({ "node_modules/a/package.json": pkg("1.0.0"), "node_modules/a/lib/package.json": '{"type":"module"}', "node_modules/a/node_modules/b/package.json": pkg("2.0.0"), "node_modules/@s/c/package.json": pkg("3.0.0"), "node_modules/a/test/fixtures/node_modules/z/package.json": pkg("9.9.9") });
    expect(treePackageMismatch("npm-tree", t.files, locked, t.readText)).toEqual([]);
  });

  test("names a package at another version, one missing, and one the lock does not list", () => {
    const t = tree({ "node_modules/a/package.json": pkg("1.1.0"), "node_modules/@s/c/package.json": pkg("3.0.0"), "node_modules/d/package.json": pkg("1.0.0") });
    expect(treePackageMismatch("npm-tree", t.files, locked, t.readText)).toEqual(["it holds a 1.1.0, not 1.0.0", "b 2.0.0 is not in it", "it holds d, which the lock does not list"]);
  });
});

describe("an installed Python tree", () => {
  const locked = { packages: { "kiwi-greeting": { version: "1.0.0" }, "zope-thing": { version: "2.0" } } };
  const meta = (version: string) => `Metadata-Version: 2.1\nName: x\nVersion: ${version}\n`;

  test("agrees by each distribution's METADATA, names normalised as pip does", () => {
    const t = tree({ "site-packages/kiwi_greeting-1.0.0.dist-info/METADATA": meta("1.0.0"), "site-packages/zope.thing-2.0.dist-info/METADATA": meta("2.0") });
    expect(treePackageMismatch("pypi-tree", t.files, locked, t.readText)).toEqual([]);
  });

  test("names a distribution at another version", () => {
    const t = tree({ "site-packages/kiwi_greeting-1.1.0.dist-info/METADATA": meta("1.1.0"), "site-packages/zope_thing-2.0.dist-info/METADATA": meta("2.0") });
    expect(treePackageMismatch("pypi-tree", t.files, locked, t.readText)).toEqual(["it holds kiwi-greeting 1.1.0, not 1.0.0"]);
  });
});
