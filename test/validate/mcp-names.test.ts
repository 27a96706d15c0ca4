// An mcp_tool's tool_name is checked against its server's pinned interface.
import { describe, expect, test } from "bun:test";
import { checkMcpToolNames, pinnedToolNames } from "../../src/validate/mcp-names.ts";
import { toolFromYaml } from "./_tools.ts";

const mcpTool = (name: string, server = "srv") => toolFromYaml(`tool_id: t\ntool_type: mcp_tool\nversion: 1.0.0\nexecutor: ${server}\nconfig:\n  tool_name: ${name}\n`, { file: ".ai/tools/t.yaml", form: "file" });
const pins = pinnedToolNames({ srv: { interface: { tools: [{ name: "read_graph" }, { name: "search_nodes" }] } } });

describe("checkMcpToolNames", () => {
  test("a name the pin lists passes", () => {
    expect(checkMcpToolNames([mcpTool("read_graph")], pins)).toEqual([]);
  });

  test("a typo is an error with the nearest name", () => {
    expect(checkMcpToolNames([mcpTool("read_grpah")], pins)).toEqual([expect.objectContaining({ rule: "mcp_tool/unknown-name", severity: "error", line: 6, message: 'the pinned interface of srv lists no tool named "read_grpah"', hint: 'did you mean "read_graph"?' })]);
  });

  test("a name far from every listed one gets the list", () => {
    expect(checkMcpToolNames([mcpTool("zzz")], pins)[0]?.hint).toBe("its tools: read_graph, search_nodes");
  });

  test("a server without a pin is not judged", () => {
    expect(checkMcpToolNames([mcpTool("anything", "other")], pins)).toEqual([]);
  });
});
