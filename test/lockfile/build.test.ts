import { describe, expect, test } from "bun:test";
import { formatDigest, sha256Hex } from "../../src/integrity/digest.ts";
import { buildLockfile, hashTool, type LockableTool } from "../../src/lockfile/build.ts";
import { parseExecutorRef } from "../../src/manifest/normalize.ts";
import { file } from "./helpers.ts";

const tool = (id: string, executor: string | null, manifestFile = `.ai/tools/${id}/tool.yaml`): LockableTool => ({
  id,
  version: "1.0.0",
  type: executor ? "script" : "primitive",
  manifestFile,
  manifest: { tool_id: id },
  executor: executor ? parseExecutorRef(executor) : null,
});
const pin = { name: "s", interface_hash: formatDigest(sha256Hex("i")), full_hash: formatDigest(sha256Hex("f")), interface: {} };

describe("building a lockfile from hashed tools", () => {
  test("resolves each executor to id@version and sorts file entries", () => {
    const lock = buildLockfile([hashTool(tool("dp", "subprocess@^1"), [file("z", "z"), file("a", "a")]), hashTool(tool("subprocess", null), [])]);
    expect(lock.tools.dp!.executor).toBe("subprocess@1.0.0");
    expect(lock.tools.subprocess!.executor).toBeNull();
    expect(lock.tools.dp!.files.map((f) => f.path)).toEqual(["a", "z"]);
  });

  test("keeps MCP pins of servers that still exist and drops the others", () => {
    const lock = buildLockfile([hashTool(tool("srv", null), [])], { srv: pin, removed: pin });
    expect(Object.keys(lock.mcp_servers)).toEqual(["srv"]);
  });

  test("refuses two tools with one id, naming both files", () => {
    expect(() => buildLockfile([hashTool(tool("x", null, "a.yaml"), []), hashTool(tool("x", null, "b.yaml"), [])])).toThrow(expect.objectContaining({ message: expect.stringMatching(/a\.yaml and b\.yaml/) }));
  });

  test("refuses an executor no tool provides", () => {
    expect(() => buildLockfile([hashTool(tool("dp", "ghost"), [])])).toThrow(expect.objectContaining({ code: "E_CHAIN" }));
  });
});
