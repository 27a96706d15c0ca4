// Agent Skills and Agent Plugins read as kiwi tools, through the compiled binary: the real files
// from anthropics/skills and the Agent Plugins spec are checked, locked, installed and verified
// like any tool, and a changed byte anywhere in a skill's folder is caught.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, chmodSync, cpSync, existsSync, lstatSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rawMcpServer } from "../helpers/raw-mcp.ts";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";
import { kiwiIn } from "./lock-helpers.ts";

afterAll(cleanupTemps);
const REAL = join(import.meta.dir, "..", "fixtures", "real");

describe("Agent Skills", () => {
  const root = makeProject({ ".ai/tools/brand-guidelines/LICENSE.txt": "terms\n" });
  for (const name of ["template-skill", "brand-guidelines"]) cpSync(join(REAL, "skills", name), join(root, ".ai/tools", name), { recursive: true });
  const kiwi = kiwiIn(root);

  test("check, lock, install and verify treat each skill folder as a tool, SKILL.md and every other file hashed", async () => {
    const check = await kiwi.run(["check"]);
    expect([check.exitCode, check.stdout]).toEqual([0, ""]);
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    expect(lock.tools["brand-guidelines"]).toMatchObject({ type: "knowledge", source: ".ai/tools/brand-guidelines/SKILL.md", executor: null });
    expect(lock.tools["brand-guidelines"].files.map((f: { path: string }) => f.path)).toEqual(["LICENSE.txt", "SKILL.md"]);
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const verify = await kiwi.run(["verify"]);
    expect([verify.exitCode, verify.stderr]).toEqual([0, ""]);
  });

  test("kiwi show reads a skill like any tool", async () => {
    const r = await kiwi.run(["show", "template-skill", "--json"]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).chain.links).toEqual([expect.objectContaining({ id: "template-skill", type: "knowledge", status: "verified", source: ".ai/tools/template-skill/SKILL.md" })]);
  });

  test("an edit to a skill's file after the lock fails verify, naming the file", async () => {
    appendFileSync(join(root, ".ai/tools/brand-guidelines/LICENSE.txt"), "changed\n");
    const r = await kiwi.run(["verify"]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toContain("~ LICENSE.txt");
    expect(r.stderr).toContain("error[E_LOCK_STALE]");
  });

  test("a SKILL.md saved with CRLF line ends (as Windows editors save it) is the same skill, checked clean and locked", async () => {
    const text = "---\ndescription: Fills PDF forms.\nname: pdf-tools\n---\n# PDF tools\n";
    const crlf = makeProject({ ".ai/tools/pdf-tools/SKILL.md": text.replaceAll("\n", "\r\n") });
    const lf = makeProject({ ".ai/tools/pdf-tools/SKILL.md": text });
    // Its last front-matter line was read as name "pdf-tools\r", which no skill name or tool id is.
    const check = await kiwiIn(crlf).run(["check"]);
    expect([check.exitCode, check.stdout]).toEqual([0, ""]);
    expect((await kiwiIn(crlf).run(["lock"])).exitCode).toBe(0);
    expect((await kiwiIn(lf).run(["lock"])).exitCode).toBe(0);
    const manifestOf = (root: string) => JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).tools["pdf-tools"].manifest;
    expect(manifestOf(crlf)).toBe(manifestOf(lf));
  });

  test("a bad skill is a check error at the file and line, and lock refuses it", async () => {
    const bad = makeProject({ ".ai/tools/my-skill/SKILL.md": "---\nname: other-name\ndescription: d\n---\nSee [x](../../secret.md)\n" });
    const r = await kiwiIn(bad).run(["check"]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain('.ai/tools/my-skill/SKILL.md:2:1  error  skill/name  name "other-name" does not match the skill\'s folder "my-skill"\n    hint: rename the folder to other-name, or set name: my-skill');
    expect(r.stdout).toContain('.ai/tools/my-skill/SKILL.md:5:1  error  skill/path-escape  the link "../../secret.md" points outside the skill\'s folder');
    const lock = await kiwiIn(bad).run(["lock"]);
    expect(lock.exitCode).not.toBe(0);
  });
});

