import { describe, expect, test } from "bun:test";
import { thrownBy } from "../helpers/errors.ts";
import { apiHost, credentialServer, formatReference, isLoopbackHost, ociSource, parseReference } from "../../src/registry/reference.ts";

const D = `sha256:${"a".repeat(64)}`;

describe("OCI references", () => {
  test.each([
    ["ghcr.io/acme/tools/echo:1.0.0", { registry: "ghcr.io", repository: "acme/tools/echo", tag: "1.0.0" }],
    ["127.0.0.1:5000/team/dp:latest", { registry: "127.0.0.1:5000", repository: "team/dp", tag: "latest" }],
    [`localhost:5000/dp@${D}`, { registry: "localhost:5000", repository: "dp", digest: D }],
    [`oci://registry.example.com/a/b@${D}`, { registry: "registry.example.com", repository: "a/b", digest: D }],
    [`r.io/a:v1@${D}`, { registry: "r.io", repository: "a", tag: "v1", digest: D }],
  ])("parses %s", (text, want) => {
    expect(parseReference(text)).toEqual(want);
  });

  test.each([
    ["docker.io/acme/echo:1", { registry: "docker.io", repository: "acme/echo", tag: "1" }],
    ["docker.io/echo:1", { registry: "docker.io", repository: "library/echo", tag: "1" }],
    ["index.docker.io/echo:1", { registry: "docker.io", repository: "library/echo", tag: "1" }],
    [`oci://docker.io/library/echo@${D}`, { registry: "docker.io", repository: "library/echo", digest: D }],
    ["registry-1.docker.io/acme/echo:1", { registry: "registry-1.docker.io", repository: "acme/echo", tag: "1" }],
    ["ghcr.io/echo:1", { registry: "ghcr.io", repository: "echo", tag: "1" }],
  ])("names Docker Hub as docker does: %s", (text, want) => {
    expect(parseReference(text)).toEqual(want);
  });

  test("Docker Hub's API is registry-1.docker.io and its credentials are docker login's https://index.docker.io/v1/; other hosts are themselves", () => {
    expect([apiHost("docker.io"), credentialServer("docker.io")]).toEqual(["registry-1.docker.io", "https://index.docker.io/v1/"]);
    expect([apiHost("ghcr.io"), credentialServer("ghcr.io")]).toEqual(["ghcr.io", "ghcr.io"]);
  });

  test.each([
    ["echo:1.0", "names no registry host"],
    ["ghcr.io/acme/echo", "neither a tag nor a digest"],
    ["ghcr.io/Acme/echo:1", "not lowercase path components"],
    ["ghcr.io/acme/echo@sha256:abc", "is not sha256:<64 lowercase hex digits>"],
    ["ghcr.io/acme/echo@md5:" + "a".repeat(32), "is not sha256"],
    ["ghcr.io/acme/echo:-bad", "is not a valid tag"],
  ])("rejects %s with a usage error naming why", (text, why) => {
    const error = thrownBy(() => parseReference(text));
    expect(error.code).toBe("E_USAGE");
    expect(error.message).toContain(why);
  });

  test("the lockfile source always names the digest, never the tag", () => {
    const ref = parseReference("ghcr.io/acme/echo:1.0");
    expect(ociSource(ref, D)).toBe(`oci://ghcr.io/acme/echo@${D}`);
    expect(formatReference(ref)).toBe("ghcr.io/acme/echo:1.0");
  });

  test.each([
    ["127.0.0.1:5000", true],
    ["localhost", true],
    ["[::1]:5000", true],
    ["127.9.8.7", true],
    ["ghcr.io", false],
    ["10.0.0.1:5000", false],
    ["127.0.0.1.example.com", false],
  ])("plain HTTP is allowed without a flag for %s: %p", (host, want) => {
    expect(isLoopbackHost(host)).toBe(want);
  });
});
