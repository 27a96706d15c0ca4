// Agent Plugins 1.0.0 as kiwi tools: the spec's own examples, each skill a knowledge tool and each
// mcp.json server an mcp_server; a bad plugin.json rejects the plugin, a bad server is skipped.
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readProject } from "../../src/manifest/discover-io.ts";
import { checkPluginManifest, pluginServers, serverPointer } from "../../src/manifest/plugin.ts";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";

afterAll(cleanupTemps);
const REAL = join(import.meta.dir, "..", "fixtures", "real", "plugins");
const SCHEMA = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json";
const MCP_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json";
const real = (name: string) => JSON.parse(readFileSync(join(REAL, name), "utf8"));

describe("a plugin folder", () => {
  test("the spec's hello-plugin: its skill is a tool", () => {
    const root = makeProject({});
    cpSync(join(REAL, "hello-plugin"), join(root, ".ai/tools/hello-plugin"), { recursive: true });
    const project = readProject(root);
    expect(project.findings).toEqual([]);
    const greet = project.tools.find((t) => t.id === "greet")!;
    expect([greet.type, greet.manifestFile, greet.files.map((f) => f.path)]).toEqual(["knowledge", ".ai/tools/hello-plugin/skills/greet/SKILL.md", ["SKILL.md"]]);
  });

  test("mcp.json servers become mcp_server tools sourced <plugin>/mcp.json#<server>, owning the plugin's files but skills/", () => {
    const root = makeProject({
      ".ai/tools/dev/plugin.json": JSON.stringify({ $schema: SCHEMA, name: "dev", version: "1.2.0" }),
      ".ai/tools/dev/mcp.json": JSON.stringify({ $schema: MCP_SCHEMA, mcpServers: { local: { type: "stdio", command: "node", args: ["${PLUGIN_ROOT}/server.js", "{literal}"], env: { CONFIG: "${PLUGIN_ROOT}/c.json" } } } }),
      ".ai/tools/dev/server.js": "",
      ".ai/tools/dev/skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n",
    });
    const project = readProject(root);
    expect(project.findings).toEqual([]);
    const local = project.tools.find((t) => t.id === "local")!;
    expect([local.type, local.version, local.manifestFile, local.executor?.id]).toEqual(["mcp_server", "1.2.0", ".ai/tools/dev/mcp.json#local", "subprocess"]);
    expect(local.config).toEqual({ transport: "stdio", command: "node", args: ["./server.js", "{{literal}}"], env: { CONFIG: "./c.json", PLUGIN_ROOT: "." } });
    expect(local.files.map((f) => f.path)).toEqual(["mcp.json", "plugin.json", "server.js"]);
    expect(project.tools.find((t) => t.id === "s")?.type).toBe("knowledge");
  });

  test("the spec's mcp.json example: the remotes map to http_client; the ${PLUGIN_DATA} server is skipped with a warning", () => {
    const read = pluginServers(real("spec-mcp.json"), { ok: true, version: "0.0.0", problems: [], name: "p" });
    expect(read.servers.map((s) => s.name)).toEqual(["deployment-api", "legacy-events"]);
    expect(read.servers[0]!.manifest).toMatchObject({ executor: "http_client", config: { transport: "streamable-http", url: "https://deploy.example.com/mcp", headers: { "X-Tenant": "public-tenant" } }, requires: [{ "net.outbound": ["deploy.example.com"] }] });
    expect(read.problems).toEqual([expect.objectContaining({ rule: "plugin/mcp", pointer: "/mcpServers/local-validator", message: expect.stringContaining("${PLUGIN_DATA}") })]);
  });

  test("the spec's full manifest is valid", () => {
    expect(checkPluginManifest(real("spec-plugin-full.json"))).toEqual({ ok: true, name: "plugin-name", version: "1.2.0", problems: [] });
  });
});

