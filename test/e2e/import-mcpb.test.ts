// MCP bundles through the compiled binary: the real hello-world-node manifest from anthropics/mcpb
// packed (fflate) with a hand-framed server, unsigned, self-signed and CA-signed with the real
// openssl in the layout the mcpb CLI writes (zip, MCPB_SIG_V1, u32 LE length, DER PKCS#7,
// MCPB_SIG_END); imported, checked, locked, installed, verified and called. Tampered signatures,
// escaping zip entries and a server.json whose fileSha256 lies are refused with nothing written.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { zipSync } from "fflate";
import { rawMcpServer } from "../helpers/raw-mcp.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";
import { kiwiIn, listFiles } from "./lock-helpers.ts";

setDefaultTimeout(60_000);
afterAll(cleanupTemps);

const MANIFEST = readFileSync(join(import.meta.dir, "..", "fixtures", "real", "mcpb", "hello-world-node", "manifest.json"), "utf8");
const SERVER = rawMcpServer({ name: "hello-world-node", tool: "get_current_time", description: "Get the current computer time in various formats", textExpression: '"args " + process.argv.slice(2).join(" ") + "; key " + process.env.API_KEY + "; debug " + process.env.DEBUG' });
const enc = (s: string) => new TextEncoder().encode(s);
const bundleZip = (files: Record<string, string> = {}) =>
  zipSync({
    "manifest.json": enc(MANIFEST),
    "server/index.js": enc(SERVER),
    "server/setup.sh": [enc("#!/bin/sh\n"), { os: 3, attrs: (0o100755 << 16) >>> 0 }],
    "icon.png": new Uint8Array([137, 80, 78, 71]),
    ...Object.fromEntries(Object.entries(files).map(([k, v]) => [k, enc(v)])),
  });

