// What kiwi's MCP pinning costs, against baselines measured in the same run (medians):
//   1. `kiwi mcp verify` on server-everything (spawn, handshake, every list, both hashes, compare,
//      scan) vs a bare SDK client doing connect + the same lists with no kiwi at all, and vs Node's
//      own start-up (`node -e 0`), the floor any stdio server pays;
//   1b. the same against a v2-SDK server that speaks only 2026-07-28 (server/discover, then the
//      lists; kiwi also lists tools/list a second time), vs a bare v2 client doing discover + lists;
//   2. hashing a generated 1,000-tool listing (both hashes, lossless parse included) vs JSON.parse
//      plus one SHA-256 of the same text, the cheapest digest of those bytes.
//   bun run scripts/bench-mcp.ts [--runs 7] [--hash-runs 30]
// Needs dist/kiwi (bun run build). Runs with KIWI_SANDBOX=off so both sides spawn the same way;
// --sandbox adds a row with the default sandbox (bubblewrap) for the sandbox's share.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashInterface } from "../src/mcp/interface.ts";
import { parseWireListing } from "../src/mcp/listing.ts";
import { median } from "./bench-lib.ts";

const argv = process.argv.slice(2);
const flag = (name: string, fallback: number) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) || fallback : fallback);
const runs = flag("--runs", 7);
const hashRuns = flag("--hash-runs", 30);
const root = join(import.meta.dir, "..");
const kiwi = join(root, "dist", "kiwi");
const node = Bun.which("node") ?? "node";
const everything = join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");