/** The plugin's server: one tool, whoami, answering with PLUGIN_ROOT and the config file it reads. */
const PLUGIN_SERVER = rawMcpServer({ name: "notes", tool: "whoami", description: "Says where it runs.", textExpression: '"root=" + process.env.PLUGIN_ROOT + " config=" + require("node:fs").readFileSync(process.env.CONFIG, "utf8").trim()' });

describe("Agent Plugins", () => {
  test("a plugin's skill and its stdio server are tools: checked, locked, installed, verified, and the server is called", async () => {
    const root = makeProject({
      ".ai/tools/notes-plugin/plugin.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "notes-plugin", version: "1.0.0" }),
      ".ai/tools/notes-plugin/mcp.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", mcpServers: { notes: { type: "stdio", command: "node", args: ["${PLUGIN_ROOT}/server.js"], env: { CONFIG: "${PLUGIN_ROOT}/config.txt" } } } }),
      ".ai/tools/notes-plugin/server.js": PLUGIN_SERVER,
      ".ai/tools/notes-plugin/config.txt": "v1\n",
      ".ai/tools/whoami.yaml": "tool_id: whoami\ntool_type: mcp_tool\nversion: 1.0.0\nexecutor: notes\nconfig: { tool_name: whoami }\nparameters: []\n",
    });
    cpSync(join(REAL, "plugins", "hello-plugin", "skills"), join(root, ".ai/tools/notes-plugin/skills"), { recursive: true });
    const kiwi = kiwiIn(root);
    const check = await kiwi.run(["check"]);
    expect(check.stdout.includes(" error ")).toBe(false);
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    expect(lock.tools.notes).toMatchObject({ type: "mcp_server", source: ".ai/tools/notes-plugin/mcp.json#notes" });
    expect(lock.tools.notes.files.map((f: { path: string }) => f.path)).toEqual(["config.txt", "mcp.json", "plugin.json", "server.js"]);
    expect(lock.tools.greet).toMatchObject({ type: "knowledge", source: ".ai/tools/notes-plugin/skills/greet/SKILL.md" });
    expect(Object.keys(lock.mcp_servers)).toEqual(["notes"]);
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const verify = await kiwi.run(["verify"]);
    expect([verify.exitCode, verify.stderr]).toEqual([0, ""]);
    const r = await kiwi.run(["exec", "whoami", "--sandbox=off"]);
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, "root=. config=v1\n", "warning: notes declares no validation.child_schemas, so whoami is not checked against it\n"]);
    writeFileSync(join(root, ".ai/tools/notes-plugin/config.txt"), "v2\n");
    const tampered = await kiwi.run(["exec", "whoami", "--sandbox=off"]);
    expect(tampered.exitCode).not.toBe(0);
    expect(tampered.stderr).toContain("notes");
  });
});

const CLAUDE_SERVER = rawMcpServer({ name: "notes", tool: "whoami", description: "Says where it runs.", textExpression: '"root=" + process.env.CLAUDE_PLUGIN_ROOT + " config=" + require("node:fs").readFileSync(process.env.CONFIG, "utf8").trim() + " token=" + process.env.NOTES_TOKEN' });

/** A Claude Code plugin as Claude Code's docs lay it out: the manifest in .claude-plugin/, components at the root. */
function claudePlugin(prefix: string): Record<string, string> {
  return {
    [`${prefix}/.claude-plugin/plugin.json`]: JSON.stringify({ name: "notes-plugin", version: "1.3.0", description: "Notes", author: { name: "A" } }),
    [`${prefix}/.mcp.json`]: JSON.stringify({ mcpServers: { notes: { command: "${CLAUDE_PLUGIN_ROOT}/server.js", args: ["--config", "${CLAUDE_PLUGIN_ROOT}/config.txt"], env: { CONFIG: "${CLAUDE_PLUGIN_ROOT}/config.txt", NOTES_TOKEN: "${NOTES_TOKEN}" } } } }),
    [`${prefix}/server.js`]: `#!/usr/bin/env node\n${CLAUDE_SERVER}`,
    [`${prefix}/config.txt`]: "v1\n",
    [`${prefix}/commands/hi.md`]: "---\ndescription: Say hi\n---\nSay hi to $ARGUMENTS\n",
    [`${prefix}/agents/reviewer.md`]: "---\nname: reviewer\ndescription: Reviews code\n---\nYou review.\n",
    [`${prefix}/hooks/hooks.json`]: JSON.stringify({ hooks: { PostToolUse: [{ matcher: "Write", hooks: [{ type: "command", command: "${CLAUDE_PLUGIN_ROOT}/fmt.sh" }] }] } }),
    [`${prefix}/skills/note-taking/SKILL.md`]: "---\nname: note-taking\ndescription: Takes notes.\n---\nTake notes.\n",
  };
}

