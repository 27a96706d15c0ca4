// Projects with MCP servers for the end-to-end tests: the SDK-built fixture (with a state file that
// makes it rug-pull between runs), tools on it, and the reference servers from node_modules.
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/kiwi.ts";
import { makeTemp, writeTree } from "../helpers/tree.ts";

export const FIXTURES = join(REPO_ROOT, "test", "fixtures", "mcp");
export const FIXTURE = join(FIXTURES, "fixture-server.mjs");
export const RAW = join(FIXTURES, "raw-server.mjs");
export const EVERYTHING = join(REPO_ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

export interface ServerSpec {
  id: string;
  script: string;
  args?: string[];
  env?: Record<string, string>;
  /** config.timeout in seconds. */
  timeout?: number;
  /** kiwi_mcp's config.startup_timeout, seconds. */
  startupTimeout?: number;
}

/**
 * What a sandboxed server may read: the repo (scripts, fixtures) and node_modules at its real path
 * as well, for a checkout whose node_modules links to another's (a worktree): the sandbox shows a
 * declared folder as the host has it, and a link in it leads out only to what is declared too.
 */
const MODULES = realpathSync(join(REPO_ROOT, "node_modules"));
export const READABLE = MODULES.startsWith(`${REPO_ROOT}/`) ? [REPO_ROOT] : [REPO_ROOT, MODULES];

/** A stdio mcp_server manifest: node runs `script`; the repo (with its node_modules) and the project are readable in a sandbox. */
export function stdioServer(root: string, spec: ServerSpec): string {
  const env = Object.entries(spec.env ?? {}).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`);
  return [
    `tool_id: ${spec.id}`,
    "tool_type: mcp_server",
    "version: 1.0.0",
    "executor: subprocess",
    "description: an MCP server for kiwi's tests",
    "config:",
    "  transport: stdio",
    "  command: node",
    `  args: ${JSON.stringify([spec.script, ...(spec.args ?? [])])}`,
    ...(spec.timeout ? [`  timeout: ${spec.timeout}`] : []),
    ...(spec.startupTimeout ? [`  startup_timeout: ${spec.startupTimeout}`] : []),
    ...(env.length ? ["  env:", ...env] : []),
    "requires:",
    `  - fs.read: ${JSON.stringify([...READABLE, root])}`,
    "validation:",
    "  child_schemas:",
    "    - match: { tool_type: mcp_tool }",
    "      schema: { type: object, required: [config], properties: { config: { type: object, required: [tool_name] } } }",
    "",
  ].join("\n");
}

/** An mcp_tool manifest calling `name` on `server` with the given parameter declarations (YAML). */
export function mcpTool(id: string, server: string, name: string, parameters: string): string {
  return [`tool_id: ${id}`, "tool_type: mcp_tool", "version: 1.0.0", `executor: ${server}`, `description: calls ${name} on ${server}`, "config:", `  tool_name: ${name}`, "parameters:", parameters, ""].join("\n");
}

const ADD_PARAMS = ["  - name: a", "    type: integer", "    required: true", "  - name: b", "    type: integer", "    required: true"].join("\n");
const ECHO_PARAMS = ["  - name: message", "    type: string", "    required: true"].join("\n");

/** A project with the rug-pull fixture (state "v1") as fixture_mcp and tools add, echo, fail on it. */
export function fixtureProject(mode = "rugpull", extraEnv: Record<string, string> = {}): { root: string; setState: (s: string) => void } {
  const root = makeTemp("kiwi-mcp-e2e-");
  const state = join(root, "state");
  writeFileSync(state, "v1");
  writeTree(root, {
    ".ai/tools/fixture_mcp.yaml": stdioServer(root, { id: "fixture_mcp", script: FIXTURE, env: { FIXTURE_MODE: mode, FIXTURE_STATE: state, ...extraEnv } }),
    ".ai/tools/add.yaml": mcpTool("add", "fixture_mcp", "add", ADD_PARAMS),
    ".ai/tools/echo.yaml": mcpTool("echo", "fixture_mcp", "echo", ECHO_PARAMS),
    ".ai/tools/fail.yaml": mcpTool("fail", "fixture_mcp", "fail", "  []"),
  });
  return { root, setState: (s) => writeFileSync(state, s) };
}

/** The parsed lockfile of a project. */
export function readLock(root: string): { mcp_servers: Record<string, Record<string, unknown>> } {
  return JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
}