const pki = makeTemp("kiwi-mcpb-pki-");
function openssl(args: string[]): void {
  const r = Bun.spawnSync(["openssl", ...args], { cwd: pki, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`);
}
// A self-signed publisher, and a CA with a publisher certificate it issued.
openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "self.key", "-out", "self.pem", "-days", "2", "-subj", "/CN=Self Publisher"]);
openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Test Root CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"]);
openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "pub.key", "-out", "pub.csr", "-subj", "/CN=Acme Inc"]);
openssl(["x509", "-req", "-in", "pub.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "pub.pem", "-days", "2"]);

/** The zip with a signature block appended as the mcpb CLI writes it. */
function sign(zip: Uint8Array, who: "self" | "pub"): Uint8Array {
  const input = join(pki, `in-${Math.random().toString(36).slice(2)}.zip`);
  writeFileSync(input, zip);
  openssl(["cms", "-sign", "-binary", "-in", input, "-signer", `${who}.pem`, "-inkey", `${who}.key`, "-outform", "DER", "-out", `${input}.p7`, "-md", "sha256"]);
  const p7 = readFileSync(`${input}.p7`);
  const length = new Uint8Array(4);
  new DataView(length.buffer).setUint32(0, p7.length, true);
  return new Uint8Array(Buffer.concat([zip, enc("MCPB_SIG_V1"), length, p7, enc("MCPB_SIG_END")]));
}

describe("an .mcpb bundle", () => {
  test("unsigned: imported as a directory tool of the bundle's files, then checked, locked, installed, verified and called", async () => {
    const root = makeProject({ ".ai/tools/now.yaml": "tool_id: now\ntool_type: mcp_tool\nversion: 1.0.0\nexecutor: hello-world-node\nconfig: { tool_name: get_current_time }\nparameters: []\n" });
    writeFileSync(join(root, "hello.mcpb"), bundleZip());
    const kiwi = kiwiIn(root, { API_KEY: "k-1" });
    const add = await kiwi.run(["add", "--from", "hello.mcpb"]);
    expect(add.exitCode).toBe(0);
    expect(add.stdout).toStartWith("imported hello-world-node@0.1.0 from mcpb (mcpb:hello.mcpb)\nwrote .ai/tools/hello-world-node/tool.yaml\nsignature: unsigned\n");
    expect(add.stderr).toContain("note: user_config.config_file is optional and has no default");
    const manifest = readFileSync(join(root, ".ai/tools/hello-world-node/tool.yaml"), "utf8");
    expect(manifest).toContain("  command: node\n  args:\n    - ./server/index.js\n    - --verbose=false\n    - --max-results=10\n    - --config=\n    - --workspace=${HOME}/Documents\n  env:\n    API_KEY: ${API_KEY}\n    DEBUG: info\n  secrets:\n    - API_KEY\n");
    expect(listFiles(join(root, ".ai/tools/hello-world-node"))).toEqual(["icon.png", "manifest.json", "server/index.js", "server/setup.sh", "tool.yaml"]);
    // Executable bits come from the zip's Unix modes.
    expect([statSync(join(root, ".ai/tools/hello-world-node/server/setup.sh")).mode & 0o111, statSync(join(root, ".ai/tools/hello-world-node/server/index.js")).mode & 0o111]).toEqual([0o111, 0]);
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    expect(lock.tools["hello-world-node"].files.map((f: { path: string; is_executable: boolean }) => [f.path, f.is_executable])).toEqual([["icon.png", false], ["manifest.json", false], ["server/index.js", false], ["server/setup.sh", true]]);
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const verify = await kiwi.run(["verify"]);
    expect([verify.exitCode, verify.stderr]).toEqual([0, ""]);
    const r = await kiwi.run(["exec", "now", "--sandbox=off"]);
    expect([r.exitCode, r.stdout.replace(/--workspace=[^;]+/, "--workspace=W")]).toEqual([0, "args --verbose=false --max-results=10 --config= --workspace=W; key k-1; debug info\n"]);
  });

  test("self-signed: the signature is verified and the status says self-signed, with the publisher", async () => {
    const root = makeProject({});
    writeFileSync(join(root, "hello.mcpb"), sign(bundleZip(), "self"));
    const r = await kiwiIn(root).run(["add", "--from", "hello.mcpb", "--json"]);
    expect(r.exitCode).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.signature).toMatchObject({ status: "self-signed", publisher: "CN=Self Publisher", issuer: "CN=Self Publisher" });
    expect(out.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(root, ".ai/tools/hello-world-node/tool.yaml"), "utf8")).toContain("self-signed by CN=Self Publisher");
  });

  test("signed: a certificate chaining to a trusted root (NODE_EXTRA_CA_CERTS) says signed; without the root it is untrusted, with a note", async () => {
    const root = makeProject({});
    writeFileSync(join(root, "hello.mcpb"), sign(bundleZip(), "pub"));
    const trusted = await kiwiIn(root, { NODE_EXTRA_CA_CERTS: join(pki, "ca.pem") }).run(["add", "--from", "hello.mcpb", "--json"]);
    expect(JSON.parse(trusted.stdout).signature).toMatchObject({ status: "signed", publisher: "CN=Acme Inc", issuer: "CN=Test Root CA" });
    const other = makeProject({});
    writeFileSync(join(other, "hello.mcpb"), sign(bundleZip(), "pub"));
    const untrusted = await kiwiIn(other).run(["add", "--from", "hello.mcpb"]);
    expect(untrusted.exitCode).toBe(0);
    expect(untrusted.stdout).toContain("signature: untrusted by CN=Acme Inc");
    expect(untrusted.stderr).toContain("does not chain to a trusted root");
  });
});

describe("bad bundles: a coded error, nothing written", () => {
  const signedThenChanged = () => {
    const signed = sign(bundleZip(), "self");
    const other = bundleZip({ "server/extra.js": "evil()" });
    // The signature block of one zip after another zip's bytes: the digest no longer matches.
    const block = signed.subarray(bundleZip().length);
    return new Uint8Array(Buffer.concat([other, block]));
  };
  test.each([
    ["a signature that does not verify (the bundle changed after signing)", signedThenChanged, 13, "error[E_TRUST]: hello.mcpb: the bundle's signature does not verify: the bundle's digest differs from the one that was signed"],
    ["a truncated signature block", () => new Uint8Array(Buffer.concat([bundleZip(), enc("MCPB_SIG_V1\u0005\u0000\u0000\u0000abMCPB_SIG_END")])), 2, "error[E_INPUT_INVALID]: hello.mcpb: the bundle ends with MCPB_SIG_END but its signature block is malformed"],
    ["a zip entry escaping the folder", () => bundleZip({ "../../evil.sh": "x" }), 2, 'error[E_INPUT_INVALID]: hello.mcpb: the zip entry "../../evil.sh" would land outside the bundle\'s folder'],
    ["a symbolic link entry", () => zipSync({ "manifest.json": enc(MANIFEST), "server/index.js": enc(SERVER), "server/secrets": [enc("/etc/shadow"), { os: 3, attrs: (0o120777 << 16) >>> 0 }] }), 2, 'error[E_INPUT_INVALID]: hello.mcpb: the zip entry "server/secrets" is a symbolic link'],
    ["no manifest.json", () => zipSync({ "server/index.js": enc(SERVER) }), 2, "error[E_INPUT_INVALID]: hello.mcpb: the bundle has no manifest.json at its top"],
    ["a manifest_version kiwi does not read", () => zipSync({ "manifest.json": enc(MANIFEST.replace('"0.1"', '"0.9"')), "server/index.js": enc(SERVER) }), 2, 'error[E_INPUT_INVALID]: hello.mcpb!manifest.json at /manifest_version: manifest_version "0.9" is not one kiwi reads'],
    ["an entry point missing from the zip", () => zipSync({ "manifest.json": enc(MANIFEST) }), 2, "error[E_INPUT_INVALID]: hello.mcpb!manifest.json at /server/entry_point: entry_point server/index.js is not in the bundle"],
    ["a reference to an undeclared user_config", () => zipSync({ "manifest.json": enc(MANIFEST.replace("${user_config.debug_mode}", "${user_config.nope}")), "server/index.js": enc(SERVER) }), 2, "error[E_INPUT_INVALID]: hello.mcpb!manifest.json at /server/mcp_config/env/DEBUG: ${user_config.nope} names no user_config option"],
    ["not a zip", () => enc("PK\u0003\u0004 not really a zip"), 2, "error[E_INPUT_INVALID]: hello.mcpb: the bundle is not a readable zip"],
  ])("%s", async (_what, make, exitCode, message) => {
    const root = makeProject({});
    writeFileSync(join(root, "hello.mcpb"), make());
    const r = await kiwiIn(root).run(["add", "--from", "hello.mcpb"]);
    expect([r.exitCode, r.stdout]).toEqual([exitCode, ""]);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain("hint:");
    expect(listFiles(join(root, ".ai"))).toEqual([]);
  });
});

test("a bundle file whose name holds a line break stays in the header comment of the written manifest", async () => {
  const root = makeProject({});
  const name = 'a\nrequires:\n  - net.outbound: ["*"]\n#.mcpb';
  writeFileSync(join(root, name), bundleZip());
  const r = await kiwiIn(root).run(["add", "--from", name, "--id", "hello"]);
  expect(r.exitCode).toBe(0);
  const text = readFileSync(join(root, ".ai/tools/hello/tool.yaml"), "utf8");
  expect(text.split("\n")[0]).toStartWith('# Imported by kiwi add --from a\\u000arequires:\\u000a  - net.outbound: ["*"]\\u000a#.mcpb: MCP bundle hello 0.1.0');
  expect(text).not.toContain("\nrequires:");
});

describe("an MCPB package named by a server.json", () => {
  const bundle = sign(bundleZip(), "self");
  const sha = createHash("sha256").update(bundle).digest("hex");
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(bundle) });
  afterAll(() => server.stop(true));
  const serverJson = (fileSha256: string, path = "/hello.mcpb") =>
    JSON.stringify({
      $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
      name: "io.github.acme/hello",
      description: "Hello",
      version: "0.1.0",
      packages: [{ registryType: "mcpb", identifier: `http://127.0.0.1:${server.port}${path}`, version: "0.1.0", fileSha256, transport: { type: "stdio" }, environmentVariables: [{ name: "LOG_LEVEL", default: "debug" }] }],
    });

  test("an identifier with a line break (which fetch drops) is refused: its file name would write YAML into the manifest's header", async () => {
    const root = makeProject({});
    writeFileSync(join(root, "server.json"), serverJson(sha, '/b\nrequires:\n  - net.outbound: ["*"]\n#.mcpb'));
    const r = await kiwiIn(root).run(["add", "--from", "server.json"]);
    expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toContain("error[E_INPUT_INVALID]: server.json at /packages/0/identifier:");
    expect(existsSync(join(root, ".ai/tools/hello"))).toBe(false);
  });

  test("is downloaded, checked against fileSha256, verified and placed; server.json's variables join the bundle's", async () => {
    const root = makeProject({});
    writeFileSync(join(root, "server.json"), serverJson(sha));
    const r = await kiwiIn(root).run(["add", "--from", "server.json", "--json"]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ tool: "hello", format: "mcpb", sha256: sha, signature: { status: "self-signed" } });
    expect(readFileSync(join(root, ".ai/tools/hello/tool.yaml"), "utf8")).toContain("LOG_LEVEL: debug");
    expect((await kiwiIn(root).run(["check"])).exitCode).toBe(0);
  });

  test("a fileSha256 that differs from the download is E_INTEGRITY_MISMATCH naming the field; nothing is unpacked", async () => {
    const root = makeProject({});
    writeFileSync(join(root, "server.json"), serverJson("0".repeat(64)));
    const r = await kiwiIn(root).run(["add", "--from", "server.json"]);
    expect(r.exitCode).toBe(6);
    expect(r.stderr).toContain(`error[E_INTEGRITY_MISMATCH]: server.json at /packages/0/fileSha256: http://127.0.0.1:${server.port}/hello.mcpb has sha256 ${sha}, not ${"0".repeat(64)}`);
    expect(existsSync(join(root, ".ai/tools/hello"))).toBe(false);
  });
});
