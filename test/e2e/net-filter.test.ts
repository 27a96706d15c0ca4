// Host filtering through the compiled binary: a sandboxed tool that declares one host reaches it
// through kiwi's proxy with curl (plain HTTP, CONNECT, SOCKS5), Python's urllib and node's fetch;
// another listener, or the same one by a raw socket that ignores the proxy, is out of reach, and
// each refusal is reported. Needs a working bubblewrap (CI installs it).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { probeSandbox } from "../../src/exec/sandbox-io.ts";
import { needs } from "../helpers/needs.ts";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";
import { FIXTURE, READABLE } from "./mcp-helpers.ts";
import { kiwiIn } from "./lock-helpers.ts";

if (!probeSandbox(process.env).usable) throw new Error(`the host-filtering tests need a working bubblewrap: ${probeSandbox(process.env).reason}`);

/**
 * Node's fetch follows HTTP_PROXY from Node 24 on (NODE_USE_ENV_PROXY); .ci/run unpacks that
 * release from the npm registry here, beside the system node.
 */
const NODE24 = process.env.KIWI_TEST_NODE24 ?? join(homedir(), ".cache", "kiwi-test", "node-24", "bin", "node");
const hasNode24 = needs(existsSync(NODE24), `node 24 not found at ${NODE24} (node's fetch needs it to follow HTTP_PROXY; .ci/run installs it)`);

/** Bytes /big answers with: far more than any socket buffer, so the bridge must hold back. */
const BIG = 48 * 1024 * 1024;

/**
 * A loopback listener that records the paths it was asked for; /big answers BIG bytes and
 * /upload the length of what it received.
 */
function listener(name: string) {
  const hits: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      hits.push(path);
      if (path === "/big") return new Response(new Uint8Array(BIG).fill(120));
      if (path === "/upload") return new Response(`${(await req.arrayBuffer()).byteLength}`);
      return new Response(`${name} ${path}`);
    },
  });
  return { hits, port: server.port, stop: () => server.stop(true) };
}

const A = listener("A");
const B = listener("B");
/** A raw TCP listener that answers only once the client has half-closed: what it got, then it closes. */
const HALF = await new Promise<{ port: number; stop(): void }>((done) => {
  const server = createServer({ allowHalfOpen: true }, (s) => {
    const parts: Buffer[] = [];
    s.on("data", (d: Buffer) => parts.push(d));
    s.on("end", () => s.end(`got ${Buffer.concat(parts).toString()} after FIN`));
    s.on("error", () => {});
  });
  server.listen(0, "127.0.0.1", () => done({ port: (server.address() as AddressInfo).port, stop: () => server.close() }));
});
afterAll(() => {
  A.stop();
  B.stop();
  HALF.stop();
  cleanupTemps();
});

const bash = (id: string, hosts: string[], body: string) => ({
  [`.ai/tools/${id}.sh`]: `#!/bin/bash\n# ---\n# tool_id: ${id}\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# description: ${id}\n# requires:\n#   - net.outbound: ${JSON.stringify(hosts)}\n# ---\n${body}\n`,
});
const a = `127.0.0.1:${A.port}`;
const b = `127.0.0.1:${B.port}`;

