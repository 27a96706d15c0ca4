// Files from real packages and repositories (test/fixtures/real/README.md names each source and
// version), through the compiled binary: what kiwi used to refuse or misread in them.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { REPO_ROOT, runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";
import { stdioServer } from "./mcp-helpers.ts";

afterAll(cleanupTemps);

const REAL = join(import.meta.dir, "..", "fixtures", "real");
const real = (path: string) => readFileSync(join(REAL, path), "utf8");
/** The smallest valid WebAssembly module with a `_start` (the example ships none). */
const WASM = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x07, 0x0a, 0x01, 0x06, 0x5f, 0x73, 0x74, 0x61, 0x72, 0x74, 0x00, 0x00, 0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b]);

describe("magray's published example manifest (MAGRAY_Cli docs/examples/tool-manifest-example.json)", () => {
  const project = () => makeProject({ ".ai/tools/file-processor/tool.json": real("magray/tool-manifest-example.json"), ".ai/tools/file-processor/file_processor.wasm": WASM });

  test("passes kiwi check --strict: null permission groups mean none", async () => {
    const r = await runKiwi(["check", "--strict", "--json"], { cwd: project() });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).findings).toEqual([]);
  });

  test("locks, and its chain resolves to the wasm runtime", async () => {
    const root = project();
    expect((await runKiwi(["lock"], { cwd: root })).exitCode).toBe(0);
    const tree = await runKiwi(["tree", "file-processor", "--json"], { cwd: root });
    expect(JSON.parse(tree.stdout).links.map((l: { id: string }) => l.id)).toEqual(["file-processor", "wasm_runtime", "subprocess"]);
  });
});

describe("plain Python helpers in a tool tree (rye-os)", () => {
  test("a prose docstring, a docstring that looks like YAML and an empty __init__.py are no tools: infos, not errors", async () => {
    const root = makeProject({
      ".ai/tools/threads/errors.py": real("rye-os/errors.py"),
      ".ai/tools/threads/helpers.py": real("rye-os/lilux-primitives-init.py"),
      ".ai/tools/threads/__init__.py": "",
    });
    const r = await runKiwi(["check", "--strict", "--json"], { cwd: root });
    expect(r.exitCode).toBe(0);
    const findings = JSON.parse(r.stdout).findings as { file: string; severity: string; rule: string }[];
    expect(findings.map((f) => [f.file, f.severity, f.rule]).sort()).toEqual([
      [".ai/tools/threads/__init__.py", "info", "discover/no-metadata"],
      [".ai/tools/threads/errors.py", "info", "discover/no-metadata"],
      [".ai/tools/threads/helpers.py", "info", "discover/no-metadata"],
    ]);
  });

  test("a docstring that declares tool_type is still a manifest, and its errors still fail the check", async () => {
    const root = makeProject({ ".ai/tools/bad.py": '"""\ntool_id: bad\ntool_type: script\n  broken: [\n"""\nprint(1)\n' });
    const r = await runKiwi(["check"], { cwd: root });
    expect(r.exitCode).toBe(1);
    expect(r.stdout + r.stderr).toContain(".ai/tools/bad.py:4:3  error  parse/syntax  invalid YAML: bad indentation: line 4");
  });
});

// Two real servers from npm (exact versions in package.json) that print a banner on stdout
// before speaking JSON-RPC, as the official SDK clients tolerate.
const BANNER_SERVERS = [
  { id: "time_mcp", script: join(REPO_ROOT, "node_modules", "time-mcp", "dist", "index.js"), banner: "Starting Time MCP server..." },
  { id: "code_runner", script: join(REPO_ROOT, "node_modules", "mcp-server-code-runner", "dist", "cli.js"), banner: "Code Runner MCP Server running on stdio" },
];

/** The server's listing as the official TypeScript SDK client sees it (it skips the banner itself). */
async function sdkListing(script: string): Promise<Record<string, unknown>> {
  const client = new Client({ name: "reference", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: "node", args: [script], stderr: "ignore" }));
  try {
    const caps = client.getServerCapabilities() ?? {};
    return {
      serverInfo: client.getServerVersion(),
      capabilities: caps,
      tools: caps.tools ? (await client.listTools()).tools : [],
      prompts: caps.prompts ? (await client.listPrompts()).prompts : [],
      resources: caps.resources ? (await client.listResources()).resources : [],
      ...(client.getInstructions() ? { instructions: client.getInstructions() } : {}),
    };
  } finally {
    await client.close();
  }
}

describe("stdio servers that print a banner on stdout (time-mcp 1.0.6, mcp-server-code-runner 0.1.8)", () => {
  test.each(BANNER_SERVERS)("$id: kiwi mcp hash skips the banner with a warning and equals the hash of the SDK client's listing", async (server) => {
    const root = makeTemp("kiwi-banner-");
    const project = makeProject({ [`.ai/tools/${server.id}.yaml`]: stdioServer(root, { id: server.id, script: server.script }) });
    expect((await runKiwi(["lock"], { cwd: project, timeoutMs: 60_000 })).exitCode).toBe(0);
    const live = await runKiwi(["mcp", "hash", server.id, "--json"], { cwd: project, timeoutMs: 60_000 });
    expect(live.exitCode).toBe(0);
    expect(live.stderr).toContain(`warning: MCP server "${server.id}" wrote 1 line on stdout that is not JSON-RPC, skipped: ${JSON.stringify(server.banner)}`);
    const listingFile = join(root, "listing.json");
    writeFileSync(listingFile, JSON.stringify(await sdkListing(server.script)));
    const offline = await runKiwi(["mcp", "hash", "--listing", listingFile, "--json"], { cwd: project });
    expect(JSON.parse(live.stdout).interface_hash).toBe(JSON.parse(offline.stdout).interface_hash);
    expect(JSON.parse(live.stdout).counts.tools).toBeGreaterThan(0);
  }, 120_000);

  test("kiwi lock pins a banner-printing server and says what it skipped", async () => {
    const server = BANNER_SERVERS[0]!;
    const project = makeProject({ [`.ai/tools/${server.id}.yaml`]: stdioServer(makeTemp(), { id: server.id, script: server.script }) });
    const r = await runKiwi(["lock"], { cwd: project, timeoutMs: 60_000 });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain(`warning: MCP server "${server.id}" wrote 1 line on stdout`);
    expect(r.stderr).toContain(`pinned MCP server "${server.id}" (time-mcp)`);
  }, 120_000);
});