describe("Claude Code plugins", () => {
  test("its skills and .mcp.json servers are tools, read as Claude Code reads them; commands, agents and hooks are named once as not read", async () => {
    const root = makeProject({ ...claudePlugin(".ai/tools/notes-plugin"), ".ai/tools/whoami.yaml": "tool_id: whoami\ntool_type: mcp_tool\nversion: 1.0.0\nexecutor: notes\nconfig: { tool_name: whoami }\nparameters: []\n" });
    chmodSync(join(root, ".ai/tools/notes-plugin/server.js"), 0o755);
    const kiwi = kiwiIn(root);
    // Each JSON and Markdown file of the plugin was read as a kiwi manifest: a dozen universal/* errors.
    const check = await kiwi.run(["check"]);
    expect([check.exitCode, check.stdout.trim().split("\n")[0]]).toEqual([0, ".ai/tools/notes-plugin/.claude-plugin/plugin.json:1:1  info  plugin/claude-code  a Claude Code plugin: kiwi reads its skills (skills/ and plugin.json skills) and MCP servers (.mcp.json and plugin.json mcpServers) as tools; commands/, agents/, hooks/ are Claude Code's own and not read (not checked, locked or run)"]);
    expect(check.stdout).not.toContain("universal/");
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    expect(lock.tools.notes).toMatchObject({ type: "mcp_server", version: "1.3.0", source: ".ai/tools/notes-plugin/.mcp.json#notes" });
    expect(lock.tools.notes.files.map((f: { path: string }) => f.path)).toEqual([".claude-plugin/plugin.json", ".mcp.json", "agents/reviewer.md", "commands/hi.md", "config.txt", "hooks/hooks.json", "server.js"]);
    expect(lock.tools["note-taking"]).toMatchObject({ type: "knowledge", source: ".ai/tools/notes-plugin/skills/note-taking/SKILL.md" });
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const r = await kiwi.run(["exec", "whoami", "--sandbox=off"], { NOTES_TOKEN: "t1" });
    expect([r.exitCode, r.stdout]).toEqual([0, "root=. config=v1 token=t1\n"]);
    writeFileSync(join(root, ".ai/tools/notes-plugin/hooks/hooks.json"), "{}");
    const tampered = await kiwi.run(["exec", "whoami", "--sandbox=off"], { NOTES_TOKEN: "t1" });
    expect([tampered.exitCode === 0, tampered.stderr.includes("notes")]).toEqual([false, true]);
  });

  test("a server kiwi cannot run as written is skipped with a plugin/mcp warning naming it; a bad manifest is plugin/manifest", async () => {
    const root = makeProject({
      ".ai/tools/p/.claude-plugin/plugin.json": JSON.stringify({ name: "p" }),
      ".ai/tools/p/.mcp.json": JSON.stringify({ api: { type: "http", url: "https://api.example.com/mcp", headers: { Authorization: "Bearer ${API_TOKEN}" } }, db: { command: "node", args: ["${DB:-x}"] } }),
      ".ai/tools/q/.claude-plugin/plugin.json": JSON.stringify({ name: "Not Kebab" }),
    });
    const kiwi = kiwiIn(root);
    const check = await kiwi.run(["check"]);
    expect(check.stdout).toContain('.ai/tools/p/.mcp.json:1:110  warning  plugin/mcp  server "db" is skipped: it uses ${DB:-…}, a default kiwi does not expand');
    expect(check.stdout).toContain('.ai/tools/q/.claude-plugin/plugin.json:1:2  error  plugin/manifest  name "Not Kebab" is not a plugin name');
    const show = await kiwi.run(["show", "api", "--json"]);
    expect(show.exitCode).toBe(0);
    const list = JSON.parse((await kiwi.run(["list", "--json"])).stdout);
    expect(list.tools.filter((t: { builtin?: boolean; source?: string }) => t.source?.startsWith(".ai/")).map((t: { id: string }) => t.id)).toEqual(["api"]);
  });
});

