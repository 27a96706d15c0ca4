// The registry client against real HTTP servers on 127.0.0.1 that misbehave the ways a registry
// (or something between kiwi and it) can: wrong manifest bytes, lying digest headers, redirects
// off-origin, redirect loops, oversized bodies. Every case must fail closed with a coded error.
import { afterAll, describe, expect, test } from "bun:test";
import { rejectionOf } from "../helpers/errors.ts";
import { formatDigest, sha256Hex } from "../../src/integrity/digest.ts";
import { RegistryClient } from "../../src/registry/oci-client-io.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

const servers: { stop(force?: boolean): void }[] = [];
afterAll(() => {
  for (const s of servers) s.stop(true);
  cleanupTemps();
});

function serve(fetch: (req: Request, server: unknown) => Response | Promise<Response>): string {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch });
  servers.push(server);
  return `127.0.0.1:${server.port}`;
}

/** A raw TCP server on 127.0.0.1: `onRequest` gets each request's socket (to answer or cut). */
function tcp(onRequest: (socket: { terminate(): void; end(data: string): void; write(data: string): number }) => void): string {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data: (socket) => onRequest(socket) } });
  servers.push(server);
  return `127.0.0.1:${server.port}`;
}

const client = (host: string) => new RegistryClient({ registry: host, repository: "team/dp" }, { env: {}, home: "/nonexistent" });

const failure = rejectionOf;

const BLOB = new TextEncoder().encode("print(1)\n");
const DIGEST = formatDigest(sha256Hex(BLOB));

