// kiwi_mcp lockfiles through the compiled binary: `kiwi verify <file>` gives kiwi_mcp's verdicts
// (chain length, tool id at a position, version, integrity), for one lockfile or the whole
// .ai/lockfiles store with its .index.json; `kiwi lock --from` converts only a lockfile that holds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemps, makeProject, writeTree } from "../helpers/tree.ts";
import { kiwiIn } from "./lock-helpers.ts";

afterAll(cleanupTemps);

const TREE = {
  ".ai/tools/python_runtime.yaml": 'tool_id: python_runtime\nversion: "1.4.0"\ntool_type: runtime\nexecutor: subprocess\nconfig:\n  command: python3\n  base_args: ["-u"]\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { type: object, required: [manifest] }\n',
  ".ai/tools/data_processor/tool.yaml": 'tool_id: data_processor\nversion: "2.1.0"\ntool_type: script\nexecutor: python_runtime\nmanifest:\n  language: python\n  entrypoint: process_data.py\n',
  ".ai/tools/data_processor/process_data.py": "print('processed')\n",
};

type Kiwi = ReturnType<typeof kiwiIn>;

/** The chain as kiwi hashes it now: [id, version, bare hex integrity]. */
async function chainOf(kiwi: Kiwi, ids: string[]): Promise<[string, string, string][]> {
  const out: [string, string, string][] = [];
  for (const id of ids) {
    const doc = JSON.parse((await kiwi.run(["hash", "tool", id, "--json"])).stdout);
    out.push([doc.tool_id, doc.version, doc.integrity.replace("sha256:", "")]);
  }
  return out;
}

/** A kiwi_mcp lockfile as LockfileManager.freeze writes it (bare hex content_hash). */
function lockfileOf(chain: [string, string, string][]): Record<string, unknown> {
  const [rootId, rootVersion, rootIntegrity] = chain[0]!;
  return {
    lockfile_version: 1,
    generated_at: "2026-01-24T12:00:00+00:00",
    root: { tool_id: rootId, version: rootVersion, integrity: rootIntegrity },
    resolved_chain: chain.map(([tool_id, version, integrity], i) => ({ tool_id, version, integrity, executor: chain[i + 1]?.[0] ?? null })),
    registry: null,
  };
}

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

