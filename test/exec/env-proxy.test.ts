// Which environment proxy a URL goes through, as messages name it.
import { describe, expect, test } from "bun:test";
import { proxyFor } from "../../src/exec/env-proxy.ts";

describe("the environment's proxy for a URL", () => {
  test("HTTP_PROXY for http, HTTPS_PROXY for https, either case", () => {
    const env = { HTTP_PROXY: "http://p:3128", https_proxy: "http://s:3128" };
    expect(proxyFor(new URL("http://a.example/"), env)).toEqual({ url: "http://p:3128", variable: "HTTP_PROXY" });
    expect(proxyFor(new URL("https://a.example/"), env)).toEqual({ url: "http://s:3128", variable: "HTTPS_PROXY" });
    expect(proxyFor(new URL("https://a.example/"), { HTTP_PROXY: "http://p:3128" })).toBeUndefined();
  });

  test("NO_PROXY names a host exactly, as a domain suffix, with its port, or *", () => {
    const env = (NO_PROXY: string) => ({ HTTP_PROXY: "http://p:3128", NO_PROXY });
    expect(proxyFor(new URL("http://a.example/"), env("a.example"))).toBeUndefined();
    expect(proxyFor(new URL("http://b.a.example/"), env(".a.example"))).toBeUndefined();
    expect(proxyFor(new URL("http://b.a.example/"), env("a.example"))).toBeUndefined();
    expect(proxyFor(new URL("http://a.example:8080/"), env("a.example:8080"))).toBeUndefined();
    expect(proxyFor(new URL("http://a.example/"), env("*"))).toBeUndefined();
    expect(proxyFor(new URL("http://xa.example/"), env("a.example"))?.url).toBe("http://p:3128");
  });

  test("a proxy's user and password never reach a message", () => {
    expect(proxyFor(new URL("http://a.example/"), { HTTP_PROXY: "http://me:s3cret@p:3128" })?.url).toBe("http://***@p:3128");
    expect(proxyFor(new URL("http://a.example/"), { HTTP_PROXY: "me:s3cret@p:3128" })?.url).not.toContain("s3cret");
  });
});
