// server.json -> kiwi mcp_server manifest: the registry's own examples map as a user expects, and
// everything the registry refuses (ranges, latest, unknown registry types) is refused naming the field.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { KiwiError } from "../../src/errors.ts";
import { importServerJson } from "../../src/formats/server-json.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "real", "server-json");
const fixture = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), "utf8"));

const npmServer = (pkg: Record<string, unknown> = {}, top: Record<string, unknown> = {}) => ({
  name: "io.github.acme/weather",
  description: "Weather",
  version: "1.2.0",
  packages: [{ registryType: "npm", identifier: "@acme/weather-mcp", version: "1.2.0", transport: { type: "stdio" }, ...pkg }],
  ...top,
});

function refusal(doc: unknown, options = {}): KiwiError {
  try {
    importServerJson(doc, "server.json", options);
  } catch (error) {
    if (error instanceof KiwiError) return error;
    throw error;
  }
  throw new Error("the import was not refused");
}

describe("the registry's examples (docs/reference/server-json/examples/valid)", () => {
  test("an npm package becomes config.package pinned at its exact version; the secret is referenced, never a value", () => {
    const r = importServerJson(fixture("with-package.json"), "with-package.json");
    expect(r.id).toBe("local-weather");
    expect(r.kind).toBe("npm");
    expect(r.manifest).toEqual({
      tool_id: "local-weather",
      tool_type: "mcp_server",
      version: "1.0.0",
      description: "Local MCP server distributed as an npm package.",
      executor: "subprocess",
      config: { transport: "stdio", package: "npm:@modelcontextprotocol/server-weather@1.0.0", args: ["--port", "8080"], env: { API_KEY: "${API_KEY}" }, secrets: ["API_KEY"] },
    });
    expect(r.notes.some((n) => n.includes("/packages/0/packageArguments/0") && n.includes("optional"))).toBe(true);
    expect(r.notes.some((n) => n.includes("runtimeArguments"))).toBe(false);
  });

  test("a remote becomes an http_client server: URL variable default filled in, secret header referenced, host declared", () => {
    const r = importServerJson(fixture("with-remote.json"), "with-remote.json");
    expect(r.manifest).toEqual({
      tool_id: "remote-weather",
      tool_type: "mcp_server",
      version: "2.1.0",
      description: "Remote MCP server reachable over streamable HTTP.",
      executor: "http_client",
      config: { transport: "streamable-http", url: "https://api.example.com/mcp", headers: { Authorization: "${AUTHORIZATION}" }, secrets: ["AUTHORIZATION"] },
      requires: [{ "net.outbound": ["api.example.com"] }],
    });
  });

  test("a server with only remotes takes the first; --pick remote says so explicitly", () => {
    const r = importServerJson(fixture("cloudmonitor.json"), "cloudmonitor.json", { pick: "remote" });
    expect(r.manifest.config).toEqual({ transport: "streamable-http", url: "https://openapi-mcp.cn-hangzhou.aliyuncs.com/s/Cms/cms/9fe79ff0bf5748e6923530c5097ec359/mcp" });
    expect(r.id).toBe("cloudmonitor");
  });

  test("version latest is refused naming the field (examples/invalid/package-version-latest.json)", () => {
    const e = refusal(fixture("package-version-latest.json"));
    expect(e.code).toBe("E_INPUT_INVALID");
    expect(e.message).toBe('server.json at /packages/0/version: version "latest" floats');
    expect(e.hint).toContain("name one version");
    expect(e.details).toEqual({ file: "server.json", field: "/packages/0/version" });
  });
});

describe("the registry API's answer for one version ({ server, _meta }, as GET /v0/servers/<name>/versions/<version> returns it)", () => {
  const response = (server: unknown) => ({ server, _meta: { "io.modelcontextprotocol.registry/official": { status: "active", publishedAt: "2025-01-01T10:30:00Z", isLatest: true } } });

  test("is read as the server.json it wraps", () => {
    const direct = importServerJson(fixture("with-package.json"), "server.json");
    const wrapped = importServerJson(response(fixture("with-package.json")), "server.json");
    expect({ ...wrapped, notes: [] }).toEqual({ ...direct, notes: [] });
    expect(wrapped.notes).toEqual(direct.notes.map((n) => (n.startsWith("/") ? `/server${n}` : n)));
  });

  test("names fields and notes by their place in the file as saved, below /server", () => {
    const e = refusal(response(npmServer({ version: "^1.2.0" })));
    expect([e.code, e.message, e.details]).toEqual(["E_INPUT_INVALID", 'server.json at /server/packages/0/version: "^1.2.0" is a version range, not one version', { file: "server.json", field: "/server/packages/0/version" }]);
    expect(refusal(response({ description: "x" })).message).toBe("server.json at /server: name is missing");
    const noted = importServerJson(response(npmServer({ environmentVariables: [{ name: "OPT" }] })), "server.json");
    expect(noted.notes).toEqual(["/server/packages/0/environmentVariables/0: optional OPT has no value or default and is not passed; add it to the manifest to set it"]);
  });
});

