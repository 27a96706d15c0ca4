// A proxy in front of the real test registry for the fault tests: it can rewrite a response's
// bytes (a blob that does not match its digest, a tampered config, an oversized manifest), stall
// one response forever (kill -9 during a pull) or midway through its body, or demand a Bearer token from its own token
// endpoint (the distribution token flow).
export interface ProxyOptions {
  /** Upstream `http://127.0.0.1:<port>`. */
  upstream: string;
  /** Rewrites the body of matching responses. */
  rewrite?: { path: RegExp; body: (bytes: Uint8Array) => Uint8Array };
  /** Never answers matching requests (the client hangs until killed). */
  stall?: RegExp;
  /** Answers matching GETs with their headers and half the body, then sends nothing more. */
  stallBody?: RegExp;
  /** Requires `Authorization: Bearer <token>` obtained from /token with these basic credentials. */
  bearer?: { user: string; password: string; token: string };
}

export interface Proxy {
  host: string;
  /** Paths of every request seen. */
  seen: string[];
  stop(): void;
}

export function startProxy(options: ProxyOptions): Proxy {
  const seen: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      seen.push(`${req.method} ${url.pathname}`);
      if (options.bearer) {
        const b = options.bearer;
        if (url.pathname === "/token") {
          const want = `Basic ${Buffer.from(`${b.user}:${b.password}`).toString("base64")}`;
          if (req.headers.get("authorization") !== want) return new Response("denied", { status: 401 });
          if (!url.searchParams.get("scope")?.startsWith("repository:")) return new Response("no scope", { status: 400 });
          return Response.json({ token: b.token });
        }
        if (req.headers.get("authorization") !== `Bearer ${b.token}`) {
          return new Response("{}", { status: 401, headers: { "www-authenticate": `Bearer realm="http://${url.host}/token",service="kiwi-test"` } });
        }
      }
      if (options.stall?.test(url.pathname)) return new Promise<Response>(() => {});
      const headers = new Headers(req.headers);
      headers.delete("authorization");
      headers.delete("host");
      const up = await fetch(`${options.upstream}${url.pathname}${url.search}`, { method: req.method, headers, body: req.body ? await req.arrayBuffer() : undefined, redirect: "manual" });
      const outHeaders = new Headers(up.headers);
      outHeaders.delete("content-length");
      outHeaders.delete("content-encoding");
      let body: Uint8Array | null = req.method === "HEAD" ? null : new Uint8Array(await up.arrayBuffer());
      if (body && options.stallBody?.test(url.pathname)) {
        const half = body.slice(0, Math.floor(body.length / 2));
        outHeaders.set("content-length", String(body.length));
        return new Response(new ReadableStream({ start: (c) => c.enqueue(half) }), { status: up.status, headers: outHeaders });
      }
      if (body && options.rewrite?.path.test(url.pathname)) {
        body = options.rewrite.body(body);
        outHeaders.delete("docker-content-digest");
      }
      return new Response(body, { status: up.status, headers: outHeaders });
    },
  });
  return { host: `127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) };
}
