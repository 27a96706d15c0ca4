// `kiwi add --from server.json` through the compiled binary: the registry's own example files, an
// npm package served by a real npm registry on 127.0.0.1 (the package is a hand-framed MCP stdio
// server), and a remote served by the SDK fixture over streamable HTTP. Each imported tool then goes
// through check, lock, install, verify and exec; bad files are refused with nothing written.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startHttpFixture } from "../mcp/servers.ts";
import { type NpmRegistry, startNpmRegistry } from "../helpers/npm-registry.ts";
import { type PypiIndex, startPypiIndex } from "../helpers/pypi-index.ts";
import { rawMcpServer } from "../helpers/raw-mcp.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";
import { kiwiIn, listFiles } from "./lock-helpers.ts";
import { mcpTool } from "./mcp-helpers.ts";

setDefaultTimeout(120_000);
const FIXTURES = join(import.meta.dir, "..", "fixtures", "real", "server-json");

/** The package's bin: a hand-framed MCP stdio server with one tool, forecast, reporting what it was given. */
const SERVER_JS = `#!/usr/bin/env node\n${rawMcpServer({
  name: "weather",
  tool: "forecast",
  description: "The forecast for a city.",
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  textExpression: '"sunny in " + msg.params.arguments.city + " (" + process.env.UNITS + ", key " + (process.env.WEATHER_KEY ? "set" : "unset") + ", argv " + process.argv.slice(2).join(" ") + ")"',
})}`;

const registry: NpmRegistry = startNpmRegistry();
registry.publish({ name: "kiwi-weather-mcp", version: "1.0.0", json: { bin: { "kiwi-weather-mcp": "server.js" } }, files: { "server.js": SERVER_JS } });
/** A stdio MCP server in plain Python, published as a wheel whose console script starts it. */
const PY_SERVER = `import json, os, sys

def main():
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        m = msg.get("method")
        if m == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "kiwi-py-weather", "version": "2.0.1"}}
        elif m == "tools/list":
            result = {"tools": [{"name": "forecast", "description": "The forecast.", "inputSchema": {"type": "object", "properties": {}}}]}
        elif m == "tools/call":
            result = {"content": [{"type": "text", "text": "py " + " ".join(sys.argv[1:]) + " units=" + os.environ.get("UNITS", "?")}]}
        else:
            result = {}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\\n")
        sys.stdout.flush()
`;
const index: PypiIndex = startPypiIndex();
index.publish({ name: "kiwi-py-weather", version: "2.0.1", files: { "kiwi_py_weather/__init__.py": PY_SERVER, "kiwi_py_weather-2.0.1.dist-info/entry_points.txt": "[console_scripts]\nkiwi-py-weather = kiwi_py_weather:main\n" } });
afterAll(() => {
  index.stop();
  registry.stop();
  cleanupTemps();
});

const withRegistry = { npm_config_registry: registry.url, npm_config_cache: makeTemp("kiwi-npm-cache-") };

const weatherServerJson = (pkg: Record<string, unknown> = {}) =>
  JSON.stringify({
    $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
    name: "io.github.acme/weather",
    description: "Weather forecasts",
    version: "1.0.0",
    packages: [
      {
        registryType: "npm",
        registryBaseUrl: "https://registry.npmjs.org",
        identifier: "kiwi-weather-mcp",
        version: "1.0.0",
        transport: { type: "stdio" },
        runtimeHint: "npx",
        runtimeArguments: [{ type: "positional", value: "-y" }],
        packageArguments: [{ type: "named", name: "--mode", default: "fast" }],
        environmentVariables: [
          { name: "UNITS", default: "celsius" },
          { name: "WEATHER_KEY", isSecret: true, isRequired: true },
        ],
        ...pkg,
      },
    ],
  });