test("a skill of a Claude Code plugin is read as Claude Code reads it: allowed-tools as a list, and Claude Code's own fields, pass; the same skill alone is held to the Agent Skills spec", async () => {
  const front = (name: string) => `---\nname: ${name}\ndescription: Reviews code\nallowed-tools:\n  - Read\n  - Grep\nmodel: sonnet\nuser-invocable: true\nargument-hint: "[file]"\n---\nReview $ARGUMENTS\n`;
  const root = makeProject({ ".ai/tools/cp/.claude-plugin/plugin.json": JSON.stringify({ name: "cp" }), ".ai/tools/cp/skills/review/SKILL.md": front("review"), ".ai/tools/alone/SKILL.md": front("alone") });
  const kiwi = kiwiIn(root);
  const check = await kiwi.run(["check"]);
  expect(check.exitCode).toBe(1);
  // The plugin's skill was refused with "allowed-tools is not a string", so the plugin could not be locked.
  expect(check.stdout).not.toContain(".ai/tools/cp/");
  expect(check.stdout).toContain(".ai/tools/alone/SKILL.md:4:1  error  skill/field  allowed-tools is not a string");
  expect(check.stdout).toContain(".ai/tools/alone/SKILL.md:7:1  warning  skill/field  model is not an Agent Skills field");
  rmSync(join(root, ".ai/tools/alone"), { recursive: true });
  expect((await kiwi.run(["lock"])).exitCode).toBe(0);
});

