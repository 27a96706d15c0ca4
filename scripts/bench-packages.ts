// What kiwi's npm packages cost, against baselines measured in the same run (medians, alternated):
//   1. a warm `kiwi exec` of an MCP tool whose server runs from its installed package
//      (config.package, server-everything) vs starting the same server file with `node` and
//      calling the tool with the SDK client directly, no kiwi at all;
//   2. a warm `kiwi install --frozen-lockfile` (the tree is in kiwi's cache) vs `npm ci --offline`
//      of the same package-lock with a warm npm cache;
//   3. once: the cold `kiwi install` (empty caches) vs a cold `npm ci`.
//   bun run build && bun run scripts/bench-packages.ts [--runs 9]
// Needs the npm registry (it installs server-everything 2026.8.31 from npmjs.org).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageLockOf } from "../src/deps/npm-lock.ts";
import { writeTree } from "../test/helpers/tree.ts";
import { compareAlternating, kiwiBinary, numberFlag, timeCommand } from "./bench-lib.ts";

const runs = numberFlag(process.argv, "--runs", 9);
const kiwi = kiwiBinary();
const node = Bun.which("node") ?? "node";
const dir = mkdtempSync(join(tmpdir(), "kiwi-bench-packages-"));
try {
  const project = writeTree(join(dir, "project"), {
    ".ai/tools/everything.yaml":
      "tool_id: everything\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  package: npm:@modelcontextprotocol/server-everything@2026.8.31\n  args: [stdio]\nvalidation:\n  child_schemas:\n    - match: { tool_type: mcp_tool }\n      schema: { type: object }\n",
    ".ai/tools/echo.yaml": "tool_id: echo\ntool_type: mcp_tool\nversion: 1.0.0\nexecutor: everything\nconfig: { tool_name: echo }\nparameters:\n  - { name: message, type: string, required: true }\n",
  });
  const base = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8", NO_COLOR: "1" };
  const env = { ...base, KIWI_CACHE_DIR: join(dir, "cache"), npm_config_cache: join(dir, "npm-cache") };
  const cold = performance.now();
  await timeCommand([kiwi, "install"], { cwd: project, env });
  const coldKiwi = performance.now() - cold;

  // The npm side: the same package-lock, installed by npm ci.
  const lock = JSON.parse(readFileSync(join(project, "tool.lock.json"), "utf8")).dependencies.everything.npm;
  const npmDir = join(dir, "npm-project");
  writeTree(npmDir, {
    "package.json": JSON.stringify({ name: "kiwi-tool-packages", version: "0.0.0", private: true, dependencies: lock.requires }),
    "package-lock.json": packageLockOf(lock),
  });
  const npmEnv = { ...base, npm_config_cache: join(dir, "npm-cache-cold"), npm_config_update_notifier: "false" };
  const coldNpmStart = performance.now();
  await timeCommand(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: npmDir, env: npmEnv });
  const coldNpm = performance.now() - coldNpmStart;
  console.log(`cold install (empty caches): kiwi install ${coldKiwi.toFixed(0)} ms, npm ci ${coldNpm.toFixed(0)} ms (x${(coldKiwi / coldNpm).toFixed(2)})`);

  // The direct call: node runs the server's bin, the SDK client calls echo.
  const server = join(npmDir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
  const client = join(dir, "client.mjs");
  const sdk = join(import.meta.dir, "..", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
  writeFileSync(
    client,
    `import { Client } from "${sdk}/client/index.js";\nimport { StdioClientTransport } from "${sdk}/client/stdio.js";\nconst c = new Client({ name: "bench", version: "1" });\nawait c.connect(new StdioClientTransport({ command: process.argv[2], args: [process.argv[3], "stdio"] }));\nconst r = await c.callTool({ name: "echo", arguments: { message: "hi" } });\nconsole.log(r.content[0].text);\nawait c.close();\n`,
  );
  await compareAlternating("an MCP tool call, server from its installed package", runs, ["node server + SDK client", () => timeCommand([node, client, node, server], { cwd: dir, env: base })], [
    ["kiwi exec echo (sandbox off)", () => timeCommand([kiwi, "exec", "echo", "--param", "message=hi", "--sandbox=off"], { cwd: project, env })],
    ["kiwi exec echo (sandboxed)", () => timeCommand([kiwi, "exec", "echo", "--param", "message=hi"], { cwd: project, env })],
  ]);
  await compareAlternating("installing the locked packages again, warm", runs, ["npm ci --offline", () => {
    rmSync(join(npmDir, "node_modules"), { recursive: true, force: true });
    return timeCommand(["npm", "ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: npmDir, env: npmEnv });
  }], [["kiwi install --frozen-lockfile", () => timeCommand([kiwi, "install", "--frozen-lockfile"], { cwd: project, env })]]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