describe("an npm package from server.json", () => {
  const root = makeProject({ ".ai/tools/forecast.yaml": mcpTool("forecast", "weather", "forecast", "  - { name: city, type: string, required: true }") });
  writeFileSync(join(root, "server.json"), weatherServerJson());
  const kiwi = kiwiIn(root, { ...withRegistry, WEATHER_KEY: "k-123-secret" });

  test("kiwi add --from writes an mcp_server pinned at the exact version, the secret referenced, and says what to run next", async () => {
    const r = await kiwi.run(["add", "--from", "server.json"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('imported weather@1.0.0 from server.json (npm:kiwi-weather-mcp@1.0.0)\nwrote .ai/tools/weather.yaml\nnext: run "kiwi lock" (and "kiwi install" for its packages)\n');
    const manifest = readFileSync(join(root, ".ai/tools/weather.yaml"), "utf8");
    expect(manifest).toBe(
      [
        "# Imported by kiwi add --from server.json: io.github.acme/weather 1.0.0 (npm:kiwi-weather-mcp@1.0.0)",
        "tool_id: weather",
        "tool_type: mcp_server",
        "version: 1.0.0",
        "description: Weather forecasts",
        "executor: subprocess",
        "config:",
        "  transport: stdio",
        "  package: npm:kiwi-weather-mcp@1.0.0",
        "  args:",
        "    - --mode",
        "    - fast",
        "  env:",
        "    UNITS: celsius",
        "    WEATHER_KEY: ${WEATHER_KEY}",
        "  secrets:",
        "    - WEATHER_KEY",
        "",
      ].join("\n"),
    );
    expect(manifest).not.toContain("k-123-secret");
    expect(r.stderr).toContain("note: /packages/0/runtimeArguments");
  });

  test("the imported tool passes check, lock, install, verify and exec (the package from the loopback registry)", async () => {
    expect((await kiwi.run(["check"])).exitCode).toBe(0);
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    expect(lock.dependencies.weather.npm.packages["node_modules/kiwi-weather-mcp"].integrity).toMatch(/^sha512-/);
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    expect((await kiwi.run(["verify"])).exitCode).toBe(0);
    const r = await kiwi.run(["exec", "forecast", "--param", "city=Oslo", "--sandbox=off"]);
    expect([r.exitCode, r.stdout]).toEqual([0, "sunny in Oslo (celsius, key set, argv --mode fast)\n"]);
  });

  test("a second import of the same server is refused: the tool exists", async () => {
    const r = await kiwi.run(["add", "--from", "server.json"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("error[E_USAGE]: a tool named weather already exists (.ai/tools/weather.yaml)");
    expect(r.stderr).toContain("--id");
  });
});

describe("a PyPI package from server.json", () => {
  test("is pinned with ==, resolved and installed by the real pip from a loopback index, and called", async () => {
    const root = makeProject({ ".ai/tools/forecast.yaml": mcpTool("forecast", "py-weather", "forecast", "  []") });
    writeFileSync(
      join(root, "server.json"),
      JSON.stringify({
        name: "io.github.acme/py-weather",
        description: "Weather in Python",
        version: "2.0.1",
        packages: [{ registryType: "pypi", identifier: "kiwi-py-weather", version: "2.0.1", runtimeHint: "uvx", transport: { type: "stdio" }, packageArguments: [{ type: "positional", value: "serve" }], environmentVariables: [{ name: "UNITS", default: "kelvin" }] }],
      }),
    );
    const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });
    const add = await kiwi.run(["add", "--from", "server.json"]);
    expect([add.exitCode, add.stdout.split("\n")[0]]).toEqual([0, "imported py-weather@2.0.1 from server.json (pypi:kiwi-py-weather==2.0.1)"]);
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    expect(JSON.stringify(lock.dependencies["py-weather"])).toContain("kiwi-py-weather");
    expect((await kiwi.run(["verify"])).exitCode).toBe(0);
    const r = await kiwi.run(["exec", "forecast", "--sandbox=off"], { PIP_INDEX_URL: "http://127.0.0.1:9/simple/" });
    expect([r.exitCode, r.stdout]).toEqual([0, "py serve units=kelvin\n"]);
  });
});

describe("a remote from server.json", () => {
  test("becomes an http_client server with its host declared, pinned and called over streamable HTTP", async () => {
    const server = await startHttpFixture("http");
    try {
      const root = makeProject({ ".ai/tools/echo.yaml": mcpTool("echo", "remote", "echo", "  - { name: message, type: string, required: true }") });
      const url = new URL(server.url);
      writeFileSync(
        join(root, "server.json"),
        JSON.stringify({
          name: "io.github.acme/remote",
          description: "A remote",
          version: "2.0.0",
          remotes: [{ type: "streamable-http", url: `http://{host}:${url.port}/mcp`, variables: { host: { default: "127.0.0.1" } }, headers: [{ name: "X-Api-Key", isSecret: true, isRequired: true }] }],
        }),
      );
      const kiwi = kiwiIn(root, { X_API_KEY: "abc" });
      const add = await kiwi.run(["add", "--from", "server.json", "--json"]);
      expect(add.exitCode).toBe(0);
      const result = JSON.parse(add.stdout);
      expect([result.ok, result.tool, result.source, result.path]).toEqual([true, "remote", `http://{host}:${url.port}/mcp`, ".ai/tools/remote.yaml"]);
      const manifest = readFileSync(join(root, ".ai/tools/remote.yaml"), "utf8");
      expect(manifest).toContain(`url: http://127.0.0.1:${url.port}/mcp`);
      expect(manifest).toContain("X-Api-Key: ${X_API_KEY}");
      expect(manifest).toContain(`- net.outbound:\n      - 127.0.0.1:${url.port}`);
      expect((await kiwi.run(["lock"])).exitCode).toBe(0);
      expect((await kiwi.run(["install"])).exitCode).toBe(0);
      const verify = await kiwi.run(["verify"]);
      expect([verify.exitCode, verify.stderr]).toEqual([0, ""]);
      const r = await kiwi.run(["exec", "echo", "--param", "message=hi"]);
      expect([r.exitCode, r.stdout]).toEqual([0, "hi\n"]);
    } finally {
      await server.stop();
    }
  });

  test("a server whose name makes the id of a built-in is refused: it would replace kiwi's runtime", async () => {
    const root = makeProject({});
    const doc = JSON.parse(readFileSync(join(FIXTURES, "with-remote.json"), "utf8"));
    writeFileSync(join(root, "server.json"), JSON.stringify({ ...doc, name: "io.github.acme/python_runtime" }));
    const r = await kiwiIn(root).run(["add", "--from", "server.json"]);
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toContain("error[E_USAGE]: a tool named python_runtime already exists (built into kiwi)");
    expect(r.stderr).toContain("hint: pass --id <another id>");
    expect(existsSync(join(root, ".ai/tools/python_runtime.yaml"))).toBe(false);
    expect((await kiwiIn(root).run(["add", "--from", "server.json", "--id", "acme_python"])).exitCode).toBe(0);
  });

  test("the registry's with-remote.json example imports as written", async () => {
    const root = makeProject({});
    copyFileSync(join(FIXTURES, "with-remote.json"), join(root, "with-remote.json"));
    const r = await kiwiIn(root).run(["add", "--from", "with-remote.json"]);
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(root, ".ai/tools/remote-weather.yaml"), "utf8")).toContain("url: https://api.example.com/mcp");
    expect((await kiwiIn(root).run(["check"])).exitCode).toBe(0);
  });
});

