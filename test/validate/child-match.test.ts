import { describe, expect, test } from "bun:test";
import { findChildSchemaEntry } from "../../src/validate/child-match.ts";

const link = { executor: null, files: [], entrypoint: undefined };
const child = { ...link, id: "fetch", type: "script", version: "1.2.0", doc: { tool_type: "script", config: { transport: "stdio", tags: ["a", "b"] } } };
const magray = { ...link, id: "mg", type: "native", version: "1.0.0", doc: { name: "mg", type: "native" } };
const kiwiMcp = { ...link, id: "dp", type: "script", version: "2.1.0", entrypoint: "process_data.py", language: "python", executor: { id: "python_runtime", range: null, raw: "python_runtime" }, doc: { tool_type: "script", manifest: { language: "python", entrypoint: "process_data.py" } } };

describe("which child_schemas entry applies", () => {
  test.each([
    ["the document's own field", [{ match: { tool_type: "script" } }], child, 0],
    ["the first of several matching entries", [{ match: { tool_type: "api" } }, { match: { tool_type: "script" } }, { match: {} }], child, 1],
    ["a dotted path into the document", [{ match: { "config.transport": "stdio" } }], child, 0],
    ["a nested value in any key order", [{ match: { config: { tags: ["a", "b"], transport: "stdio" } } }], child, 0],
    ["the model's id and version", [{ match: { tool_id: "fetch", version: "1.2.0" } }], child, 0],
    ["tool_type for a magray tool, which writes type", [{ match: { tool_type: "native" } }], magray, 0],
    ["an empty match (every child)", [{ match: {} }], child, 0],
    ["no entry when a value differs", [{ match: { "config.transport": "sse" } }], child, -1],
    ["no entry when a path is missing", [{ match: { "config.missing.deep": 1 } }], child, -1],
    ["kiwi_mcp's link fields: executor_id and the manifest's language", [{ match: { executor_id: "python_runtime", "manifest.language": "python" } }], kiwiMcp, 0],
    ["no entry when an array differs in order", [{ match: { "config.tags": ["b", "a"] } }], child, -1],
  ])("finds %s", (_what, entries, tool, expected) => {
    expect(findChildSchemaEntry(entries, tool)).toBe(expected);
  });
});
