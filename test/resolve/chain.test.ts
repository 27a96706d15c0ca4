import { describe, expect, test } from "bun:test";
import { builtinTools } from "../../src/manifest/builtins.ts";
import { MAX_CHAIN_DEPTH, executorIds, indexTools, renderCycle, resolveChain } from "../../src/resolve/chain.ts";
import { toolFromYaml } from "../validate/_tools.ts";

const tool = (id: string, type: string, executor: string | null, version = "1.0.0") =>
  toolFromYaml(`tool_id: ${id}\ntool_type: ${type}\nversion: ${version}\nexecutor: ${executor ?? "null"}\n`, { file: `.ai/tools/${id}.yaml`, form: "file" });

const withBuiltins = (...tools: ReturnType<typeof tool>[]) => indexTools([...tools, ...builtinTools()]);

describe("resolveChain", () => {
  test("resolves a script through a runtime to subprocess", () => {
    const result = resolveChain(withBuiltins(tool("data_processor", "script", "python_runtime@^1.0")), "data_processor");
    expect(result.ok).toBe(true);
    expect(result.chain.map((t) => t.id)).toEqual(["data_processor", "python_runtime", "subprocess"]);
    expect(result.findings).toEqual([]);
  });

  test.each([
    ["a missing executor", [tool("a", "script", "pyhton_runtime")], "chain/missing-executor", "a", 'did you mean "python_runtime"?'],
    ["an unsatisfied range", [tool("a", "script", "python_runtime@^2")], "chain/version-mismatch", "a", undefined],
    ["an invalid range", [tool("a", "script", "python_runtime@^^1")], "chain/version-range", "a", undefined],
    ["a chain ending in knowledge", [tool("a", "script", "notes"), tool("notes", "knowledge", null)], "chain/no-primitive", "a", undefined],
    // "fetch" is nearest to "fetc" but is the tool itself, which cannot run on itself.
    ["a missing executor named like the tool itself", [tool("fetch", "script", "fetc"), tool("fetchr", "runtime", "subprocess")], "chain/missing-executor", "fetch", 'did you mean "fetchr"?'],
    ["an empty executor", [tool("a", "script", '""')], "chain/missing-executor", "a", "add the executor tool under .ai/tools/ or use a built-in runtime"],
  ])("reports %s at the tool whose link breaks", (_name, tools, rule, at, hint) => {
    const result = resolveChain(withBuiltins(...tools), tools[0]!.id);
    expect(result.ok).toBe(false);
    expect(result.findings.map((f) => [f.rule, f.tool, f.file, f.line])).toEqual([[rule, at, `.ai/tools/${at}.yaml`, 4]]);
    if (hint) expect(result.findings[0]!.hint).toBe(hint);
  });

  test("reports a cycle with its path", () => {
    const index = withBuiltins(tool("x", "script", "a"), tool("a", "runtime", "b"), tool("b", "runtime", "a"));
    const result = resolveChain(index, "x");
    expect(result.ok).toBe(false);
    expect(result.findings[0]!.rule).toBe("chain/cycle");
    expect(result.findings[0]!.tool).toBe("b");
    expect(result.findings[0]!.message).toContain("a -> b -> a");
  });

  test("bounds the depth", () => {
    const tools = Array.from({ length: MAX_CHAIN_DEPTH + 2 }, (_, i) => tool(`t${i}`, "runtime", i === MAX_CHAIN_DEPTH + 1 ? "subprocess" : `t${i + 1}`));
    const result = resolveChain(withBuiltins(...tools), "t0");
    expect(result.findings.map((f) => [f.rule, f.tool])).toEqual([["chain/too-deep", "t0"]]);
  });

  test("a project tool overrides a built-in of the same id", () => {
    const mine = tool("python_runtime", "runtime", "subprocess", "2.1.0");
    const result = resolveChain(withBuiltins(tool("a", "script", "python_runtime@^2"), mine), "a");
    expect(result.ok).toBe(true);
    expect(result.chain[1]).toBe(mine);
  });
});

test("renderCycle starts a cycle at its smallest id", () => {
  expect(renderCycle(["b", "c", "a", "b"])).toBe("a -> b -> c -> a");
});

describe("executorIds", () => {
  test("takes each locked entry's executor without its version, then the tree's tools the lockfile lacks, without their range", () => {
    const tree = [toolFromYaml("tool_id: app\ntool_type: script\nversion: 1.0.0\nexecutor: rt@^2\n"), toolFromYaml("tool_id: rt\ntool_type: runtime\nversion: 2.0.0\nexecutor: other\n")];
    const ids = executorIds({ rt: { executor: "subprocess@1.1.0" }, subprocess: { executor: null } }, tree);
    expect([...ids]).toEqual([
      ["rt", "subprocess"],
      ["subprocess", null],
      ["app", "rt"],
    ]);
  });
});
