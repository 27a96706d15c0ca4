// Claude Code plugins read where they overlap Agent Plugins: .mcp.json servers the way Claude Code reads them.
import { describe, expect, test } from "bun:test";
import { checkClaudePluginManifest, claudeOnlyComponents, claudePluginServers } from "../../src/manifest/claude-plugin.ts";
import type { CanonicalValue } from "../../src/integrity/value.ts";

const plugin = checkClaudePluginManifest({ name: "notes", version: "1.2.0" });
const read = (mcp: unknown) => claudePluginServers(mcp as CanonicalValue, plugin);

describe(".mcp.json servers", () => {
  test.each([
    ["no type is stdio; ${CLAUDE_PLUGIN_ROOT}/x is the plugin's ./x; other ${VAR} read the environment", { mcpServers: { s: { command: "${CLAUDE_PLUGIN_ROOT}/bin/s", args: ["${CLAUDE_PLUGIN_ROOT}/c.json", "{x}"], env: { TOKEN: "${TOKEN}" } } } }, { executor: "subprocess", config: { transport: "stdio", command: "./bin/s", args: ["./c.json", "{{x}}"], env: { TOKEN: "${TOKEN}", CLAUDE_PLUGIN_ROOT: "." } } }],
    ["servers at the top, without mcpServers; http is streamable-http", { api: { type: "http", url: "https://api.example.com/mcp", headers: { Authorization: "Bearer ${API_TOKEN}" } } }, { executor: "http_client", config: { transport: "streamable-http", url: "https://api.example.com/mcp", headers: { Authorization: "Bearer ${API_TOKEN}" } }, requires: [{ "net.outbound": ["api.example.com"] }] }],
  ])("%s", (_name, mcp, expected) => {
    const out = read(mcp);
    expect(out.problems).toEqual([]);
    expect(out.servers[0]!.manifest).toMatchObject({ tool_type: "mcp_server", version: "1.2.0", ...expected });
  });

  test.each([
    ["${VAR:-default}", { s: { command: "node", args: ["${PORT:-3000}"] } }, "a default kiwi does not expand"],
    ["${CLAUDE_PLUGIN_DATA}", { s: { command: "node", env: { D: "${CLAUDE_PLUGIN_DATA}/db" } } }, "a persistent writable folder kiwi does not provide"],
    ["a built-in's name", { python_runtime: { command: "node" } }, "kiwi's built-in python_runtime"],
    ["an unknown type", { s: { type: "ws", url: "wss://x" } }, 'type "ws" is not stdio, http or sse'],
    ["${CLAUDE_PLUGIN_ROOT} as an http url", { s: { type: "http", url: "${CLAUDE_PLUGIN_ROOT}/mcp" } }, "it uses ${CLAUDE_PLUGIN_ROOT} in a remote server's url or headers, but that is a folder path on disk"],
    ["${CLAUDE_PLUGIN_ROOT} inside an https url", { s: { type: "http", url: "https://api.example.com/${CLAUDE_PLUGIN_ROOT}" } }, "it uses ${CLAUDE_PLUGIN_ROOT} in a remote server's url"],
    ["${CLAUDE_PLUGIN_DATA} in an sse header", { s: { type: "sse", url: "https://api.example.com/sse", headers: { X: "${CLAUDE_PLUGIN_DATA}" } } }, "it uses ${CLAUDE_PLUGIN_DATA} in a remote server's url or headers"],
  ])("%s skips the server with a plugin/mcp warning", (_name, mcp, message) => {
    const out = read(mcp);
    expect(out.servers).toEqual([]);
    expect(out.problems).toEqual([expect.objectContaining({ rule: "plugin/mcp", file: ".mcp.json", message: expect.stringContaining(message) })]);
  });
});

test("plugin.json needs a kebab-case name; the component paths it points Claude Code at are named as not read", () => {
  expect(checkClaudePluginManifest({ version: "1.0.0" }).ok).toBe(false);
  expect(checkClaudePluginManifest({ name: "p", commands: "./cmds", mcpServers: {} }).ignored).toEqual(["plugin.json commands", "plugin.json mcpServers"]);
  // Naming the default locations is no component kiwi misses.
  expect(checkClaudePluginManifest({ name: "p", mcpServers: "./.mcp.json", skills: ["./skills/"] }).ignored).toEqual([]);
  expect(checkClaudePluginManifest({ name: "p", skills: ["./skills", "./extra"] }).ignored).toEqual(["plugin.json skills"]);
  expect(claudeOnlyComponents(["skills", "commands", "hooks", ".mcp.json"])).toEqual(["commands", "hooks"]);
});