describe("rye-os trees (the successors of kiwi_mcp)", () => {
  const findingsOf = async (root: string, strict = false) => {
    const r = await runKiwi(["check", "--json", ...(strict ? ["--strict"] : [])], { cwd: root });
    return { exitCode: r.exitCode, findings: JSON.parse(r.stdout).findings as { tool?: string; file: string; rule: string; message: string; hint?: string; line?: number }[] };
  };

  test("core/sign.yaml and core/bundle/sign.yaml are two tools with path ids; executor_id and the signature line are read", async () => {
    const root = makeProject({ ".ai/tools/ryeos/core/sign.yaml": real("rye-os/core/sign.yaml"), ".ai/tools/ryeos/core/bundle/sign.yaml": real("rye-os/core/bundle/sign.yaml") });
    const { findings } = await findingsOf(root);
    const rules = findings.map((f) => `${f.file} ${f.rule}`);
    expect(rules).not.toContain(".ai/tools/ryeos/core/sign.yaml universal/duplicate-id");
    expect(findings.some((f) => f.message.includes('"executor_id"'))).toBe(false);
    expect(new Set(findings.map((f) => f.tool))).toEqual(new Set(["ryeos-core-sign", "ryeos-core-bundle-sign"]));
    // The kind rye takes from the folder is not a kiwi type: said, with the line after the signature.
    expect(findings).toContainEqual(expect.objectContaining({ file: ".ai/tools/ryeos/core/sign.yaml", rule: "universal/type-unknown", message: "tool_type is missing; a rye-os tool's folder does not say which kiwi type it is" }));
    // An untyped tool's hint has no empty type in it ("an executor meant for  tools").
    expect(findings).toContainEqual(expect.objectContaining({ file: ".ai/tools/ryeos/core/sign.yaml", rule: "child-schema/no-match", line: 3, hint: "use an executor meant for this kind of tool, or add a matching entry to subprocess" }));
  });

  test("executor_id tool:<path> names a tool by its path id, and the chain locks and runs", async () => {
    const root = makeProject({
      ".ai/tools/ryeos/dev/runtime.yaml": '# rye:signed:2026-02-14T00:28:39Z:00:AA==:11\nversion: "1.0.0"\ntool_type: runtime\nexecutor_id: "@subprocess"\nconfig:\n  command: bash\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { type: object }\n',
      ".ai/tools/ryeos/dev/hello/tool.yaml": 'version: "1.0.0"\ntool_type: script\nexecutor_id: "tool:ryeos/dev/runtime"\nconfig:\n  entrypoint: hello.sh\n',
      ".ai/tools/ryeos/dev/hello/hello.sh": "echo hello from rye\n",
    });
    expect((await findingsOf(root, true)).findings.filter((f) => f.rule !== "discover/no-metadata")).toEqual([]);
    expect((await runKiwi(["lock"], { cwd: root })).exitCode).toBe(0);
    const tree = await runKiwi(["tree", "ryeos-dev-hello", "--json"], { cwd: root });
    expect(JSON.parse(tree.stdout).links.map((l: { id: string }) => l.id)).toEqual(["ryeos-dev-hello", "ryeos-dev-runtime", "subprocess"]);
    const run = await runKiwi(["exec", "ryeos-dev-hello", "--sandbox=off"], { cwd: root });
    expect([run.exitCode, run.stdout]).toEqual([0, "hello from rye\n"]);
  });

  test("an MCP transport spelled http is streamable HTTP; tool_type mcp gets a hint; a project subprocess.yaml is refused", async () => {
    const root = makeProject({
      ".ai/tools/remote_mcp.yaml": "tool_id: remote_mcp\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: http_client\nconfig:\n  transport: http\n  url: https://mcp.example.com/mcp\nrequires:\n  - net.outbound: [mcp.example.com]\n",
      ".ai/tools/legacy.yaml": "tool_id: legacy\ntool_type: mcp\nversion: 1.0.0\nexecutor: subprocess\n",
      ".ai/tools/subprocess.yaml": "tool_id: subprocess\ntool_type: primitive\nversion: 9.0.0\nexecutor: null\n",
    });
    const { exitCode, findings } = await findingsOf(root);
    expect(exitCode).toBe(1);
    expect(findings.filter((f) => f.tool === "remote_mcp")).toEqual([]);
    expect(findings).toContainEqual(expect.objectContaining({ tool: "legacy", rule: "universal/type-unknown", hint: expect.stringContaining('rye-os\'s "mcp" is either an mcp_server') }));
    expect(findings).toContainEqual(expect.objectContaining({ tool: "subprocess", rule: "universal/shadows-primitive", message: 'the tool id "subprocess" is kiwi\'s built-in primitive; a project tool may not replace it' }));
  });
});
