// What the SDK is handed of a list result: nulls the interface reads as "" are dropped, nothing else.
import { describe, expect, test } from "bun:test";
import { nullDescriptionsDropped } from "../../src/mcp/listing.ts";

describe("nullDescriptionsDropped", () => {
  test("drops null descriptions of tools, prompts, their arguments and resources, and a null mimeType", () => {
    const message = {
      jsonrpc: "2.0",
      id: 1,
      result: {
        tools: [{ name: "a", description: null, inputSchema: {} }, { name: "b", description: "kept" }],
        prompts: [{ name: "p", description: null, arguments: [{ name: "x", description: null, required: true }] }],
        resources: [{ uri: "file:///a", name: "a", description: null, mimeType: null }],
        nextCursor: "c",
      },
    };
    expect(nullDescriptionsDropped<unknown>(message)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        tools: [{ name: "a", inputSchema: {} }, { name: "b", description: "kept" }],
        prompts: [{ name: "p", arguments: [{ name: "x", required: true }] }],
        resources: [{ uri: "file:///a", name: "a" }],
        nextCursor: "c",
      },
    });
    // The message as received is untouched: the lossless capture is the listing.
    expect(message.result.tools[0]!.description).toBeNull();
  });

  test("returns any other message itself", () => {
    const plain = { jsonrpc: "2.0", id: 1, result: { tools: [{ name: "a", description: "d" }] } };
    expect(nullDescriptionsDropped(plain)).toBe(plain);
    const error = { jsonrpc: "2.0", id: 1, error: { code: -1, message: "x" } };
    expect(nullDescriptionsDropped(error)).toBe(error);
    const other = { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "x", description: null }] } };
    expect(nullDescriptionsDropped(other)).toBe(other);
  });
});
