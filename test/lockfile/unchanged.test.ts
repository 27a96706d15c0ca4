import { describe, expect, test } from "bun:test";
import { formatDigest, sha256Hex } from "../../src/integrity/digest.ts";
import { Float } from "../../src/integrity/value.ts";
import { buildLockfile, hashTool, type LockableTool } from "../../src/lockfile/build.ts";
import { renderLockfile } from "../../src/lockfile/render.ts";
import { matchUnchangedLockfile } from "../../src/lockfile/unchanged.ts";
import type { McpPin } from "../../src/schema/lockfile.ts";
import { file } from "./helpers.ts";

const tool: LockableTool = { id: "srv", version: "1.0.0", type: "primitive", manifestFile: ".ai/tools/srv.yaml", manifest: { tool_id: "srv", n: new Float(1) }, executor: null };
const tree = [hashTool(tool, [file("a.txt", "a")])];
const pin = { name: "s", interface_hash: formatDigest(sha256Hex("i")), full_hash: formatDigest(sha256Hex("f")), interface: { tools: [{ name: "t", inputSchema: { default: new Float(3) } }] } } as unknown as McpPin;

describe("recognising an unchanged lockfile without the slow parse", () => {
  test("matches the exact bytes kiwi would write", () => {
    const text = renderLockfile(buildLockfile(tree));
    expect(matchUnchangedLockfile(text, tree)?.rendered).toBe(text);
  });

  test("matches with pins whose values survive a quick parse, and returns them", () => {
    const plainPin = { ...pin, interface: { tools: [{ name: "t", inputSchema: { default: 1.5 } }] } } as unknown as McpPin;
    const text = renderLockfile(buildLockfile(tree, { srv: plainPin }));
    expect(matchUnchangedLockfile(text, tree)?.lock.mcp_servers).toEqual({ srv: plainPin });
  });

  test.each([
    ["an integral float (3.0 would read as 3)", new Float(3)],
    ["a big integer (it would lose digits)", 12345678901234567890n],
  ])("leaves pins with %s to the slow lossless path", (_what, value) => {
    const lossy = { ...pin, interface: { tools: [{ name: "t", inputSchema: { default: value } }] } } as unknown as McpPin;
    const text = renderLockfile(buildLockfile(tree, { srv: lossy }));
    expect(matchUnchangedLockfile(text, tree)).toBeUndefined();
  });

  test("still fails closed on a pin whose digest is bad", () => {
    const bad = { ...pin, interface: {}, interface_hash: "md5:abc" } as McpPin;
    const text = renderLockfile(buildLockfile(tree, { srv: bad }));
    expect(() => matchUnchangedLockfile(text, tree)).toThrow(expect.objectContaining({ code: "E_LOCK_INVALID" }));
  });
});