describe("bad plugins", () => {
  test.each([
    ["no $schema", { name: "p" }, "plugin.json has no $schema"],
    ["another spec version", { $schema: "https://agent-plugins.org/schemas/9.0.0/plugin.schema.json", name: "p" }, "is not an Agent Plugins version kiwi reads"],
    ["a missing name", { $schema: SCHEMA }, "plugin.json has no name"],
    ["a name with capitals", { $schema: SCHEMA, name: "My-Plugin" }, 'name "My-Plugin" is not a plugin name'],
    ["a double period", { $schema: SCHEMA, name: "a..b" }, 'name "a..b" is not a plugin name'],
    ["an author with another field", { $schema: SCHEMA, name: "p", author: { name: "x", twitter: "y" } }, "author is not an object of string name, email and url"],
  ])("%s rejects the plugin: no tool from it", (_what, manifest, message) => {
    const root = makeProject({ ".ai/tools/p/plugin.json": JSON.stringify(manifest), ".ai/tools/p/skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n" });
    const project = readProject(root);
    expect(project.findings.find((f) => f.rule === "plugin/manifest")).toMatchObject({ severity: "error", file: ".ai/tools/p/plugin.json", message: expect.stringContaining(message) });
    expect(project.tools.some((t) => t.id === "s")).toBe(false);
  });

  test("an unknown field is reported and ignored", () => {
    const root = makeProject({ ".ai/tools/p/plugin.json": JSON.stringify({ $schema: SCHEMA, name: "p", hooks: {} }) });
    expect(readProject(root).findings).toEqual([expect.objectContaining({ rule: "plugin/field", severity: "warning", message: "hooks is not an Agent Plugins manifest field, so it is ignored", line: 1 })]);
  });

  test.each([
    ["a command with spaces", { type: "stdio", command: "node server.js" }, "command is not one executable token"],
    ["a command leaving the plugin", { type: "stdio", command: "../bin/x" }, "leaves the plugin"],
    ["a cwd that is not plugin-relative", { type: "stdio", command: "node", cwd: "data" }, 'cwd "data" is not a path inside the plugin'],
    ["env setting PLUGIN_ROOT", { type: "stdio", command: "node", env: { PLUGIN_ROOT: "/" } }, "env sets PLUGIN_ROOT or PLUGIN_DATA"],
    ["plain http to a public host", { type: "streamable-http", url: "http://example.com/mcp" }, "url is not https"],
    ["${PLUGIN_ROOT} in a remote url", { type: "streamable-http", url: "https://example.com/${PLUGIN_ROOT}/mcp" }, "it uses ${PLUGIN_ROOT} in a remote server's url or headers, but that is a folder path on disk"],
    ["a header name that is no HTTP token", { type: "streamable-http", url: "https://example.com/mcp", headers: { "X Tenant": "a" } }, 'header name "X Tenant" is not an HTTP header name'],
    ["an unknown type", { type: "websocket", url: "wss://x" }, 'type "websocket" is not stdio, streamable-http or sse'],
    ["no type", { command: "node" }, "it has no type (stdio, streamable-http or sse)"],
    ["a field of another variant", { type: "stdio", command: "node", url: "https://x" }, "url is not a stdio server field"],
  ])("%s: that server is skipped with a warning, the others load", (_what, server, message) => {
    const read = pluginServers({ $schema: MCP_SCHEMA, mcpServers: { bad: server, good: { type: "stdio", command: "node" } } }, { ok: true, version: "0.0.0", problems: [] });
    expect(read.servers.map((s) => s.name)).toEqual(["good"]);
    expect(read.problems).toEqual([expect.objectContaining({ rule: "plugin/mcp", pointer: "/mcpServers/bad", message: expect.stringContaining(message) })]);
  });

  test.each(["python_runtime", "node_runtime", "subprocess"])("a server named %s, a built-in's id, is skipped: it would replace kiwi's own tool", (name) => {
    const read = pluginServers({ $schema: MCP_SCHEMA, mcpServers: { [name]: { type: "stdio", command: "node" }, good: { type: "stdio", command: "node" } } }, { ok: true, version: "0.0.0", problems: [] });
    expect(read.servers.map((s) => s.name)).toEqual(["good"]);
    expect(read.problems).toEqual([expect.objectContaining({ rule: "plugin/mcp", pointer: `/mcpServers/${name}`, message: `server "${name}" is skipped: its name is kiwi's built-in ${name}, which a plugin's server must not replace` })]);
  });

  test("an mcp.json without $schema says it has none", () => {
    const read = pluginServers({ mcpServers: { a: { type: "stdio", command: "node" } } }, { ok: true, version: "0.0.0", problems: [] });
    expect(read.servers).toEqual([]);
    expect(read.problems).toEqual([expect.objectContaining({ rule: "plugin/mcp", pointer: "", message: "mcp.json has no $schema, so the plugin's MCP servers are not read" })]);
  });

  test("an mcp.json of another version disables the plugin's MCP servers, not its skills", () => {
    const root = makeProject({
      ".ai/tools/p/plugin.json": JSON.stringify({ $schema: SCHEMA, name: "p" }),
      ".ai/tools/p/mcp.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.1.0/mcp.schema.json", mcpServers: { a: { type: "stdio", command: "node" } } }),
      ".ai/tools/p/skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n",
    });
    const project = readProject(root);
    expect(project.findings).toEqual([expect.objectContaining({ rule: "plugin/mcp", severity: "warning", file: ".ai/tools/p/mcp.json" })]);
    expect(project.tools.filter((t) => t.root.startsWith(".ai/tools/p")).map((t) => t.id)).toEqual(["s"]);
  });
});

