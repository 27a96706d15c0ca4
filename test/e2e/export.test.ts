// `kiwi export` through the compiled binary: tools written back out as an Agent Skill, an Agent
// Plugin and a server.json, each read back by kiwi (or compared byte for byte) to show the round
// trip holds; what a format cannot say is refused with a coded error or named in a note.
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";
import { kiwiIn, listFiles } from "./lock-helpers.ts";

afterAll(cleanupTemps);
const REAL = join(import.meta.dir, "..", "fixtures", "real");

describe("--format skill", () => {
  test("a skill exports as the same bytes; a Markdown knowledge tool gains skill front matter", async () => {
    const root = makeProject({
      ".ai/tools/style_notes.md": "---\ntool_id: style_notes\ntool_type: knowledge\nversion: 1.2.0\nexecutor: null\ndescription: \"How we write: short sentences.\"\n---\n# Style\n\nShort sentences.\n",
    });
    cpSync(join(REAL, "skills", "brand-guidelines"), join(root, ".ai/tools/brand-guidelines"), { recursive: true });
    const out = makeTemp("kiwi-export-");
    const kiwi = kiwiIn(root);
    const skill = await kiwi.run(["export", "brand-guidelines", "--format", "skill", "--out", out]);
    expect([skill.exitCode, skill.stdout]).toEqual([0, `exported brand-guidelines as skill to ${out}/brand-guidelines (1 file)\n`]);
    expect(readFileSync(join(out, "brand-guidelines/SKILL.md"))).toEqual(readFileSync(join(REAL, "skills/brand-guidelines/SKILL.md")));
    const notes = await kiwi.run(["export", "style_notes", "--format", "skill", "--out", out]);
    expect(notes.exitCode).toBe(0);
    expect(notes.stderr).toContain("note: style_notes is exported as the skill style-notes");
    expect(readFileSync(join(out, "style-notes/SKILL.md"), "utf8")).toBe('---\nname: "style-notes"\ndescription: "How we write: short sentences."\nmetadata:\n  version: "1.2.0"\n---\n# Style\n\nShort sentences.\n');
    // The exported folder is a skill kiwi reads clean.
    const back = makeProject({});
    cpSync(join(out, "style-notes"), join(back, ".ai/tools/style-notes"), { recursive: true });
    const check = await kiwiIn(back).run(["check"]);
    expect([check.exitCode, check.stdout]).toEqual([0, ""]);
  });
});

test("a Claude Code plugin's skill with allowed-tools as a list is written as it is, with a note giving the Agent Skills string", async () => {
  const skill = "---\nname: review\ndescription: Reviews code\nallowed-tools:\n  - Read\n  - Grep\n---\nReview.\n";
  const root = makeProject({ ".ai/tools/cp/.claude-plugin/plugin.json": JSON.stringify({ name: "cp" }), ".ai/tools/cp/skills/review/SKILL.md": skill });
  const out = makeTemp("kiwi-export-");
  const r = await kiwiIn(root).run(["export", "review", "--format", "skill", "--out", out]);
  expect([r.exitCode, r.stderr]).toEqual([0, 'note: review: allowed-tools is a list, as Claude Code reads it; the Agent Skills spec (and kiwi, for a skill outside a Claude Code plugin) wants one space-separated string: "Read Grep". SKILL.md is written as it is\n']);
  expect(readFileSync(join(out, "review/SKILL.md"), "utf8")).toBe(skill);
});

