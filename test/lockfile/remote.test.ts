import { describe, expect, test } from "bun:test";
import { thrownBy } from "../helpers/errors.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { buildLockfile } from "../../src/lockfile/build.ts";
import { parseLockfile } from "../../src/lockfile/parse.ts";
import { LOCKFILE_KEYS, renderLockfile } from "../../src/lockfile/render.ts";
import type { Lockfile, RemoteTool } from "../../src/schema/lockfile.ts";
import { entry, file, lockOf } from "./helpers.ts";

const dp = entry("dp", { tool_id: "dp" }, [file("main.py", "print(1)\n")], { source: ".ai/tools/.remote/dp/tool.yaml" });
const remote = (integrity = dp.integrity): RemoteTool => ({
  source: `oci://127.0.0.1:5000/team/dp@sha256:${"a".repeat(64)}`,
  reference: "127.0.0.1:5000/team/dp:1.0",
  integrity,
  manifest_file: "tool.yaml",
  manifest_sha256: sha256Hex("tool_id: dp\n"),
});
const withRemote = (r: RemoteTool): Lockfile => ({ ...lockOf({ dp }), remote: { dp: r } });

const code = (fn: () => unknown) => thrownBy(fn).code;

describe("the remote section of tool.lock.json", () => {
  test("is written between tools and mcp_servers, and parses back to the same bytes", () => {
    const text = renderLockfile(withRemote(remote()));
    const at = LOCKFILE_KEYS.filter((k) => k !== "dependencies").map((k) => text.indexOf(`\n  "${k}":`));
    expect(at.slice(1)).toEqual([...at.slice(1)].sort((a, b) => a - b));
    expect(renderLockfile(parseLockfile(text))).toBe(text);
  });

  test("is absent when no tool came from a registry (older lockfiles keep their bytes)", () => {
    expect(renderLockfile(lockOf({ dp }))).not.toContain('"remote"');
  });

  test("must name a locked tool with the same integrity", () => {
    const text = renderLockfile(withRemote(remote(`sha256:${"9".repeat(64)}`)));
    expect(code(() => parseLockfile(text))).toBe("E_LOCK_INVALID");
    const orphan = renderLockfile({ ...lockOf({}), remote: { dp: remote() } });
    expect(code(() => parseLockfile(orphan))).toBe("E_LOCK_INVALID");
  });

  test("must record its source by digest", () => {
    const text = renderLockfile(withRemote({ ...remote(), source: "oci://127.0.0.1:5000/team/dp:1.0" }));
    expect(code(() => parseLockfile(text))).toBe("E_LOCK_INVALID");
  });

  test("must name its manifest file by a clean path inside the tool's folder, as every locked file", () => {
    for (const manifest_file of ["../evil.yaml", "/etc/kiwi.yaml", "a/./tool.yaml", "a\\tool.yaml"]) {
      const e = thrownBy(() => parseLockfile(renderLockfile(withRemote({ ...remote(), manifest_file }))));
      expect([e.code, e.message]).toEqual(["E_LOCK_INVALID", expect.stringContaining(`remote tool "dp" manifest_file ${JSON.stringify(manifest_file)} `)]);
    }
  });

  const hashed = (integrityHex: string) => [{ tool: { id: "dp", version: "1.0.0", type: "script", manifestFile: dp.source, manifest: { tool_id: "dp" }, executor: undefined }, files: dp.files, integrity: integrityHex, manifestDigest: dp.manifest_digest.slice(7) }];

  test("locking keeps the record of a remote tool whose files are unchanged, and drops it when the tool is gone", () => {
    expect(buildLockfile(hashed(dp.integrity.slice(7)) as never, {}, { dp: remote() }).remote).toEqual({ dp: remote() });
    expect(buildLockfile([], {}, { dp: remote() }).remote).toBeUndefined();
  });

  test("locking keeps a remote tool this checkout has not installed as it was: entry, record, pin and packages", () => {
    const pin = { interface_hash: `sha256:${"c".repeat(64)}` } as never;
    const packages = { dp: { npm: { requires: {}, packages: {} } } } as never;
    const lock = buildLockfile([], { dp: pin }, { dp: remote() }, packages, { dp });
    expect([lock.tools.dp, lock.remote, lock.mcp_servers, lock.dependencies]).toEqual([dp, { dp: remote() }, { dp: pin }, packages]);
    // Not a remote tool any more (its record gone, as kiwi remove leaves it): nothing is kept.
    expect(buildLockfile([], {}, {}, {}, { dp }).tools.dp).toBeUndefined();
  });

  test("locking refuses a remote tool whose files were edited in place", () => {
    expect(code(() => buildLockfile(hashed("1".repeat(64)) as never, {}, { dp: remote() }))).toBe("E_INTEGRITY_MISMATCH");
  });
});