describe("the registry client", () => {
  test("follows a blob redirect to another origin without sending the registry's credentials", async () => {
    const seen: (string | null)[] = [];
    const storage = serve((req) => {
      seen.push(req.headers.get("authorization"));
      return new Response(BLOB);
    });
    const host = serve((req) => {
      if (!req.headers.get("authorization")) return new Response("", { status: 401, headers: { "www-authenticate": 'Basic realm="t"' } });
      return new Response(null, { status: 307, headers: { location: `http://${storage}/signed/blob?x=1` } });
    });
    // Basic credentials come from a docker config in a temp HOME.
    const { mkdirSync, writeFileSync } = await import("node:fs");
    const home = makeTemp("kiwi-client-");
    mkdirSync(`${home}/.docker`);
    writeFileSync(`${home}/.docker/config.json`, JSON.stringify({ auths: { [host]: { auth: Buffer.from("u:p").toString("base64") } } }));
    const c = new RegistryClient({ registry: host, repository: "team/dp" }, { env: {}, home });
    expect(await c.getBlob(DIGEST, BLOB.length)).toEqual(BLOB);
    expect(seen).toEqual([null]);
  });

  test("a docker identity token is traded at the realm for an access token (OAuth2 refresh_token POST), never sent as Basic", async () => {
    const tokenRequests: string[] = [];
    const auth = serve(async (req) => {
      const form = new URLSearchParams(await req.text());
      tokenRequests.push(`${req.method} ${form.get("grant_type")} ${form.get("refresh_token")} ${form.get("service")} ${form.get("scope")} ${req.headers.get("authorization")}`);
      if (req.method !== "POST" || form.get("grant_type") !== "refresh_token" || form.get("refresh_token") !== "refresh-123") return new Response("denied", { status: 401 });
      return Response.json({ access_token: "access-456", expires_in: 300 });
    });
    const host = serve((req) => {
      if (req.headers.get("authorization") !== "Bearer access-456") {
        return new Response("", { status: 401, headers: { "www-authenticate": `Bearer realm="http://${auth}/oauth2/token",service="reg",scope="repository:team/dp:pull"` } });
      }
      return new Response(BLOB);
    });
    const { mkdirSync, writeFileSync } = await import("node:fs");
    const home = makeTemp("kiwi-client-");
    mkdirSync(`${home}/.docker`);
    // As `docker login` leaves it for a registry that answered with a refresh token (ACR, for one).
    writeFileSync(`${home}/.docker/config.json`, JSON.stringify({ auths: { [host]: { auth: Buffer.from("00000000-0000-0000-0000-000000000000:").toString("base64"), identitytoken: "refresh-123" } } }));
    const c = new RegistryClient({ registry: host, repository: "team/dp" }, { env: {}, home });
    expect(await c.getBlob(DIGEST, BLOB.length)).toEqual(BLOB);
    expect(tokenRequests).toEqual(["POST refresh_token refresh-123 reg repository:team/dp:pull null"]);

    writeFileSync(`${home}/.docker/config.json`, JSON.stringify({ auths: { [host]: { identitytoken: "expired" } } }));
    const e = await failure(new RegistryClient({ registry: host, repository: "team/dp" }, { env: {}, home }).getBlob(DIGEST, BLOB.length));
    expect([e.code, e.message]).toEqual(["E_REGISTRY_AUTH", `the token service of ${host} refused the identity token from the docker config (HTTP 401)`]);
  });

  test("a GET that meets a 503 or 429 is tried again (Retry-After honoured), up to three times in all", async () => {
    let calls = 0;
    const flaky = serve(() => (++calls <= 2 ? new Response("busy", { status: calls === 1 ? 503 : 429, headers: calls === 2 ? { "retry-after": "0" } : {} }) : new Response(BLOB)));
    expect(await client(flaky).getBlob(DIGEST, BLOB.length)).toEqual(BLOB);
    expect(calls).toBe(3);

    let down = 0;
    const always = serve(() => {
      down++;
      return new Response("maintenance", { status: 503 });
    });
    const e = await failure(client(always).getBlob(DIGEST, BLOB.length));
    expect([e.code, e.message]).toEqual(["E_REGISTRY", `${always}/team/dp answered HTTP 503 to GET blob ${DIGEST}: maintenance`]);
    expect(down).toBe(3);
  });

  test("a reset connection is tried again, and a 500; an upload (PUT) never is", async () => {
    // A raw socket server: the first request's connection is cut, the second gets a 500, the third the blob.
    let requests = 0;
    const flaky = tcp((socket) => {
      requests++;
      if (requests === 1) socket.terminate();
      else if (requests === 2) socket.end("HTTP/1.1 500 Internal Server Error\r\ncontent-length: 14\r\nconnection: close\r\n\r\nstorage hiccup");
      else socket.end(`HTTP/1.1 200 OK\r\ncontent-length: ${BLOB.length}\r\nconnection: close\r\n\r\n${new TextDecoder().decode(BLOB)}`);
    });
    expect(await client(flaky).getBlob(DIGEST, BLOB.length)).toEqual(BLOB);
    expect(requests).toBe(3);
    // A connection cut every time is named as cut, not as a registry kiwi cannot reach.
    const cutting = tcp((socket) => socket.terminate());
    const cut = await failure(client(cutting).getBlob(DIGEST, BLOB.length));
    expect([cut.code, cut.message]).toEqual(["E_REGISTRY", `${cutting} (http://${cutting}) closed the connection under the request: ECONNRESET`]);
    expect(cut.hint).toContain("cut the connection; try again later");
    let puts = 0;
    const busy = serve(() => {
      puts++;
      return new Response("busy", { status: 503 });
    });
    const put = await failure(client(busy).putManifest("1.0", BLOB, "application/vnd.oci.image.manifest.v1+json"));
    expect(put.message).toContain("answered HTTP 503 to PUT manifest 1.0");
    expect(puts).toBe(1);
  });

  test("a blob download cut midway is fetched again; one cut every time is E_REGISTRY naming the blob", async () => {
    const head = `HTTP/1.1 200 OK\r\ncontent-length: ${BLOB.length}\r\nconnection: close\r\n\r\n`;
    const text = new TextDecoder().decode(BLOB);
    let requests = 0;
    const once = tcp((socket) => {
      requests++;
      if (requests === 1) {
        socket.write(`${head}${text.slice(0, 4)}`);
        socket.terminate();
      } else socket.end(`${head}${text}`);
    });
    expect(await client(once).getBlob(DIGEST, BLOB.length)).toEqual(BLOB);
    expect(requests).toBe(2);
    let cuts = 0;
    const always = tcp((socket) => {
      cuts++;
      socket.write(`${head}${text.slice(0, 4)}`);
      socket.terminate();
    });
    const e = await failure(client(always).getBlob(DIGEST, BLOB.length));
    expect(e.code).toBe("E_REGISTRY");
    expect(e.message).toContain(`broke off blob ${DIGEST} midway`);
    // Three downloads at least (a cut before the headers counts as a request retried on its own).
    expect(cuts).toBeGreaterThanOrEqual(3);
  });

  test("a Bearer realm or a redirect Location that is no URL is E_REGISTRY naming it, not a crash", async () => {
    const realm = serve(() => new Response("", { status: 401, headers: { "www-authenticate": 'Bearer realm="not a url",service="reg"' } }));
    const e = await failure(client(realm).getBlob(DIGEST, BLOB.length));
    expect([e.code, e.message]).toEqual(["E_REGISTRY", `${realm} sent the Bearer realm "not a url", which is not a URL`]);
    const redirect = serve(() => new Response(null, { status: 307, headers: { location: "http://[bad" } }));
    const r = await failure(client(redirect).getBlob(DIGEST, BLOB.length));
    expect([r.code, r.message]).toEqual(["E_REGISTRY", `${redirect} sent a redirect's Location "http://[bad", which is not a URL`]);
  });

  test("gives up after five redirects", async () => {
    const host: string = serve((req) => new Response(null, { status: 302, headers: { location: `${new URL(req.url).pathname}x` } }));
    const e = await failure(client(host).getBlob(DIGEST, BLOB.length));
    expect([e.code, e.message]).toEqual(["E_REGISTRY", `${host} redirected more than 5 times for http://${host}/v2/team/dp/blobs/${DIGEST}`]);
  });

  test("refuses a manifest whose bytes do not hash to the digest asked for", async () => {
    const host = serve(() => new Response('{"schemaVersion":2}', { headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    const e = await failure(client(host).getManifest(DIGEST));
    expect(e.code).toBe("E_ARTIFACT_INVALID");
    expect(e.message).toContain(`served a manifest for ${DIGEST} whose bytes hash to sha256:`);
  });

  test("refuses a tag whose Docker-Content-Digest header disagrees with the bytes", async () => {
    const host = serve(() => new Response("{}", { headers: { "docker-content-digest": DIGEST } }));
    const e = await failure(client(host).getManifest("latest"));
    expect(e.code).toBe("E_ARTIFACT_INVALID");
    expect(e.message).toContain(`the Docker-Content-Digest header says ${DIGEST}`);
  });

  test("stops reading a blob longer than its descriptor, without buffering the rest", async () => {
    const host = serve(() => new Response(new Uint8Array(10 * 1024 * 1024)));
    const e = await failure(client(host).getBlob(DIGEST, BLOB.length));
    expect([e.code, e.message]).toEqual(["E_ARTIFACT_INVALID", `blob ${DIGEST} is larger than the ${BLOB.length} bytes allowed`]);
  });

  test("a 403 is E_REGISTRY_AUTH naming the repository", async () => {
    const host = serve(() => new Response("denied", { status: 403 }));
    const e = await failure(client(host).getBlob(DIGEST, BLOB.length));
    expect([e.code, e.message]).toEqual(["E_REGISTRY_AUTH", `${host}/team/dp refused GET blob ${DIGEST}: HTTP 403 denied`]);
  });

  test("a Bearer realm on plain HTTP is refused unless the realm itself is loopback or --insecure-registry", async () => {
    const host = serve(() => new Response("", { status: 401, headers: { "www-authenticate": 'Bearer realm="http://auth.example.com/token"' } }));
    const e = await failure(client(host).getBlob(DIGEST, BLOB.length));
    expect(e.code).toBe("E_REGISTRY_AUTH");
    expect(e.message).toContain("plain-HTTP token service http://auth.example.com/token");
  });
});