const root = makeProject({
  ...bash(
    "via_curl",
    [a],
    [
      `curl -sS -w ' %{http_code}\\n' http://${a}/plain`,
      `curl -sS -o /dev/null -w 'B %{http_code}\\n' http://${b}/plain`,
      `curl -sS -p -w ' %{http_code}\\n' http://${a}/tunnel`,
      `curl -sS -x "$ALL_PROXY" -w ' %{http_code}\\n' http://${a}/socks`,
      `curl -sS -x "$ALL_PROXY" -o /dev/null http://${b}/socks || echo "socks B refused"`,
      `curl -sS --noproxy '*' --max-time 10 http://${a}/raw || echo "raw refused"`,
    ].join("\n"),
  ),
  ...bash(
    "bulk",
    [a],
    [
      `curl -sS -o /dev/null -w '%{size_download}\\n' http://${a}/big`,
      // A reader that starts late: the bridge's writes to the tool come back short and must queue.
      `curl -sS -p http://${a}/big | (sleep 1; wc -c)`,
      `head -c 16777216 /dev/zero | curl -sS --data-binary @- -w '\\n' http://${a}/upload`,
    ].join("\n"),
  ),
  ...bash("via_name", [`localhost:${A.port}`], `curl -sS -w ' %{http_code}\\n' http://localhost:${A.port}/name`),
  ...bash("any_host", ["*"], `curl -sS -o /dev/null -w 'A %{http_code}\\n' http://${a}/any`),
  ".ai/tools/via_python/tool.yaml": `tool_id: via_python\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\nrequires:\n  - net.outbound: ["${a}"]\n`,
  ".ai/tools/via_python/main.py": [
    "import socket, urllib.request, urllib.error",
    `print(urllib.request.urlopen("http://${a}/urllib").read().decode())`,
    "try:",
    `    urllib.request.urlopen("http://${b}/urllib")`,
    "except urllib.error.HTTPError as e:",
    "    print('B', e.code)",
    "try:",
    `    socket.create_connection(("127.0.0.1", ${A.port}), timeout=10)`,
    "except OSError as e:",
    "    print('raw', type(e).__name__)",
    "",
  ].join("\n"),
  // A client that shuts down its sending side after the request, through the bridge and the proxy.
  ".ai/tools/half_close/tool.yaml": `tool_id: half_close\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\nrequires:\n  - net.outbound: ["127.0.0.1:${HALF.port}"]\n`,
  ".ai/tools/half_close/main.py": [
    "import os, socket",
    "host, port = os.environ['HTTP_PROXY'].rsplit('/', 1)[-1].split(':')",
    "s = socket.create_connection((host, int(port)), timeout=10)",
    `s.sendall(b"CONNECT 127.0.0.1:${HALF.port} HTTP/1.1\\r\\n\\r\\n")`,
    "head = b''",
    "while b'\\r\\n\\r\\n' not in head:",
    "    head += s.recv(1)",
    "print(head.split(b'\\r\\n')[0].decode())",
    "s.sendall(b'ping')",
    "s.shutdown(socket.SHUT_WR)",
    "out = b''",
    "while True:",
    "    chunk = s.recv(65536)",
    "    if not chunk:",
    "        break",
    "    out += chunk",
    "print(out.decode())",
    "",
  ].join("\n"),
  ".ai/tools/node24.yaml": `tool_id: node24\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: ${JSON.stringify(NODE24)} }\n`,
  ".ai/tools/via_node/tool.yaml": `tool_id: via_node\ntool_type: script\nversion: 1.0.0\nexecutor: node24\nconfig: { entrypoint: main.mjs }\nrequires:\n  - net.outbound: ["${a}"]\n`,
  ".ai/tools/via_node/main.mjs": `const r = await fetch("http://${a}/fetch");\nconsole.log(await r.text(), r.status);\ntry {\n  const s = await fetch("http://${b}/fetch");\n  console.log("B", s.status);\n} catch (e) {\n  console.log("B refused");\n}\n`,
  ".ai/tools/fetch_mcp.yaml": [
    "tool_id: fetch_mcp",
    "tool_type: mcp_server",
    "version: 1.0.0",
    "executor: subprocess",
    "description: an MCP server that calls one API",
    "config:",
    "  transport: stdio",
    `  command: ${JSON.stringify(NODE24)}`,
    `  args: [${JSON.stringify(FIXTURE)}]`,
    "  env: { FIXTURE_MODE: fetch }",
    "requires:",
    `  - fs.read: ${JSON.stringify(READABLE)}`,
    `  - net.outbound: ["${a}"]`,
    "",
  ].join("\n"),
  ".ai/tools/fetch_url.yaml": "tool_id: fetch_url\ntool_type: mcp_tool\nversion: 1.0.0\nexecutor: fetch_mcp\nconfig: { tool_name: fetch_url }\nparameters:\n  - { name: url, type: string, required: true }\n",
});
const kiwi = kiwiIn(root);
const exec = (tool: string, ...extra: string[]) => kiwi.run(["exec", tool, "--sandbox=require", ...extra]);

beforeAll(async () => {
  // Without node 24 the MCP server cannot start, so lock pins nothing for it (a warning, not a failure).
  const r = await kiwi.run(["lock"]);
  if (r.exitCode !== 0) throw new Error(`kiwi lock failed:\n${r.stderr}`);
});

