// Claude Code plugins read where they overlap Agent Plugins: .mcp.json servers the way Claude Code reads them.
import { afterAll, describe, expect, test } from "bun:test";
import { checkClaudePluginManifest, claudeMcpFiles, claudeOnlyComponents, claudePluginServers, claudeSkillDirs } from "../../src/manifest/claude-plugin.ts";
import { readProject, readToolAlone } from "../../src/manifest/discover-io.ts";
import type { CanonicalValue } from "../../src/integrity/value.ts";
import { join } from "node:path";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";

afterAll(cleanupTemps);

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
  // mcpServers kiwi reads (claudeMcpFiles), so it is not named.
  expect(checkClaudePluginManifest({ name: "p", commands: "./cmds", mcpServers: {} }).ignored).toEqual(["plugin.json commands"]);
  // skills and mcpServers kiwi reads (claudeSkillDirs, claudeMcpFiles).
  expect(checkClaudePluginManifest({ name: "p", mcpServers: "./servers.json", skills: ["./skills", "./extra"] }).ignored).toEqual([]);
  expect(claudeOnlyComponents(["skills", "commands", "hooks", ".mcp.json"])).toEqual(["commands", "hooks"]);
});

describe("plugin.json mcpServers: servers inline or in more files, besides .mcp.json, as Claude Code loads them", () => {
  test.each([
    ["absent: .mcp.json only", { name: "p" }, [".mcp.json"], []],
    ["inline servers: plugin.json itself", { name: "p", mcpServers: { s: { command: "node" } } }, [".mcp.json", ".claude-plugin/plugin.json"], []],
    ["a path", { name: "p", mcpServers: "./config/servers.json" }, [".mcp.json", "config/servers.json"], []],
    ["a list, the default and a repeat once", { name: "p", mcpServers: ["./.mcp.json", "./a/../b.json", "./b.json"] }, [".mcp.json", "b.json"], []],
    ["a path that is not ./ or leaves the plugin", { name: "p", mcpServers: ["servers.json", "./../x.json"] }, [".mcp.json"], ['mcpServers path "servers.json" is not a ./path inside the plugin', 'mcpServers path "./../x.json" is not a ./path inside the plugin']],
    ["another type", { name: "p", mcpServers: 3 }, [".mcp.json"], ["mcpServers is not an object of servers, a path or a list of paths"]],
  ])("%s", (_name, manifest, files, messages) => {
    const out = claudeMcpFiles(manifest as CanonicalValue);
    expect(out.files).toEqual(files);
    expect(out.problems.map((p) => [p.rule, p.file, p.message.split(", so")[0]])).toEqual(messages.map((m) => ["plugin/mcp", ".claude-plugin/plugin.json", m]));
  });

  test("discovery reads inline and path servers beside .mcp.json's; each is found again by its source alone", () => {
    const root = makeProject({
      ".ai/tools/p/.claude-plugin/plugin.json": JSON.stringify({ name: "p", version: "2.0.0", mcpServers: ["./config/extra.json", "./missing.json"] }, null, 2),
      ".ai/tools/p/.mcp.json": JSON.stringify({ mcpServers: { d: { command: "node" } } }),
      ".ai/tools/p/config/extra.json": JSON.stringify({ e: { type: "http", url: "https://api.example.com/mcp" } }),
      ".ai/tools/q/.claude-plugin/plugin.json": JSON.stringify({ name: "q", mcpServers: { s: { command: "${CLAUDE_PLUGIN_ROOT}/bin/s" } } }, null, 2),
    });
    const read = readProject(root);
    const servers = read.tools.filter((t) => t.type === "mcp_server").map((t) => [t.id, t.version, t.manifestFile]);
    expect(servers.sort()).toEqual([
      ["d", "2.0.0", ".ai/tools/p/.mcp.json#d"],
      ["e", "2.0.0", ".ai/tools/p/config/extra.json#e"],
      ["s", "0.0.0", ".ai/tools/q/.claude-plugin/plugin.json#s"],
    ]);
    expect(read.findings).toEqual([expect.objectContaining({ rule: "plugin/mcp", file: ".ai/tools/p/.claude-plugin/plugin.json", line: 4, message: "mcpServers names ./missing.json, which does not exist, so its servers are not read" })]);
    for (const [id, , source] of servers) expect(readToolAlone(root, source as string).tool?.id).toBe(id as string);
    expect(readToolAlone(root, ".ai/tools/q/.claude-plugin/plugin.json#s").tool?.manifest).toMatchObject({ config: { command: "./bin/s" } });
  });
});