describe("mapping inputs", () => {
  test("a PyPI package is pinned with ==", () => {
    const r = importServerJson(npmServer({ registryType: "pypi", identifier: "mcp-server-fetch", version: "2025.4.7" }), "server.json");
    expect(r.manifest.config).toEqual({ transport: "stdio", package: "pypi:mcp-server-fetch==2025.4.7" });
    expect(r.source).toBe("pypi:mcp-server-fetch==2025.4.7");
  });

  test("positional and named arguments, with values, defaults, variables and required user input", () => {
    const r = importServerJson(
      npmServer({
        packageArguments: [
          { type: "positional", value: "serve" },
          { type: "positional", valueHint: "target_dir", isRequired: true },
          { type: "named", name: "--mode", default: "local" },
          { type: "named", name: "--mount", value: "src={source_path},dst={target}", variables: { source_path: { isRequired: true }, target: { default: "/project" } } },
          { type: "named", name: "--verbose", format: "boolean", isRequired: true },
          { type: "named", name: "--token", isSecret: true, isRequired: true },
          { type: "positional", value: "literal {braces}" },
          { type: "named", name: "--debug", format: "boolean" },
        ],
      }),
      "server.json",
    );
    expect((r.manifest.config as { args: string[] }).args).toEqual(["serve", "${TARGET_DIR}", "--mode", "local", "--mount", "src=${SOURCE_PATH},dst=/project", "--verbose", "--token", "${TOKEN}", "literal {{braces}}"]);
    expect((r.manifest.config as { secrets: string[] }).secrets).toEqual(["TOKEN"]);
    // An optional input left out is named in a note, a bare flag too.
    expect(r.notes).toEqual(["/packages/0/packageArguments/7: optional flag --debug is not passed; add it to config.args to set it"]);
  });

  test("environment variables: default written, required referenced, optional left out with a note, a literal secret never copied", () => {
    const r = importServerJson(
      npmServer({
        environmentVariables: [
          { name: "LOG_LEVEL", default: "info" },
          { name: "DB_USER", isRequired: true },
          { name: "OPTIONAL_THING" },
          { name: "API_TOKEN", isSecret: true, value: "sk-live-123" },
          { name: "AUTH", value: "Bearer {token}", variables: { token: { isSecret: true, isRequired: true } } },
        ],
      }),
      "server.json",
    );
    expect((r.manifest.config as { env: unknown }).env).toEqual({ LOG_LEVEL: "info", DB_USER: "${DB_USER}", API_TOKEN: "${API_TOKEN}", AUTH: "Bearer ${TOKEN}" });
    expect((r.manifest.config as { secrets: string[] }).secrets).toEqual(["API_TOKEN", "TOKEN"]);
    expect(JSON.stringify(r.manifest)).not.toContain("sk-live-123");
    expect(r.notes.find((n) => n.includes("OPTIONAL_THING"))).toContain("not passed");
  });

  test("runtimeArguments and a non-default registry are named in notes, not silently dropped", () => {
    const r = importServerJson(npmServer({ runtimeHint: "npx", runtimeArguments: [{ type: "positional", value: "-y" }], registryBaseUrl: "https://npm.corp.example" }), "server.json");
    expect(r.notes.some((n) => n.includes("runtimeArguments (1) are for npx"))).toBe(true);
    expect(r.notes.some((n) => n.includes("https://npm.corp.example"))).toBe(true);
  });

  test("the first package kiwi can run is chosen over one it cannot; --id names the tool", () => {
    const doc = npmServer({}, { packages: [{ registryType: "oci", identifier: "docker.io/acme/weather", version: "1.2.0", transport: { type: "stdio" } }, npmServer().packages[0]] });
    const r = importServerJson(doc, "server.json", { id: "wx" });
    expect([r.id, r.kind]).toEqual(["wx", "npm"]);
  });
});

