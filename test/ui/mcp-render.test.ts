// Human text for the MCP commands: what reaches a terminal from a server's own strings.
import { describe, expect, test } from "bun:test";
import { diffListings } from "../../src/mcp/interface-diff.ts";
import { parseWireListing } from "../../src/mcp/listing.ts";
import { driftError } from "../../src/mcp/modes.ts";
import { pinFromListing } from "../../src/mcp/pin.ts";
import { KiwiError } from "../../src/errors.ts";
import { lockPinsDocument, renderDiff, renderDriftSummary, renderListingSummary, renderLockPins } from "../../src/ui/mcp-render.ts";

const listing = (value: object) => parseWireListing(JSON.stringify(value), "l.json");
/** Terminal controls and invisible characters a hostile server could put in its names. */
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f\u200b\u202e]/;

describe("a server's strings reach the terminal with hidden characters made visible", () => {
  const pinned = listing({ serverInfo: { name: "fs", version: "1.0.0" }, tools: [{ name: "read" }] });
  const live = listing({ serverInfo: { name: "fs\u200B", version: "2\u001b[31m" }, instructions: "hi\u202Eevil", tools: [{ name: "read" }, { name: "re\u001b]0;x\u0007ad\u200B" }] });

  test("kiwi mcp diff: component names and every patch line", () => {
    const text = renderDiff("fs_mcp", diffListings(pinned, live), { color: false });
    expect(text).not.toMatch(RAW);
    expect(text).toContain('+ tool "re\\u001b]0;x\\u0007ad<U+200B ZWSP>" [security]');
    expect(text).toContain("+hi<U+202E RLO>evil");
  });

  test("a refused kiwi exec: the per-component summary and the rename in the error", () => {
    const error = driftError("fs_mcp", pinFromListing(pinned), pinFromListing(live), diffListings(pinned, live));
    const summary = renderDriftSummary("fs_mcp", error.details!.changes as never);
    expect(summary).not.toMatch(RAW);
    expect(summary).toContain('+ tool "re\\u001b]0;x\\u0007ad<U+200B ZWSP>" [security]');
    expect(error.message).toBe('MCP server "fs_mcp" now calls itself "fs<U+200B ZWSP>" but was pinned as "fs"');
  });

  test("kiwi mcp hash: the server's name and version", () => {
    expect(renderListingSummary(live)).toBe("fs<U+200B ZWSP> 2<U+001B>[31m: 2 tools, 0 prompts, 0 resources, 0 resource templates, instructions");
  });
});

describe("the MCP step of kiwi lock", () => {
  test("a server that could not be pinned gets its failure's own hint, then the re-pin command", () => {
    const error = new KiwiError("E_MCP", 'MCP server "hs" answered initialize with HTTP 401: go away', { hint: "the server refused the credentials kiwi sent: check config.headers" });
    const reports = [{ server: "hs", result: "failed" as const, reason: error.message, error }, { server: "other", result: "failed" as const, reason: "it broke" }];
    expect(renderLockPins(reports, { color: false })).toEqual([
      'warning: MCP server "hs" was not pinned: MCP server "hs" answered initialize with HTTP 401: go away\n  hint: the server refused the credentials kiwi sent: check config.headers; then run "kiwi mcp pin hs"',
      'warning: MCP server "other" was not pinned: it broke\n  hint: fix it, then run "kiwi mcp pin other"',
    ]);
    expect(lockPinsDocument(reports)[0]).toEqual({ server: "hs", result: "failed", reason: error.message, hint: "the server refused the credentials kiwi sent: check config.headers" });
  });
});