describe("plugin.json skills: more folders of skill folders, besides skills/, as Claude Code loads them", () => {
  test.each([
    ["absent: skills/ only", { name: "p" }, ["skills"], []],
    ["a path", { name: "p", skills: "./extra/" }, ["skills", "extra"], []],
    ["a list with the default", { name: "p", skills: ["./skills", "./a", "./b/c"] }, ["skills", "a", "b/c"], []],
    ["a path leaving the plugin", { name: "p", skills: ["../x"] }, ["skills"], ['skills path "../x" is not a ./path inside the plugin']],
    ["another type", { name: "p", skills: { a: 1 } }, ["skills"], ["skills is not a path or a list of paths"]],
  ])("%s", (_name, manifest, dirs, messages) => {
    const out = claudeSkillDirs(manifest as CanonicalValue);
    expect(out.dirs).toEqual(dirs);
    expect(out.problems.map((p) => [p.rule, p.message.split(", so")[0]])).toEqual(messages.map((m) => ["plugin/field", m]));
  });

  test("discovery reads the skills of a named folder with Claude Code's fields allowed, beside skills/; a missing folder is a plugin/field warning", () => {
    const skill = (name: string) => `---\nname: ${name}\ndescription: Says ${name}.\nargument-hint: "[who]"\n---\nHi\n`;
    const root = makeProject({
      ".ai/tools/p/.claude-plugin/plugin.json": JSON.stringify({ name: "p", skills: ["./extra", "./nope"] }, null, 2),
      ".ai/tools/p/skills/std/SKILL.md": skill("std"),
      ".ai/tools/p/extra/hello/SKILL.md": skill("hello"),
    });
    const read = readProject(root);
    expect(read.tools.filter((t) => t.type === "knowledge").map((t) => [t.id, t.manifestFile]).sort()).toEqual([
      ["hello", ".ai/tools/p/extra/hello/SKILL.md"],
      ["std", ".ai/tools/p/skills/std/SKILL.md"],
    ]);
    expect(read.findings).toEqual([expect.objectContaining({ rule: "plugin/field", file: ".ai/tools/p/.claude-plugin/plugin.json", line: 3, message: "skills names ./nope, which does not exist, so its skills are not read" })]);
    expect(readToolAlone(root, ".ai/tools/p/extra/hello/SKILL.md")).toMatchObject({ tool: { id: "hello" }, findings: [] });
  });

  test("a Claude Code plugin above the project does not make the project's own skills its skills", () => {
    // The folder holding the project is itself a plugin whose skills path names the project's tools.
    const outer = makeProject({
      ".claude-plugin/plugin.json": JSON.stringify({ name: "outer", skills: ["./proj/.ai/tools"] }),
      "proj/.ai/tools/hello/SKILL.md": `---\nname: hello\ndescription: Says hello.\nargument-hint: "[who]"\n---\nHi\n`,
    });
    const read = readProject(join(outer, "proj"));
    expect(read.tools.filter((t) => t.type === "knowledge").map((t) => t.id)).toEqual(["hello"]);
    // Judged as a standalone skill: Claude Code's own field is a warning, as for any project skill.
    expect(read.findings.map((f) => [f.rule, f.file])).toEqual([["skill/field", ".ai/tools/hello/SKILL.md"]]);
  });
});