async function timeProcess(cmd: string[], cwd: string, env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn(cmd, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}\n${out}${err}`);
  return ms;
}

/** Runs every variant once to warm up, then `n` rounds alternating them so load drift hits all alike. */
async function measure(n: number, variants: Record<string, () => Promise<number> | number>): Promise<Record<string, number>> {
  for (const f of Object.values(variants)) await f();
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (let i = 0; i < n; i++) for (const [k, f] of Object.entries(variants)) times[k]!.push(await f());
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
}

function report(title: string, medians: Record<string, number>, subject: string): void {
  console.log(title);
  for (const [k, v] of Object.entries(medians)) {
    const ratio = k === subject ? "" : `   ${subject} is x${(medians[subject]! / v).toFixed(2)} of this`;
    console.log(`  ${k.padEnd(34)} ${v.toFixed(1).padStart(8)} ms${ratio}`);
  }
}

/**
 * The baseline client: the v2 SDK's own stdio transport, connect (server/discover, then initialize
 * for a handshake server) and every advertised list, nothing else. The transport is a trivial
 * subclass so the SDK probes on the session's own process, as kiwi does, instead of spawning a
 * second, throw-away server for the probe (which the base class does and would flatter kiwi).
 */
const bareClient = (script: string, args: string[]) => `
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
class InPlace extends StdioClientTransport {}
const client = new Client({ name: "bench", version: "0" }, { versionNegotiation: { mode: "auto" } });
await client.connect(new InPlace({ command: process.execPath, args: [${JSON.stringify(script)}, ...${JSON.stringify(args)}], stderr: "ignore" }));
for (const [cap, list] of [["tools", () => client.listTools()], ["prompts", () => client.listPrompts()], ["resources", () => client.listResources()], ["resources", () => client.listResourceTemplates()]]) {
  if (client.getServerCapabilities()?.[cap]) await list();
}
await client.close();
`;
const modern = join(root, "test", "fixtures", "mcp", "modern-server.mjs");

/** A listing of `n` tools shaped like real ones: a description, a schema with a few properties, annotations. */
function generateListing(n: number): string {
  const tools = Array.from({ length: n }, (_, i) => ({
    name: `tool_${i}`,
    title: `Tool ${i}`,
    description: `Does thing number ${i}. Returns a JSON object describing the outcome, with an id and a status.`,
    inputSchema: {
      type: "object",
      properties: { id: { type: "string", description: "the id" }, count: { type: "integer", minimum: 1, default: 3 }, ratio: { type: "number", default: 0.5 } },
      required: ["id"],
    },
    annotations: { readOnlyHint: i % 2 === 0, destructiveHint: false },
  }));
  return JSON.stringify({ serverInfo: { name: "generated", version: "1.0.0" }, tools });
}

const dir = mkdtempSync(join(tmpdir(), "kiwi-bench-mcp-"));
try {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8", NO_COLOR: "1", KIWI_SANDBOX: "off", KIWI_CACHE_DIR: join(dir, "cache") };
  const project = join(dir, "project");
  mkdirSync(join(project, ".ai", "tools"), { recursive: true });
  writeFileSync(
    join(project, ".ai", "tools", "everything_mcp.yaml"),
    `tool_id: everything_mcp\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  command: node\n  args: [${JSON.stringify(everything)}, stdio]\nrequires:\n  - fs.read: [${JSON.stringify(root)}]\n`,
  );
  await timeProcess([kiwi, "lock"], project, env);
  const modernProject = join(dir, "modern");
  mkdirSync(join(modernProject, ".ai", "tools"), { recursive: true });
  writeFileSync(
    join(modernProject, ".ai", "tools", "modern_mcp.yaml"),
    `tool_id: modern_mcp\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  command: node\n  args: [${JSON.stringify(modern)}]\nrequires:\n  - fs.read: [${JSON.stringify(root)}]\n`,
  );
  await timeProcess([kiwi, "lock"], modernProject, env);
  const rawScript = join(root, "node_modules", ".kiwi-bench-mcp-client.mjs");
  const modernScript = join(root, "node_modules", ".kiwi-bench-mcp-modern-client.mjs");
  writeFileSync(rawScript, bareClient(everything, ["stdio"]));
  writeFileSync(modernScript, bareClient(modern, []));
  try {
    const variants: Record<string, () => Promise<number>> = {
      "kiwi mcp verify (server-everything)": () => timeProcess([kiwi, "mcp", "verify"], project, env),
      "bare SDK client: connect + lists": () => timeProcess([node, rawScript], root, env),
      "node start-up (node -e 0)": () => timeProcess([node, "-e", "0"], root, env),
      "kiwi start-up (kiwi --version)": () => timeProcess([kiwi, "--version"], root, env),
    };
    if (argv.includes("--sandbox")) variants["kiwi mcp verify, sandboxed (auto)"] = () => timeProcess([kiwi, "mcp", "verify"], project, { ...env, KIWI_SANDBOX: "auto" });
    report(`1. verify against server-everything: ${runs} runs each, medians`, await measure(runs, variants), "kiwi mcp verify (server-everything)");
    const modernVariants: Record<string, () => Promise<number>> = {
      "kiwi mcp verify (2026-07-28 server)": () => timeProcess([kiwi, "mcp", "verify"], modernProject, env),
      "bare v2 client: discover + lists": () => timeProcess([node, modernScript], root, env),
    };
    report(`1b. verify against a server speaking only 2026-07-28 (stdio): ${runs} runs each, medians`, await measure(runs, modernVariants), "kiwi mcp verify (2026-07-28 server)");
  } finally {
    rmSync(rawScript, { force: true });
    rmSync(modernScript, { force: true });
  }

  const text = generateListing(1000);
  writeFileSync(join(dir, "listing.json"), text);
  const medians = await measure(hashRuns, {
    "kiwi: lossless parse + both hashes": () => {
      const t0 = performance.now();
      hashInterface(parseWireListing(text, "listing.json"));
      return performance.now() - t0;
    },
    "JSON.parse + one sha256 of the text": () => {
      const t0 = performance.now();
      JSON.parse(text);
      new Bun.CryptoHasher("sha256").update(text).digest("hex");
      return performance.now() - t0;
    },
  });
  report(`2. hashing a 1,000-tool listing (${(text.length / 1024).toFixed(0)} KiB), in process: ${hashRuns} runs each, medians`, medians, "kiwi: lossless parse + both hashes");
  const cli = await measure(Math.min(hashRuns, 10), {
    "kiwi mcp hash --listing (binary)": () => timeProcess([kiwi, "mcp", "hash", "--listing", "listing.json"], dir, env),
    "sha256sum listing.json": () => timeProcess(["sha256sum", "listing.json"], dir, env),
  });
  report("   the same through the binary, start-up included", cli, "kiwi mcp hash --listing (binary)");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