test("a plugin.json with no components and no Agent Plugins schema (Claude Code's .claude-plugin/plugin.json) is not taken for an Agent Plugin", () => {
  const root = makeProject({ ".ai/tools/cc/.claude-plugin/plugin.json": JSON.stringify({ name: "cc", version: "1.0.0" }) });
  expect(readProject(root).findings.some((f) => f.rule.startsWith("plugin/"))).toBe(false);
});

describe("where a server's fields are in mcp.json", () => {
  test("a field a server entry gives is found at its own key; what kiwi adds or derives, at the entry", () => {
    const at = "/mcpServers/notes";
    expect(serverPointer(at, "/config/env/NOTES_TOKEN")).toBe("/mcpServers/notes/env/NOTES_TOKEN");
    expect(serverPointer(at, "/config/args/1")).toBe("/mcpServers/notes/args/1");
    expect(serverPointer(at, "/config/headers/Authorization")).toBe("/mcpServers/notes/headers/Authorization");
    expect(serverPointer(at, "/config/command")).toBe("/mcpServers/notes/command");
    expect(serverPointer(at, "/config/transport")).toBe(at);
    expect(serverPointer(at, "/config/environment")).toBe(at);
    expect(serverPointer(at, "/requires/0")).toBe(at);
  });

  test("a discovered server locates its fields in a pretty-printed mcp.json, and PLUGIN_ROOT (kiwi's own) at the env it joins", () => {
    const mcp = JSON.stringify({ $schema: MCP_SCHEMA, mcpServers: { notes: { type: "stdio", command: "node", args: ["${PLUGIN_ROOT}/server.js"], env: { LEVEL: "debug" } } } }, null, 2);
    const root = makeProject({ ".ai/tools/p/plugin.json": JSON.stringify({ $schema: SCHEMA, name: "p", version: "1.0.0" }), ".ai/tools/p/mcp.json": mcp });
    const server = readProject(root).tools.find((t) => t.id === "notes")!;
    const lineOf = (text: string) => mcp.split("\n").findIndex((l) => l.includes(text)) + 1;
    expect(server.locate("/config/env/LEVEL")?.line).toBe(lineOf('"LEVEL"'));
    expect(server.locate("/config/args/0")?.line).toBe(lineOf("server.js"));
    expect(server.locate("/config/env/PLUGIN_ROOT")?.line).toBe(lineOf('"env"'));
    expect(server.locate("/config/transport")?.line).toBe(lineOf('"notes"'));
  });
});