describe("--format server.json", () => {
  test("an imported server.json exports back with its package, arguments and secret inputs", async () => {
    const root = makeProject({});
    cpSync(join(REAL, "server-json", "with-package.json"), join(root, "server.json"));
    const kiwi = kiwiIn(root);
    expect((await kiwi.run(["add", "--from", "server.json"])).exitCode).toBe(0);
    const out = makeTemp("kiwi-export-");
    const r = await kiwi.run(["export", "local-weather", "--format", "server.json", "--name", "io.github.user/local-weather", "--out", out]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(readFileSync(join(out, "server.json"), "utf8"))).toEqual({
      $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
      name: "io.github.user/local-weather",
      description: "Local MCP server distributed as an npm package.",
      version: "1.0.0",
      packages: [
        {
          registryType: "npm",
          identifier: "@modelcontextprotocol/server-weather",
          version: "1.0.0",
          transport: { type: "stdio" },
          packageArguments: [{ type: "positional", value: "--port" }, { type: "positional", value: "8080" }],
          environmentVariables: [{ name: "API_KEY", isRequired: true, isSecret: true }],
        },
      ],
    });
    // ...and imports again to the same kiwi config.
    const again = makeProject({});
    cpSync(join(out, "server.json"), join(again, "server.json"));
    expect((await kiwiIn(again).run(["add", "--from", "server.json"])).exitCode).toBe(0);
    const strip = (t: string) => t.split("\n").slice(1).join("\n");
    expect(strip(readFileSync(join(again, ".ai/tools/local-weather.yaml"), "utf8"))).toBe(strip(readFileSync(join(root, ".ai/tools/local-weather.yaml"), "utf8")));
  });

  test.each([
    ["a remote whose URL reads the environment", "remote.yaml", "tool_id: remote\ntool_type: mcp_server\nversion: 2.0.0\ndescription: Remote\nexecutor: http_client\nconfig:\n  transport: streamable-http\n  url: https://acme.example.com/mcp/${REGION}?t={{tenant}}\n  headers: { Authorization: \"Bearer ${TOKEN}\" }\n  secrets: [TOKEN]\nrequires:\n  - net.outbound: [acme.example.com]\n"],
    ["a package whose variable holds a literal ${HOME}", "pkg.yaml", "tool_id: pkg\ntool_type: mcp_server\nversion: 1.0.0\ndescription: Pkg\nexecutor: subprocess\nconfig:\n  transport: stdio\n  package: npm:@acme/pkg@1.0.0\n  args: [\"--dir=${{HOME}}/w\"]\n  env: { HOMEDIR: \"${{HOME}}/w\", DATA: \"${DATA_DIR}/x\" }\n"],
  ])("%s exports and imports back to the same integrity", async (_what, file, manifest) => {
    const root = makeProject({ [`.ai/tools/${file}`]: manifest });
    const id = file.replace(".yaml", "");
    const out = makeTemp("kiwi-export-");
    const r = await kiwiIn(root).run(["export", id, "--format", "server.json", "--name", `io.github.acme/${id}`, "--out", out]);
    expect([r.exitCode, r.stderr]).toEqual([0, ""]);
    const again = makeProject({});
    cpSync(join(out, "server.json"), join(again, "server.json"));
    const add = await kiwiIn(again).run(["add", "--from", "server.json"]);
    expect([add.exitCode, add.stderr]).toEqual([0, ""]);
    const hash = async (dir: string) => (await kiwiIn(dir).run(["hash", "tool", id])).stdout.split(" ")[0];
    expect(await hash(again)).toBe(await hash(root));
  });

  test("numbers in variables are exported as kiwi passes them at exec: 1.0 and 12345678901234567890 as written", async () => {
    // (A number in args is a check error, subprocess's child schema wants strings, so export refuses it.)
    const root = makeProject({ ".ai/tools/nums.yaml": "tool_id: nums\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  package: npm:nums-mcp@1.0.0\n  args: [--ratio, \"1.0\"]\n  env: { BIG: 12345678901234567890, RATIO: 1.0 }\n" });
    const out = makeTemp("kiwi-export-");
    expect((await kiwiIn(root).run(["export", "nums", "--format", "server.json", "--name", "io.github.acme/nums", "--out", out])).exitCode).toBe(0);
    const pkg = JSON.parse(readFileSync(join(out, "server.json"), "utf8")).packages[0];
    expect(pkg.packageArguments.map((a: { value: string }) => a.value)).toEqual(["--ratio", "1.0"]);
    expect(pkg.environmentVariables).toEqual([{ name: "BIG", value: "12345678901234567890" }, { name: "RATIO", value: "1.0" }]);
    expect((await kiwiIn(root).run(["export", "nums", "--format", "plugin", "--out", out])).exitCode).toBe(0);
    expect(JSON.parse(readFileSync(join(out, "nums/mcp.json"), "utf8")).mcpServers.nums).toMatchObject({ args: ["-y", "nums-mcp@1.0.0", "--ratio", "1.0"], env: { BIG: "12345678901234567890", RATIO: "1.0" } });
  });

  test("a secret's literal value in the manifest is never written into a server.json or an mcp.json", async () => {
    const root = makeProject({ ".ai/tools/leaky.yaml": "tool_id: leaky\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  package: npm:leaky-mcp@1.0.0\n  env: { API_TOKEN: tok-123, DB_PASS: hunter2, MODE: fast }\n  secrets: [DB_PASS]\n" });
    const out = makeTemp("kiwi-export-");
    const r = await kiwiIn(root).run(["export", "leaky", "--format", "server.json", "--name", "io.github.acme/leaky", "--out", out]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain("note: API_TOKEN is a secret, and its literal value is not exported");
    const text = readFileSync(join(out, "server.json"), "utf8");
    expect([text.includes("tok-123"), text.includes("hunter2")]).toEqual([false, false]);
    expect(JSON.parse(text).packages[0].environmentVariables).toEqual([{ name: "API_TOKEN", isRequired: true, isSecret: true }, { name: "DB_PASS", isRequired: true, isSecret: true }, { name: "MODE", value: "fast" }]);
    const plugin = await kiwiIn(root).run(["export", "leaky", "--format", "plugin", "--out", out]);
    expect(plugin.exitCode).toBe(0);
    expect(JSON.parse(readFileSync(join(out, "leaky/mcp.json"), "utf8")).mcpServers.leaky.env).toEqual({ MODE: "fast" });
  });

  test("a server that runs a local command cannot be a server.json", async () => {
    const root = makeProject({ ".ai/tools/local.yaml": "tool_id: local\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig: { transport: stdio, command: node, args: [/srv/x.js] }\n" });
    const r = await kiwiIn(root).run(["export", "local", "--format", "server.json", "--out", makeTemp("kiwi-export-")]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("error[E_USAGE]: local (.ai/tools/local.yaml): it runs a local command, which a server.json cannot describe");
  });
});

describe("--format plugin", () => {
  test("a skill and a stdio server with its files become one plugin that kiwi reads back as the same tools", async () => {
    const root = makeProject({
      ".ai/tools/notes/tool.yaml": "tool_id: notes\ntool_type: mcp_server\nversion: 1.0.0\ndescription: Notes server\nexecutor: subprocess\nconfig:\n  transport: stdio\n  command: node\n  args: [./server.js]\n  env: { MODE: fast, TOKEN: \"${NOTES_TOKEN}\" }\n",
      ".ai/tools/notes/server.js": "// server\n",
    });
    cpSync(join(REAL, "skills", "template-skill"), join(root, ".ai/tools/template-skill"), { recursive: true });
    const out = makeTemp("kiwi-export-");
    const r = await kiwiIn(root).run(["export", "notes", "template-skill", "--format", "plugin", "--name", "notes-kit", "--out", out, "--json"]);
    expect(r.exitCode).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.files).toEqual(["mcp.json", "plugin.json", "server.js", "skills/template-skill/SKILL.md"]);
    expect(result.notes).toEqual([expect.stringContaining("env TOKEN reads ${NOTES_TOKEN} from the environment, which Agent Plugins cannot express")]);
    expect(JSON.parse(readFileSync(join(out, "notes-kit/mcp.json"), "utf8"))).toEqual({ $schema: "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", mcpServers: { notes: { type: "stdio", command: "node", args: ["./server.js"], env: { MODE: "fast" } } } });
    const back = makeProject({});
    cpSync(join(out, "notes-kit"), join(back, ".ai/tools/notes-kit"), { recursive: true });
    const list = await kiwiIn(back).run(["check", "--json"]);
    expect(JSON.parse(list.stdout).findings.filter((f: { severity: string }) => f.severity === "error")).toEqual([]);
    expect((await kiwiIn(back).run(["lock"])).exitCode).toBe(0);
    const lock = JSON.parse(readFileSync(join(back, "tool.lock.json"), "utf8"));
    expect([lock.tools.notes.source, lock.tools["template-skill"].source]).toEqual([".ai/tools/notes-kit/mcp.json#notes", ".ai/tools/notes-kit/skills/template-skill/SKILL.md"]);
  });
});

describe("--format plugin, servers run from their package", () => {
  test("the launcher runs the program config.bin names, not the package's default one", async () => {
    const root = makeProject({
      ".ai/tools/everything.yaml": "tool_id: everything\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  package: npm:@acme/tools@2.1.0\n  bin: acme-mcp\n  args: [stdio]\n",
      ".ai/tools/fetch.yaml": "tool_id: fetch\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  package: pypi:acme-tools==2025.4.7\n  bin: acme-fetch\n",
      ".ai/tools/plain.yaml": "tool_id: plain\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  package: npm:plain-mcp@1.0.0\n",
    });
    const out = makeTemp("kiwi-export-");
    const r = await kiwiIn(root).run(["export", "everything", "fetch", "plain", "--format", "plugin", "--name", "kit", "--out", out]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(readFileSync(join(out, "kit/mcp.json"), "utf8")).mcpServers).toEqual({
      everything: { type: "stdio", command: "npx", args: ["-y", "-p", "@acme/tools@2.1.0", "acme-mcp", "stdio"] },
      fetch: { type: "stdio", command: "uvx", args: ["--from", "acme-tools==2025.4.7", "acme-fetch"] },
      plain: { type: "stdio", command: "npx", args: ["-y", "plain-mcp@1.0.0"] },
    });
    const json = await kiwiIn(root).run(["export", "everything", "--format", "server.json", "--name", "io.github.acme/everything", "--out", makeTemp("kiwi-export-")]);
    expect(json.exitCode).toBe(0);
    expect(json.stderr).toContain("note: config.bin acme-mcp has no place in a server.json");
  });
});

describe("--format plugin, from a plugin", () => {
  const plugin = {
    ".ai/tools/kit/plugin.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "kit", version: "3.1.0", description: "A kit" }),
    ".ai/tools/kit/mcp.json": JSON.stringify({
      $schema: "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json",
      mcpServers: { one: { type: "stdio", command: "node", args: ["${PLUGIN_ROOT}/bin/one.js"] }, two: { type: "stdio", command: "node", args: ["${PLUGIN_ROOT}/bin/one.js", "--two"] } },
    }),
    ".ai/tools/kit/bin/one.js": "// server\n",
  };

  test("a server read from a plugin exports with the plugin's plugin.json and mcp.json written anew, once", async () => {
    const root = makeProject(plugin);
    const out = makeTemp("kiwi-export-");
    const r = await kiwiIn(root).run(["export", "one", "--format", "plugin", "--name", "kit", "--out", out, "--json"]);
    expect([r.exitCode, r.stderr]).toEqual([0, ""]);
    expect(JSON.parse(r.stdout).files).toEqual(["bin/one.js", "mcp.json", "plugin.json"]);
    expect(JSON.parse(readFileSync(join(out, "kit/mcp.json"), "utf8")).mcpServers).toEqual({ one: { type: "stdio", command: "node", args: ["./bin/one.js"] } });
  });

  test("a server read from a Claude Code plugin exports as an Agent Plugin: its .claude-plugin/plugin.json and .mcp.json, and the CLAUDE_PLUGIN_ROOT kiwi sets, are not carried over", async () => {
    const root = makeProject({
      ".ai/tools/cc/.claude-plugin/plugin.json": JSON.stringify({ name: "cc", version: "2.0.0" }),
      ".ai/tools/cc/.mcp.json": JSON.stringify({ mcpServers: { one: { command: "${CLAUDE_PLUGIN_ROOT}/bin/one.js", args: ["--config", "${CLAUDE_PLUGIN_ROOT}/c.json"], env: { LEVEL: "debug" } } } }),
      ".ai/tools/cc/bin/one.js": "// server\n",
      ".ai/tools/cc/c.json": "{}\n",
    });
    const out = makeTemp("kiwi-export-");
    const r = await kiwiIn(root).run(["export", "one", "--format", "plugin", "--name", "cc", "--out", out, "--json"]);
    expect([r.exitCode, r.stderr]).toEqual([0, ""]);
    expect(JSON.parse(r.stdout).files).toEqual(["bin/one.js", "c.json", "mcp.json", "plugin.json"]);
    expect(JSON.parse(readFileSync(join(out, "cc/mcp.json"), "utf8")).mcpServers).toEqual({ one: { type: "stdio", command: "./bin/one.js", args: ["--config", "./c.json"], env: { LEVEL: "debug" } } });
    // Read back, it is one tool again, with no Claude Code files beside it.
    const back = makeProject({});
    cpSync(join(out, "cc"), join(back, ".ai/tools/cc"), { recursive: true });
    const check = await kiwiIn(back).run(["check"]);
    expect([check.exitCode, check.stdout]).toEqual([0, ""]);
  });

  test("a server from a Claude Code plugin.json's mcpServers (inline or a named file) exports the same way: no Claude Code manifest or server file is carried over", async () => {
    const root = makeProject({
      ".ai/tools/cc/.claude-plugin/plugin.json": JSON.stringify({ name: "cc", version: "2.0.0", mcpServers: "./config/servers.json" }),
      ".ai/tools/cc/config/servers.json": JSON.stringify({ one: { command: "${CLAUDE_PLUGIN_ROOT}/bin/one.js" } }),
      ".ai/tools/cc/bin/one.js": "// server\n",
      ".ai/tools/dd/.claude-plugin/plugin.json": JSON.stringify({ name: "dd", mcpServers: { two: { command: "node", args: ["${CLAUDE_PLUGIN_ROOT}/two.js"] } } }),
      ".ai/tools/dd/two.js": "// server\n",
    });
    for (const [id, files, server] of [
      ["one", ["bin/one.js", "mcp.json", "plugin.json"], { type: "stdio", command: "./bin/one.js" }],
      ["two", ["mcp.json", "plugin.json", "two.js"], { type: "stdio", command: "node", args: ["./two.js"] }],
    ] as const) {
      const out = makeTemp("kiwi-export-");
      const r = await kiwiIn(root).run(["export", id, "--format", "plugin", "--name", "x", "--out", out, "--json"]);
      expect([r.exitCode, r.stderr]).toEqual([0, ""]);
      expect(JSON.parse(r.stdout).files).toEqual(files);
      expect(JSON.parse(readFileSync(join(out, "x/mcp.json"), "utf8")).mcpServers).toEqual({ [id]: server });
    }
  });

  test("servers of one plugin export together: the files they share are the same files", async () => {
    const root = makeProject(plugin);
    const out = makeTemp("kiwi-export-");
    const r = await kiwiIn(root).run(["export", "one", "two", "--format", "plugin", "--name", "kit", "--out", out, "--json"]);
    expect([r.exitCode, r.stderr]).toEqual([0, ""]);
    expect(JSON.parse(r.stdout).files).toEqual(["bin/one.js", "mcp.json", "plugin.json"]);
    expect(Object.keys(JSON.parse(readFileSync(join(out, "kit/mcp.json"), "utf8")).mcpServers)).toEqual(["one", "two"]);
    expect(JSON.parse(readFileSync(join(out, "kit/plugin.json"), "utf8"))).toEqual({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "kit", version: "3.1.0" });
  });

  test("a server whose own file is named mcp.json or plugin.json is refused, not overwritten", async () => {
    const root = makeProject({
      ".ai/tools/cfg/tool.yaml": "tool_id: cfg\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig: { transport: stdio, command: node, args: [./server.js, ./mcp.json] }\n",
      ".ai/tools/cfg/server.js": "// server\n",
      ".ai/tools/cfg/mcp.json": "{\"servers\": []}\n",
    });
    const out = makeTemp("kiwi-export-");
    const r = await kiwiIn(root).run(["export", "cfg", "--format", "plugin", "--out", out]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("error[E_USAGE]: cfg (.ai/tools/cfg/tool.yaml): its file mcp.json is where the plugin's own mcp.json goes");
    expect(existsSync(join(out, "cfg"))).toBe(false);
  });
});

describe("bad requests", () => {
  test.each([
    [["export", "nope", "--format", "skill", "--out", "x"], 2, 'error[E_TOOL_NOT_FOUND]: no project tool has the id "nope"'],
    [["export", "doc", "--format", "zip", "--out", "x"], 2, 'error[E_USAGE]: --format "zip" is not one of skill, plugin, server.json'],
    [["export", "doc", "--format", "server.json", "--out", "x"], 2, "error[E_USAGE]: doc (.ai/tools/doc.md): a knowledge tool is not an MCP server"],
    [["export", "run", "--format", "skill", "--out", "x"], 2, "error[E_USAGE]: run (.ai/tools/run.yaml): a script tool is not a skill"],
    [["export", "doc", "--format", "skill"], 2, "error[E_USAGE]: kiwi export needs a tool, --format and --out"],
    [["export", "guide", "--format", "skill", "--out", "x"], 2, "error[E_USAGE]: guide (.ai/tools/guide/tool.yaml): the tool has no Markdown document"],
    [["export", "pictures", "--format", "skill", "--out", "x"], 2, "error[E_USAGE]: pictures (.ai/tools/pictures/tool.yaml): the tool has no Markdown document"],
    [["export", "long", "--format", "skill", "--out", "x"], 2, "error[E_USAGE]: long (.ai/tools/long.md): its description is 1025 characters; a skill's is at most 1024"],
  ])("%p", async (args, exitCode, message) => {
    const root = makeProject({
      ".ai/tools/long.md": `---\ntool_id: long\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\ndescription: ${"d".repeat(1025)}\n---\n# Long\n`,
      // A knowledge folder that names no document: its first file (a PNG) is not a skill's body.
      ".ai/tools/guide/tool.yaml": "tool_id: guide\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\ndescription: A guide\n",
      ".ai/tools/guide/assets/a.png": "\x89PNG\r\n",
      ".ai/tools/guide/guide.md": "# Guide\n",
      ".ai/tools/pictures/tool.yaml": "tool_id: pictures\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\ndescription: Pictures\nconfig: { entrypoint: a.png }\n",
      ".ai/tools/pictures/a.png": "\x89PNG\r\n",
      ".ai/tools/doc.md": "---\ntool_id: doc\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\ndescription: d\n---\n# Doc\n",
      ".ai/tools/run.yaml": "tool_id: run\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig: { entrypoint: run.sh }\n",
    });
    const r = await kiwiIn(root).run(args as string[]);
    expect([r.exitCode, r.stdout]).toEqual([exitCode, ""]);
    expect(r.stderr).toContain(message);
    expect(existsSync(join(root, "x"))).toBe(false);
  });

  test("a tool kiwi check finds an error in is refused (E_CHECK_FAILED, exit 1), naming the finding, and nothing is written", async () => {
    const root = makeProject({
      ".ai/tools/doc.md": "---\ntool_id: doc\ntool_type: knowledge\nversion: 1.0\nexecutor: null\ndescription: d\n---\n# Doc\n",
      ".ai/tools/ok.md": "---\ntool_id: ok\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\ndescription: d\n---\n# Ok\n",
    });
    const out = makeTemp("kiwi-export-");
    // It was exported as a skill with metadata.version "1.0", which kiwi itself would not lock.
    for (const args of [["doc", "--format", "skill"], ["ok", "doc", "--format", "plugin", "--name", "p"]]) {
      const r = await kiwiIn(root).run(["export", ...args, "--out", out]);
      expect([r.exitCode, r.stdout]).toEqual([1, ""]);
      expect(r.stderr).toContain('error[E_CHECK_FAILED]: doc does not pass kiwi check: .ai/tools/doc.md:4 universal/version-semver: version 1.0 is a number');
      expect(r.stderr).toContain('nothing was written; run "kiwi check doc" and fix the errors');
    }
    expect(listFiles(out)).toEqual([]);
    // Errors in other tools of the project do not stop it.
    expect((await kiwiIn(root).run(["export", "ok", "--format", "skill", "--out", out])).exitCode).toBe(0);
  });

  test("an existing target is never overwritten", async () => {
    const root = makeProject({ ".ai/tools/doc.md": "---\ntool_id: doc\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\ndescription: d\n---\n# Doc\n" });
    const out = makeTemp("kiwi-export-");
    writeFileSync(join(out, "marker"), "");
    expect((await kiwiIn(root).run(["export", "doc", "--format", "skill", "--out", out])).exitCode).toBe(0);
    const again = await kiwiIn(root).run(["export", "doc", "--format", "skill", "--out", out]);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain(`${out}/doc already exists`);
    expect(listFiles(out)).toEqual(["doc/SKILL.md", "marker"]);
  });
});