describe("one kiwi_mcp lockfile", () => {
  let root: string;
  let kiwi: Kiwi;
  let chain: [string, string, string][];
  beforeAll(async () => {
    root = makeProject(TREE);
    kiwi = kiwiIn(root);
    chain = await chainOf(kiwi, ["data_processor", "python_runtime", "subprocess"]);
  });

  test("holds for the tree it was made from", async () => {
    writeFileSync(join(root, "data_processor.lock.json"), json(lockfileOf(chain)));
    const r = await kiwi.run(["verify", "data_processor.lock.json", "--json"]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).lockfiles).toEqual([{ file: "data_processor.lock.json", root: "data_processor@2.1.0", links: 3, issues: [] }]);
  });

  test.each([
    ["a version", (c: [string, string, string][]) => c.map((l, i) => (i === 1 ? [l[0], "1.3.0", l[2]] : l)), "Version mismatch for python_runtime: lockfile=1.3.0, resolved=1.4.0"],
    ["an integrity", (c: [string, string, string][]) => c.map((l, i) => (i === 0 ? [l[0], l[1], "0".repeat(64)] : l)), "Integrity mismatch for data_processor@2.1.0: lockfile=000000000000, resolved="],
    ["the chain's length", (c: [string, string, string][]) => [c[0]!, c[2]!], "Chain length mismatch: lockfile has 2, resolved has 3"],
    ["the tool at a position", (c: [string, string, string][]) => [c[0]!, ["bash_runtime", "1.0.0", c[1]![2]], c[2]!], "Tool ID mismatch at position 1: lockfile=bash_runtime, resolved=python_runtime"],
  ])("that differs from the tree in %s fails with kiwi_mcp's verdict (exit 3)", async (_what, change, verdict) => {
    writeFileSync(join(root, "changed.lock.json"), json(lockfileOf(change(chain) as [string, string, string][])));
    const r = await kiwi.run(["verify", "changed.lock.json"]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toContain("changed.lock.json  FAILED  data_processor@2.1.0");
    expect(r.stdout).toContain(verdict);
    expect(r.stderr).toContain("error[E_LOCK_STALE]");
  });

  test.each([
    ["a chain whose executor skips a link", (l: Record<string, unknown>) => ((l.resolved_chain as Record<string, unknown>[])[0]!.executor = "subprocess"), '/resolved_chain/0/executor is "subprocess", but the next link is python_runtime'],
    ["a hash that is no sha256", (l: Record<string, unknown>) => ((l.resolved_chain as Record<string, unknown>[])[1]!.integrity = "abc"), '/resolved_chain/1/integrity is "abc", not a sha256 digest'],
    ["an empty integrity (kiwi_mcp skips the comparison; kiwi fails closed)", (l: Record<string, unknown>) => ((l.resolved_chain as Record<string, unknown>[])[2]!.integrity = ""), "/resolved_chain/2/integrity must be a non-empty string"],
    ["another lockfile version", (l: Record<string, unknown>) => (l.lockfile_version = 2), "/lockfile_version is 2; kiwi reads kiwi_mcp lockfile version 1"],
    ["a root that is not the first link", (l: Record<string, unknown>) => ((l.root as Record<string, unknown>).version = "9.9.9"), "/root (data_processor@9.9.9) is not the first link of resolved_chain"],
  ])("%s is E_LOCK_INVALID naming the file and field (exit 5)", async (_what, spoil, message) => {
    const lock = lockfileOf(chain);
    spoil(lock);
    writeFileSync(join(root, "bad.lock.json"), json(lock));
    const r = await kiwi.run(["verify", "bad.lock.json"]);
    expect([r.exitCode, r.stdout]).toEqual([5, ""]);
    expect(r.stderr).toContain(`error[E_LOCK_INVALID]: bad.lock.json: ${message}`);
  });

  test("a root the tree does not have is reported as kiwi_mcp reports it", async () => {
    writeFileSync(join(root, "gone.lock.json"), json(lockfileOf([["gone_tool", "1.0.0", chain[2]![2]]])));
    const r = await kiwi.run(["verify", "gone.lock.json"]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toContain("Tool not found: gone_tool@1.0.0");
  });
});

describe("kiwi lock --from", () => {
  test("converts a lockfile that holds: tool.lock.json pins the same integrities", async () => {
    const root = makeProject(TREE);
    const kiwi = kiwiIn(root);
    const chain = await chainOf(kiwi, ["data_processor", "python_runtime", "subprocess"]);
    writeFileSync(join(root, "kiwi_mcp.lock.json"), json(lockfileOf(chain)));
    expect((await kiwi.run(["lock", "--from", "kiwi_mcp.lock.json"])).exitCode).toBe(0);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    for (const [id, version, integrity] of chain) expect([lock.tools[id].version, lock.tools[id].integrity]).toEqual([version, `sha256:${integrity}`]);
    const r = await kiwi.run(["exec", "data_processor"]);
    expect([r.exitCode, r.stdout]).toEqual([0, "processed\n"]);
  });

  test("refuses a lockfile whose hash does not match, and writes nothing", async () => {
    const root = makeProject(TREE);
    const kiwi = kiwiIn(root);
    const chain = await chainOf(kiwi, ["data_processor", "python_runtime", "subprocess"]);
    writeFileSync(join(root, "kiwi_mcp.lock.json"), json(lockfileOf(chain)));
    appendFileSync(join(root, ".ai/tools/data_processor/process_data.py"), "# changed\n");
    const r = await kiwi.run(["lock", "--from", "kiwi_mcp.lock.json"]);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain("kiwi lock --from kiwi_mcp.lock.json wrote nothing");
    expect(r.stderr).toContain("Integrity mismatch for data_processor@2.1.0");
    expect(existsSync(join(root, "tool.lock.json"))).toBe(false);
  });
});

describe("the .ai/lockfiles store", () => {
  /** A store as LockfileStore.save writes it: the lockfile and its index entry. */
  async function store(mutateIndex?: (index: Record<string, Record<string, unknown>>) => void) {
    const root = makeProject(TREE);
    const kiwi = kiwiIn(root);
    const chain = await chainOf(kiwi, ["data_processor", "python_runtime", "subprocess"]);
    const lock = lockfileOf(chain);
    const chainHash = createHash("sha256")
      .update(chain.map(([id, v, i]) => `${id}@${v}:${i}`).join("|"))
      .digest("hex")
      .slice(0, 12);
    const index: Record<string, Record<string, unknown>> = {
      "data/data_processor@2.1.0": { path: "data/data_processor@2.1.0.lock.json", chain_hash: chainHash, created_at: "2026-01-24T12:00:00+00:00", last_validated: "2026-01-24T12:00:00+00:00", scope: "project" },
    };
    mutateIndex?.(index);
    writeTree(root, {
      ".ai/lockfiles/data/data_processor@2.1.0.lock.json": json(lock),
      ".ai/lockfiles/.index.json": json({ version: "1", lockfiles: index, updated_at: "2026-01-24T12:00:00+00:00" }),
    });
    return kiwi;
  }

  test("every lockfile and the index hold", async () => {
    const r = await (await store()).run(["verify", ".ai/lockfiles"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(".ai/lockfiles/data/data_processor@2.1.0.lock.json  ok  data_processor@2.1.0 (3 links)\n");
  });

  test("an index entry whose chain hash or path is wrong fails, naming the entry", async () => {
    const kiwi = await store((index) => {
      index["data/data_processor@2.1.0"]!.chain_hash = "000000000000";
      index["data/old@1.0.0"] = { path: "data/old@1.0.0.lock.json", chain_hash: "x" };
    });
    const r = await kiwi.run(["verify", ".ai/lockfiles"]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toContain('Index entry data/data_processor@2.1.0 records chain_hash "000000000000", but the lockfile\'s chain hashes to');
    expect(r.stdout).toContain('Index entry data/old@1.0.0 names "data/old@1.0.0.lock.json", which does not exist');
  });
});