describe("bad input: a coded error naming the file and the field, with a hint", () => {
  test.each([
    ["a caret range", npmServer({ version: "^1.2.0" }), "server.json at /packages/0/version: \"^1.2.0\" is a version range, not one version"],
    ["a wildcard", npmServer({ version: "1.x" }), "server.json at /packages/0/version: \"1.x\" is a version range, not one version"],
    ["a >= range", npmServer({ version: ">=1.2.3" }), "server.json at /packages/0/version: \">=1.2.3\" is a version range, not one version"],
    ["a server version range", npmServer({}, { version: "~1.2.0" }), "server.json at /version: \"~1.2.0\" is a version range"],
    ["an unknown registryType", npmServer({ registryType: "cargo" }), "server.json at /packages/0/registryType: unknown registryType \"cargo\""],
    ["an npm package with no version", npmServer({ version: undefined }), "server.json at /packages/0: the npm package names no version"],
    ["an npm version that is not semver", npmServer({ version: "1.2" }), "server.json at /packages/0/version: \"1.2\" is not an exact semver version"],
    ["a bad npm name", npmServer({ identifier: "Not A Name" }), "server.json at /packages/0/identifier: \"Not A Name\" is not an npm package name"],
    ["a pypi version that is not PEP 440", npmServer({ registryType: "pypi", identifier: "x", version: "one" }), "server.json at /packages/0/version: \"one\" is not a PEP 440 version"],
    ["an MCPB package without fileSha256", npmServer({ registryType: "mcpb", identifier: "https://example.com/x.mcpb" }), "server.json at /packages/0: the MCPB package has no fileSha256"],
    ["a malformed fileSha256", npmServer({ fileSha256: "abc" }), "server.json at /packages/0/fileSha256: fileSha256 is not 64 lower-case hex digits"],
    ["a package without transport", npmServer({ transport: undefined }), "server.json at /packages/0/transport: transport is missing or has no type"],
    ["a missing name", { description: "x", version: "1.0.0", packages: [] }, "server.json: name is missing"],
    ["a name without a namespace", npmServer({}, { name: "weather" }), "server.json at /name: \"weather\" is not a registry name (reverse-DNS namespace, one slash, server name)"],
    ["neither packages nor remotes", npmServer({}, { packages: [] }), "server.json: the server has neither packages nor remotes"],
    ["a remote of another type", npmServer({}, { packages: [], remotes: [{ type: "websocket", url: "wss://x" }] }), "server.json at /remotes/0/type: remote type \"websocket\" is not streamable-http or sse"],
    ["a remote whose host is a variable without default", npmServer({}, { packages: [], remotes: [{ type: "sse", url: "https://{tenant}.example.com/sse", variables: { tenant: { isRequired: true } } }] }), "server.json at /remotes/0/url: the URL's host comes from a variable with no value or default (https://{tenant}.example.com/sse)"],
    ["the pre-2025-09 snake_case format", { name: "io.x/y", description: "d", version_detail: { version: "1.0.0" } }, "server.json at /version_detail: this is the pre-2025-09 snake_case server.json"],
    ["a positional argument with neither value nor valueHint", npmServer({ packageArguments: [{ type: "positional" }] }), "server.json at /packages/0/packageArguments/0: a positional argument has neither value nor valueHint"],
    ["an argument without a type", npmServer({ packageArguments: [{ name: "-x" }] }), "server.json at /packages/0/packageArguments/0/type: an argument has no type"],
    ["an argument of another type", npmServer({ packageArguments: [{ type: "flag", name: "-x" }] }), "server.json at /packages/0/packageArguments/0/type: argument type \"flag\" is not positional or named"],
    ["an env var declared twice", npmServer({ environmentVariables: [{ name: "A", default: "1" }, { name: "A", default: "2" }] }), "server.json at /packages/0/environmentVariables/1/name: A is declared twice"],
    ["not an object", [1, 2], "server.json: a server.json is a JSON object"],
  ])("%s", (_what, doc, message) => {
    const e = refusal(doc);
    expect(e.code).toBe("E_INPUT_INVALID");
    expect(e.message.startsWith(message)).toBe(true);
    expect(e.hint).toBeTruthy();
  });

  test("an oci-only server is refused: kiwi cannot pin and run it", () => {
    const e = refusal(npmServer({ registryType: "oci", identifier: "docker.io/acme/x" }));
    expect(e.message).toBe("server.json at /packages/0/registryType: kiwi cannot pin and run oci packages");
  });

  test("a package whose server listens on HTTP is not run over stdio: another entry is taken, or the import is refused", () => {
    const http = { transport: { type: "streamable-http", url: "http://localhost:{port}/mcp" } };
    expect(refusal(npmServer(http)).message).toBe("server.json at /packages/0/transport/type: the package's server listens on streamable-http once started; kiwi starts a package's server over stdio only");
    expect(refusal(npmServer(http), { pick: "npm" }).message).toStartWith("server.json at /packages/0/transport/type: the package's server listens on streamable-http");
    expect(refusal(npmServer({ transport: { type: "websocket" } })).message).toBe('server.json at /packages/0/transport/type: transport type "websocket" is not stdio, streamable-http or sse');
    const both = npmServer({}, { packages: [{ ...npmServer().packages[0], ...http }, { ...npmServer().packages[0], identifier: "@acme/weather-stdio" }] });
    expect(importServerJson(both, "server.json").source).toBe("npm:@acme/weather-stdio@1.2.0");
    expect(importServerJson(both, "server.json", { pick: "npm" }).source).toBe("npm:@acme/weather-stdio@1.2.0");
    const withRemote = npmServer(http, { remotes: [{ type: "streamable-http", url: "https://weather.example.com/mcp" }] });
    expect(importServerJson(withRemote, "server.json").kind).toBe("remote");
  });

  test("--pick a type the server lacks, and a bad --id", () => {
    expect(refusal(npmServer(), { pick: "pypi" }).message).toBe("server.json at /packages: --pick pypi, but the server has no pypi package");
    expect(refusal(npmServer(), { pick: "remote" }).message).toBe("server.json at /remotes: --pick remote, but the server has no remotes");
    expect(refusal(npmServer(), { id: "Bad Id" }).message).toBe('server.json at /name: --id "Bad Id" is not a tool id');
  });
});
