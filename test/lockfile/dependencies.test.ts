// The dependencies section of tool.lock.json: npm's resolution of each tool's packages, written
// only when some tool has packages, between the tools (and remote) and the MCP pins.
import { describe, expect, test } from "bun:test";
import { thrownBy } from "../helpers/errors.ts";
import { parseLockfile } from "../../src/lockfile/parse.ts";
import { LOCKFILE_KEYS, renderLockfile } from "../../src/lockfile/render.ts";
import type { Lockfile, NpmDependencies } from "../../src/schema/lockfile.ts";
import { entry, file, lockOf } from "./helpers.ts";

const pad = entry("pad", { tool_id: "pad" }, [file("main.js", "require('kiwi-pad')\n")]);
const npm = (extra: Partial<NpmDependencies> = {}): NpmDependencies => ({
  requires: { "kiwi-pad": "^1.0.0" },
  packages: {
    "node_modules/kiwi-pad": { version: "1.0.0", integrity: "sha512-AAAA", dependencies: { "kiwi-digits": "^2.0.0" } } as NpmDependencies["packages"][string],
    "node_modules/kiwi-digits": { version: "2.0.0", resolved: "http://127.0.0.1:4873/kiwi-digits/-/kiwi-digits-2.0.0.tgz", integrity: "sha512-BBBB" },
  },
  ...extra,
});
const withDeps = (n: NpmDependencies): Lockfile => ({ ...lockOf({ pad }), dependencies: { pad: { npm: n } } });

describe("the dependencies section of tool.lock.json", () => {
  test("is written between tools and mcp_servers, with sorted keys, and parses back to the same bytes", () => {
    const text = renderLockfile(withDeps(npm({ tree: `sha256:${"c".repeat(64)}` })));
    const at = LOCKFILE_KEYS.filter((k) => k !== "remote").map((k) => text.indexOf(`\n  "${k}":`));
    expect(at.slice(1).every((n) => n > 0)).toBe(true);
    expect(at.slice(1)).toEqual([...at.slice(1)].sort((a, b) => a - b));
    expect(text.indexOf('"node_modules/kiwi-digits"')).toBeLessThan(text.indexOf('"node_modules/kiwi-pad"'));
    expect(renderLockfile(parseLockfile(text))).toBe(text);
  });

  test("a tool's package.json overrides are recorded with its requirements, nested ones too", () => {
    const text = renderLockfile(withDeps(npm({ overrides: { "kiwi-digits": "2.0.0", "kiwi-pad": { ".": "1.0.0", "kiwi-digits": "2.0.0" } } })));
    expect(text).toContain('"overrides": {');
    expect(renderLockfile(parseLockfile(text))).toBe(text);
    const bad = text.replace('"kiwi-digits": "2.0.0",', '"kiwi-digits": 2,');
    expect(thrownBy(() => parseLockfile(bad))?.code).toBe("E_LOCK_INVALID");
  });

  test("a package bundled in another's tarball (inBundle) has no integrity of its own", () => {
    const bundled = npm({ packages: { ...npm().packages, "node_modules/kiwi-pad/node_modules/kiwi-inner": { version: "1.0.0", inBundle: true } as never } });
    const text = renderLockfile(withDeps(bundled));
    expect(renderLockfile(parseLockfile(text))).toBe(text);
  });

  test("is absent when no tool has packages (older lockfiles keep their bytes)", () => {
    expect(renderLockfile(lockOf({ pad }))).not.toContain('"dependencies"');
  });

  test.each([
    ["a tool that is not locked", { ...lockOf({}), dependencies: { pad: { npm: npm() } } }, 'dependencies of "pad" are recorded, but "pad" is not locked in tools'],
    ["a package without an integrity", withDeps(npm({ packages: { "node_modules/kiwi-pad": { version: "1.0.0" } as never } })), 'the npm package node_modules/kiwi-pad of "pad" has no integrity'],
    ["a package from a git URL", withDeps(npm({ packages: { "node_modules/kiwi-pad": { version: "1.0.0", resolved: "git+ssh://x/y.git", integrity: "sha512-A" } } })), "/dependencies/pad/npm/packages/node_modules~1kiwi-pad/resolved"],
    ["a tree that is no digest", withDeps(npm({ tree: "abc" })), "/dependencies/pad/npm/tree"],
  ])("refuses %s (E_LOCK_INVALID)", (_what, lock, message) => {
    const error = thrownBy(() => parseLockfile(renderLockfile(lock as Lockfile)));
    expect(error.code).toBe("E_LOCK_INVALID");
    expect(error.message).toContain(message);
  });
});
