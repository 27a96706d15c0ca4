// A real CNCF distribution registry (Debian's docker-registry) for the registry tests: started on
// 127.0.0.1 with a temp config and storage, anonymous, with htpasswd basic auth or with TLS from a
// CA the test makes. The access log counts requests (the "no network" assertions).
import { afterAll, beforeAll } from "bun:test";
import { createPrivateKey, sign } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTemp } from "./tree.ts";

export const REGISTRY_BIN = "/usr/bin/docker-registry";
export const hasRegistry = existsSync(REGISTRY_BIN);

export interface Registry {
  /** `127.0.0.1:<port>`. */
  host: string;
  url: string;
  dir: string;
  /** Requests to /v2/ the registry logged so far. */
  requests(): string[];
  stop(): Promise<void>;
}

export interface RegistryOptions {
  htpasswd?: { user: string; password: string };
  /** Serve HTTPS with a certificate from a fresh CA; `caFile` is its PEM. */
  tls?: boolean;
  /**
   * Distribution's token auth: a token service (Bun, 127.0.0.1) checks these basic credentials
   * and issues RS256 JWTs whose certificate (x5c) the registry trusts through rootcertbundle.
   */
  token?: { user: string; password: string };
}

/**
 * One anonymous registry for a whole test file (started in beforeAll, stopped in afterAll along
 * with the file's temp folders); read it inside tests. Undefined when docker-registry is missing.
 */
export function useRegistry(cleanup: () => void): () => Registry {
  let registry: Registry | undefined;
  beforeAll(async () => {
    if (hasRegistry) registry = await startRegistry();
  });
  afterAll(async () => {
    await registry?.stop();
    cleanup();
  });
  return () => registry!;
}

/** A port free right now (distribution cannot listen on port 0 itself). */
export function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** Makes a CA and a server certificate for 127.0.0.1 signed by it (openssl). */
export function makeCa(dir: string): { caFile: string; certFile: string; keyFile: string } {
  const run = (args: string[]) => {
    const r = Bun.spawnSync(["openssl", ...args], { cwd: dir, stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`);
  };
  run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=kiwi test CA"]);
  run(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"]);
  writeFileSync(join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n");
  run(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf"]);
  return { caFile: join(dir, "ca.pem"), certFile: join(dir, "server.pem"), keyFile: join(dir, "server.key") };
}

/** The token service of distribution's token auth (docs: "Token Authentication Specification"). */
function startTokenServer(dir: string, creds: { user: string; password: string }): { realm: string; certFile: string; server: { stop(force?: boolean): void } } {
  const r = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "token.key", "-out", "token.pem", "-days", "2", "-subj", "/CN=kiwi token issuer"], { cwd: dir, stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl failed: ${r.stderr.toString()}`);
  const key = createPrivateKey(readFileSync(join(dir, "token.key"), "utf8"));
  const der = readFileSync(join(dir, "token.pem"), "utf8").replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const b64url = (data: string | Buffer) => Buffer.from(data).toString("base64url");
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      if (req.headers.get("authorization") !== `Basic ${Buffer.from(`${creds.user}:${creds.password}`).toString("base64")}`) return new Response("bad credentials", { status: 401 });
      const access = url.searchParams.getAll("scope").map((scope) => {
        const [type, name, actions] = scope.split(":");
        return { type, name, actions: (actions ?? "").split(",") };
      });
      const now = Math.floor(Date.now() / 1000);
      const header = b64url(JSON.stringify({ typ: "JWT", alg: "RS256", x5c: [der] }));
      const claims = b64url(JSON.stringify({ iss: "kiwi-test-issuer", sub: creds.user, aud: url.searchParams.get("service"), exp: now + 600, nbf: now - 60, iat: now, jti: crypto.randomUUID(), access }));
      const signature = b64url(sign("sha256", Buffer.from(`${header}.${claims}`), key));
      return Response.json({ token: `${header}.${claims}.${signature}`, expires_in: 600 });
    },
  });
  return { realm: `http://127.0.0.1:${server.port}/token`, certFile: join(dir, "token.pem"), server };
}

/** Starts a registry and waits until it answers. */
export async function startRegistry(options: RegistryOptions = {}): Promise<Registry & { caFile?: string }> {
  const dir = makeTemp("kiwi-registry-");
  const port = freePort();
  const host = `127.0.0.1:${port}`;
  const lines = ["version: 0.1", "log:", "  level: info", "  accesslog:", "    disabled: false", "storage:", "  filesystem:", `    rootdirectory: ${join(dir, "data")}`, "  delete:", "    enabled: true", "http:", `  addr: ${host}`];
  let caFile: string | undefined;
  if (options.tls) {
    const ca = makeCa(dir);
    caFile = ca.caFile;
    lines.push("  tls:", `    certificate: ${ca.certFile}`, `    key: ${ca.keyFile}`);
  }
  let tokenServer: { stop(force?: boolean): void } | undefined;
  if (options.token) {
    const t = startTokenServer(dir, options.token);
    tokenServer = t.server;
    lines.push("auth:", "  token:", `    realm: ${t.realm}`, "    service: kiwi-test", "    issuer: kiwi-test-issuer", `    rootcertbundle: ${t.certFile}`);
  }
  if (options.htpasswd) {
    const r = Bun.spawnSync(["htpasswd", "-Bbn", options.htpasswd.user, options.htpasswd.password], { stdout: "pipe" });
    writeFileSync(join(dir, "htpasswd"), r.stdout.toString());
    lines.push("auth:", "  htpasswd:", "    realm: kiwi-test", `    path: ${join(dir, "htpasswd")}`);
  }
  writeFileSync(join(dir, "config.yml"), `${lines.join("\n")}\n`);
  const log = join(dir, "registry.log");
  const proc = Bun.spawn([REGISTRY_BIN, "serve", join(dir, "config.yml")], { stdout: Bun.file(log), stderr: Bun.file(log) });
  const url = `${options.tls ? "https" : "http"}://${host}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`${url}/v2/`, { tls: caFile ? { ca: readFileSync(caFile, "utf8") } : undefined } as RequestInit);
      await res.body?.cancel();
      break;
    } catch {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`docker-registry did not start: ${existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : ""}`);
      await Bun.sleep(100);
    }
  }
  return {
    host,
    url,
    dir,
    caFile,
    requests: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter((l) => /"(GET|HEAD|PUT|POST|PATCH|DELETE) \/v2\//.test(l)) : []),
    stop: async () => {
      tokenServer?.stop(true);
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}
