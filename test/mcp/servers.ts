// Real MCP servers for tests: the two reference servers from node_modules and kiwi's SDK-built
// fixtures, started with node (no network), plus checks that no server process outlives a test.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { McpTarget } from "../../src/mcp/mcp-client-io.ts";

export const REPO = join(import.meta.dir, "..", "..");
export const FIXTURES = join(REPO, "test", "fixtures", "mcp");
export const NODE = Bun.which("node") ?? "node";
export const EVERYTHING = join(REPO, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
export const FILESYSTEM = join(REPO, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
export const FIXTURE = join(FIXTURES, "fixture-server.mjs");
export const RAW = join(FIXTURES, "raw-server.mjs");
/** The v2-SDK fixture: speaks only 2026-07-28 (or only 2025-06-18 with MODERN_ERA). */
export const MODERN = join(FIXTURES, "modern-server.mjs");

let counter = 0;

/** A marker argument that makes a started server findable in the process table. */
export function marker(): string {
  return `--kiwi-test-marker=${process.pid}-${Date.now()}-${++counter}`;
}

/** A stdio target running `node script args…` with a minimal env plus `env`. */
export function stdioTarget(script: string, args: string[] = [], env: Record<string, string> = {}): McpTarget & { kind: "stdio" } {
  return { kind: "stdio", argv: [NODE, script, ...args], cwd: REPO, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env } };
}

/** Pids of live (non-zombie) processes whose command line contains `text`. */
export function processesMatching(text: string): number[] {
  const out: number[] = [];
  for (const entry of new Bun.Glob("[0-9]*").scanSync({ cwd: "/proc", onlyFiles: false })) {
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ");
      if (!cmdline.includes(text) || Number(entry) === process.pid) continue;
      if (isAlive(Number(entry))) out.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** True while a pid exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Waits (bounded) until `check` holds: processes die asynchronously after SIGKILL (slowly on a loaded machine). */
export async function eventually(check: () => boolean, ms = 15_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await Bun.sleep(20);
  }
  return check();
}

/** Starts a fixture process that prints "LISTENING <port>" and resolves once it listens. */
async function startListening(argv: string[], env: Record<string, string>, what: string): Promise<{ port: string; stop: () => Promise<void> }> {
  const proc = Bun.spawn(argv, { env: { PATH: process.env.PATH ?? "", ...env }, stdout: "pipe", stderr: "ignore" });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!/LISTENING (\d+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the ${what} fixture exited before listening`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    port: /LISTENING (\d+)/.exec(text)![1]!,
    stop: async () => {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

/** Starts an HTTP fixture (streamable-http or sse) and resolves with its URL once it listens. */
export async function startHttpFixture(kind: "http" | "sse", env: Record<string, string> = {}): Promise<{ url: string; stop: () => Promise<void> }> {
  const { port, stop } = await startListening([NODE, FIXTURE, marker()], { FIXTURE_TRANSPORT: kind, ...env }, kind);
  return { url: `http://127.0.0.1:${port}/${kind === "http" ? "mcp" : "sse"}`, stop };
}

/** Starts the v2-SDK fixture (only 2026-07-28 unless MODERN_ERA says otherwise) over streamable HTTP. */
export async function startModernHttp(env: Record<string, string> = {}): Promise<{ url: string; stop: () => Promise<void> }> {
  const { port, stop } = await startListening([NODE, MODERN, marker()], { MODERN_TRANSPORT: "http", ...env }, "2026-07-28 HTTP");
  return { url: `http://127.0.0.1:${port}/mcp`, stop };
}

export function fixturesExist(): boolean {
  return existsSync(EVERYTHING) && existsSync(FILESYSTEM);
}