describe("a sandboxed tool declaring one host", () => {
  test("curl reaches it over plain HTTP, CONNECT and SOCKS5; the other listener and a raw socket do not get through, and the refusals are reported", async () => {
    A.hits.length = 0;
    B.hits.length = 0;
    const r = await exec("via_curl");
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split("\n")).toEqual(["A /plain 200", "B 403", "A /tunnel 200", "A /socks 200", "socks B refused", "raw refused", ""]);
    expect(A.hits).toEqual(["/plain", "/tunnel", "/socks"]);
    expect(B.hits).toEqual([]);
    expect(r.stderr).toContain(`kiwi: refused via_curl's connection to ${b} (2 times): not among the declared net.outbound hosts (${a}); add "${b}" to net.outbound`);
  });

  test("large downloads and uploads pass through the bridge whole, plain and tunnelled", async () => {
    const r = await exec("bulk");
    expect([r.exitCode, r.stdout]).toEqual([0, `${BIG}\n${BIG}\n${16 * 1024 * 1024}\n`]);
  });

  test("with --json the refusals are part of the one document", async () => {
    const r = await exec("via_python", "--json");
    const doc = JSON.parse(r.stdout);
    expect(doc.exitCode).toBe(0);
    expect(doc.refusals).toEqual([{ host: "127.0.0.1", port: B.port, rule: "not declared", reason: `not among the declared net.outbound hosts (${a})`, hint: `add "${b}" to net.outbound in the tool's manifest (/requires/0) if it should be reachable`, count: 1 }]);
  });

  test("Python's urllib follows the proxy variables; a raw socket has no route", async () => {
    B.hits.length = 0;
    const r = await exec("via_python");
    expect([r.exitCode, r.stdout]).toEqual([0, "A /urllib\nB 403\nraw ConnectionRefusedError\n"]);
    expect(B.hits).toEqual([]);
    expect(r.stderr).toContain(`kiwi: refused via_python's connection to ${b}`);
  });

  test.skipIf(!hasNode24)("node's fetch follows them too (Node 24, NODE_USE_ENV_PROXY)", async () => {
    B.hits.length = 0;
    const r = await exec("via_node");
    // Node tunnels every proxied request with CONNECT, so the refusal is a failed fetch.
    expect([r.exitCode, r.stdout]).toEqual([0, "A /fetch 200\nB refused\n"]);
    expect(r.stderr).toContain(`kiwi: refused via_node's connection to ${b}`);
    expect(B.hits).toEqual([]);
  });

  test("a tool that half-closes its connection after the request still gets the whole answer", async () => {
    const r = await exec("half_close");
    expect([r.exitCode, r.stdout]).toEqual([0, "HTTP/1.1 200 Connection Established\ngot ping after FIN\n"]);
  });

  test("a declared name is resolved by kiwi, and its loopback address is allowed because the declaration names it", async () => {
    const r = await exec("via_name");
    expect([r.exitCode, r.stdout]).toEqual([0, "A /name 200\n"]);
  });

  test("the dry run lists the allowed hosts and how they are enforced", async () => {
    const r = await exec("via_curl", "--dry-run");
    expect(r.exitCode).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.sandbox.network).toBe("filtered");
    expect(doc.sandbox.hosts).toEqual([a]);
    const net = doc.sandbox.enforcement.find((e: { area: string }) => e.area === "network");
    expect(net).toMatchObject({ enforced: true });
    expect(net.detail).toStartWith(`only ${a} (declared at /requires/0), through kiwi's proxy`);
    expect(doc.subprocess.env.http_proxy).toBe("http://127.0.0.1:3128");
  });
});

describe.skipIf(!hasNode24)("an MCP stdio server declaring one host", () => {
  test("reaches it through the proxy; another host is refused and reported", async () => {
    A.hits.length = 0;
    B.hits.length = 0;
    const ok = await exec("fetch_url", "--param", `url=http://${a}/mcp`);
    expect([ok.exitCode, ok.stdout.trim()]).toEqual([0, "200 A /mcp"]);
    const refused = await exec("fetch_url", "--param", `url=http://${b}/mcp`);
    expect(refused.exitCode).toBe(1);
    expect(refused.stdout).toStartWith("fetch failed");
    expect(refused.stderr).toContain(`kiwi: refused fetch_url's connection to ${b}`);
    expect(A.hits).toEqual(["/mcp"]);
    expect(B.hits).toEqual([]);
  });
});

describe("declared hosts kiwi cannot enforce as written", () => {
  test("a host with a path or a port out of range is a check error naming the entry, and exec refuses the tool", async () => {
    const bad = makeProject({ ...bash("bad_path", ["api.example.com/v1"], "true"), ...bash("bad_port", ["127.0.0.1:70000"], "true") });
    const badKiwi = kiwiIn(bad);
    const check = await badKiwi.run(["check", "--json"]);
    expect(check.exitCode).not.toBe(0);
    const findings = (JSON.parse(check.stdout).findings as { file: string; rule: string; message: string }[]).filter((f) => f.rule === "security/host-invalid");
    expect(findings.map((f) => [f.file, f.message])).toEqual([
      [".ai/tools/bad_path.sh", 'net.outbound host "api.example.com/v1": it has a path: declare the host only'],
      [".ai/tools/bad_port.sh", 'net.outbound host "127.0.0.1:70000": port 70000 is out of range (1-65535)'],
    ]);
    const r = await badKiwi.run(["exec", "bad_path", "--unlocked", "--sandbox=require"]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain("security/host-invalid");
  });

  test("a wildcard for every host is refused unless --allow-any-host, and even then loopback stays refused", async () => {
    const refused = await exec("any_host");
    expect(refused.exitCode).toBe(11);
    expect(refused.stderr).toContain('any_host declares net.outbound host "*" (/requires/0), which admits every host');
    expect(refused.stderr).toContain("--allow-any-host");
    A.hits.length = 0;
    const allowed = await exec("any_host", "--allow-any-host");
    expect([allowed.exitCode, allowed.stdout]).toEqual([0, "A 403\n"]);
    expect(A.hits).toEqual([]);
    expect(allowed.stderr).toContain(`kiwi: refused any_host's connection to ${a}: 127.0.0.1 is a loopback address, refused unless declared`);
  });
});