describe("bad server.json files: a coded error naming the file and field, nothing written", () => {
  test.each([
    ["the registry's package-version-latest.json", null, 'error[E_INPUT_INVALID]: bad.json at /packages/0/version: version "latest" floats'],
    ["a caret range", weatherServerJson({ version: "^1.0.0" }), 'error[E_INPUT_INVALID]: bad.json at /packages/0/version: "^1.0.0" is a version range, not one version'],
    ["an unknown registryType", weatherServerJson({ registryType: "gem" }), 'error[E_INPUT_INVALID]: bad.json at /packages/0/registryType: unknown registryType "gem"'],
    ["not JSON", "{ nope", "error[E_INPUT_INVALID]: bad.json: invalid JSON"],
  ])("%s", async (_what, text, message) => {
    const root = makeProject({});
    if (text === null) copyFileSync(join(FIXTURES, "package-version-latest.json"), join(root, "bad.json"));
    else writeFileSync(join(root, "bad.json"), text);
    const before = listFiles(join(root, ".ai"));
    const r = await kiwiIn(root).run(["add", "--from", "bad.json"]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain("hint:");
    expect(listFiles(join(root, ".ai"))).toEqual(before);
  });

  test("a file that does not exist, and --from with a reference", async () => {
    const root = makeProject({});
    const missing = await kiwiIn(root).run(["add", "--from", "nope.json"]);
    expect([missing.exitCode, missing.stderr.includes("error[E_INPUT_INVALID]: nope.json does not exist")]).toEqual([2, true]);
    const both = await kiwiIn(root).run(["add", "ghcr.io/a/b:1", "--from", "x.json"]);
    expect([both.exitCode, both.stderr.includes("error[E_USAGE]")]).toEqual([2, true]);
    expect(existsSync(join(root, ".ai/tools/b.yaml"))).toBe(false);
  });
});