test("a plugin server started through npx is told to become a kiwi manifest, not to declare net.outbound its mcp.json has no place for", async () => {
  const root = makeProject({
    ".ai/tools/ap/plugin.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "ap" }),
    ".ai/tools/ap/mcp.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", mcpServers: { github: { type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-github"] } } }),
    ".ai/tools/gh/.claude-plugin/plugin.json": JSON.stringify({ name: "gh" }),
    ".ai/tools/gh/.mcp.json": JSON.stringify({ mcpServers: { fetch: { command: "uvx", args: ["mcp-server-fetch"] } } }),
  });
  const r = await kiwiIn(root).run(["check"]);
  expect(r.exitCode).toBe(0);
  expect(r.stdout).toContain("hint: a plugin's mcp.json cannot declare net.outbound: write a kiwi manifest for the server under another id (config.package: npm:<package>@<version>), which kiwi locks, installs and starts directly");
  expect(r.stdout).toContain("hint: a plugin's .mcp.json cannot declare net.outbound: write a kiwi manifest for the server under another id (config.package: pypi:<package>==<version>)");
});

describe("a Claude Code marketplace", () => {
  const market = (prefix: string) => ({
    [`${prefix}/.claude-plugin/marketplace.json`]: JSON.stringify({ name: "market", owner: { name: "A" }, plugins: [{ name: "notes-plugin", source: "./plugins/notes-plugin" }] }),
    ...claudePlugin(`${prefix}/plugins/notes-plugin`),
  });

  test("copied into .ai/tools/, its plugins are read and its marketplace.json is no tool", async () => {
    const root = makeProject(market(".ai/tools/market"));
    // marketplace.json was read as a kiwi manifest: universal/type-unknown and version-semver errors.
    const check = await kiwiIn(root).run(["check"]);
    expect(check.exitCode).toBe(0);
    expect(check.stdout).not.toContain("marketplace.json");
    const list = await kiwiIn(root).run(["list"]);
    expect(list.stdout.split("\n").filter((l) => !l.includes("built-in")).map((l) => l.split(/\s+/)[0]).filter(Boolean)).toEqual(["note-taking", "notes"]);
  });

  test("kiwi add --from refuses it as a catalog, naming its plugin folders", async () => {
    const src = makeProject(market("market"));
    const r = await kiwiIn(makeProject({})).run(["add", "--from", join(src, "market")]);
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toContain(`error[E_INPUT_INVALID]: ${join(src, "market")} is a Claude Code marketplace (.claude-plugin/marketplace.json), a catalog of plugins, not one plugin\n  hint: pass the folder of one of its plugins: ${join(src, "market", "plugins/notes-plugin")}`);
  });
});

describe("kiwi add --from <folder>", () => {
  test("a Claude Code plugin folder is copied in and its skills and servers listed, at its plugin.json's version", async () => {
    const src = makeProject(claudePlugin("notes-plugin"));
    const kiwi = kiwiIn(makeProject({}));
    const r = await kiwi.run(["add", "--from", join(src, "notes-plugin"), "--json"]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ tool: "notes-plugin", version: "1.3.0", format: "plugin", path: ".ai/tools/notes-plugin", tools: ["note-taking", "notes"] });
  });

  test("a skill folder is copied into .ai/tools/ and checked; a plugin folder too, with its tools listed", async () => {
    const root = makeProject({});
    const kiwi = kiwiIn(root);
    const skill = await kiwi.run(["add", "--from", join(REAL, "skills", "template-skill")]);
    expect([skill.exitCode, skill.stdout.split("\n")[0]]).toEqual([0, `imported template-skill@0.0.0 from skill (${join(REAL, "skills", "template-skill")})`]);
    expect(readFileSync(join(root, ".ai/tools/template-skill/SKILL.md"))).toEqual(readFileSync(join(REAL, "skills/template-skill/SKILL.md")));
    const plugin = await kiwi.run(["add", "--from", join(REAL, "plugins", "hello-plugin"), "--json"]);
    expect(plugin.exitCode).toBe(0);
    expect(JSON.parse(plugin.stdout)).toMatchObject({ tool: "hello-plugin", format: "plugin", path: ".ai/tools/hello-plugin", tools: ["greet"] });
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
  });

  test("a plugin is reported at its plugin.json's version, not at the version of one of its skills", async () => {
    const src = makeProject({
      "my-plug/plugin.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "my-plug", version: "1.2.0" }),
      "my-plug/skills/a-skill/SKILL.md": '---\nname: a-skill\ndescription: d\nmetadata:\n  version: "2.0.0"\n---\nbody\n',
    });
    const kiwi = kiwiIn(makeProject({}));
    const r = await kiwi.run(["add", "--from", join(src, "my-plug")]);
    expect([r.exitCode, r.stdout.split("\n")[0], r.stderr]).toEqual([0, `imported my-plug@1.2.0 from plugin (${join(src, "my-plug")})`, ""]);
    expect((await kiwi.run(["list", "--json"])).stdout).toContain('"version": "2.0.0"');
  });

  test("a link to a skill folder imports the folder it names, not the link (which discovery would not follow)", async () => {
    const src = makeProject({ "store/my-skill/SKILL.md": "---\nname: my-skill\ndescription: d\n---\nbody\n", "store/my-skill/scripts/run.sh": "echo hi\n" });
    symlinkSync(join(src, "store/my-skill"), join(src, "my-skill"));
    const root = makeProject({});
    const r = await kiwiIn(root).run(["add", "--from", join(src, "my-skill")]);
    expect([r.exitCode, r.stdout.split("\n")[0], r.stderr]).toEqual([0, `imported my-skill@0.0.0 from skill (${join(src, "my-skill")})`, ""]);
    expect(lstatSync(join(root, ".ai/tools/my-skill")).isDirectory()).toBe(true);
    expect(readFileSync(join(root, ".ai/tools/my-skill/scripts/run.sh"), "utf8")).toBe("echo hi\n");
    expect((await kiwiIn(root).run(["lock"])).exitCode).toBe(0);
  });

  test("a skill that fails kiwi check is refused and nothing stays behind", async () => {
    const src = makeProject({ "my-skill/SKILL.md": "---\nname: other\ndescription: d\n---\n" });
    const root = makeProject({});
    const r = await kiwiIn(root).run(["add", "--from", join(src, "my-skill")]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error[E_CHECK_FAILED]: the tool imported from');
    expect(r.stderr).toContain('skill/name: name "other" does not match the skill\'s folder "my-skill"');
    expect(existsSync(join(root, ".ai/tools/my-skill"))).toBe(false);
  });

  test("a folder that is neither is E_INPUT_INVALID", async () => {
    const src = makeProject({ "stuff/readme.txt": "x" });
    const r = await kiwiIn(makeProject({})).run(["add", "--from", join(src, "stuff")]);
    expect([r.exitCode, r.stderr.includes("is a folder with neither SKILL.md nor plugin.json (nor .claude-plugin/plugin.json)")]).toEqual([2, true]);
  });
});
