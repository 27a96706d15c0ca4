// kiwi_mcp's lockfile store names and chain hash, as lockfile_store.py computes them.
import { describe, expect, test } from "bun:test";
import { kiwiMcpChainHash, parseStoreFileName } from "../../src/lockfile/kiwi-mcp.ts";

describe("store file names", () => {
  test.each([
    ["sign@1.0.0.lock.json", { tool_id: "sign", version: "1.0.0" }],
    ["sign@1.0.0.abcdef012345.lock.json", { tool_id: "sign", version: "1.0.0" }],
    ["sign@2.0.lock.json", { tool_id: "sign", version: "2.0" }],
    ["notes.json", undefined],
    ["sign.lock.json", undefined],
  ])("%s", (name, expected) => {
    expect(parseStoreFileName(name)).toEqual(expected);
  });
});

test("the chain hash is python's _compute_chain_hash over the chain as written", () => {
  const chain = [
    { tool_id: "a", version: "1.0.0", integrity: "sha256:aa" },
    { tool_id: "subprocess", version: "1.0.0", integrity: "bb" },
  ];
  const py = Bun.spawnSync([
    "python3",
    "-c",
    "import hashlib, json, sys; c = json.load(sys.stdin); print(hashlib.sha256('|'.join(f\"{e['tool_id']}@{e['version']}:{e['integrity']}\" for e in c).encode()).hexdigest()[:12])",
  ], { stdin: new TextEncoder().encode(JSON.stringify(chain)) });
  expect(kiwiMcpChainHash(chain)).toBe(py.stdout.toString().trim());
});
