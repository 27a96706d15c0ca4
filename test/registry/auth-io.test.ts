// Registry credentials from a docker config on disk, found as docker finds them: the exact
// `auths` key, else a key whose host is the registry's (scheme and path dropped).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findCredentials } from "../../src/registry/auth-io.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

/** A HOME whose ~/.docker/config.json has these `auths`. */
function homeWith(auths: Record<string, unknown>): string {
  const home = makeTemp("kiwi-docker-home-");
  mkdirSync(join(home, ".docker"));
  writeFileSync(join(home, ".docker", "config.json"), JSON.stringify({ auths }));
  return home;
}

const basic = (user: string, password: string) => ({ auth: Buffer.from(`${user}:${password}`).toString("base64") });

describe("docker config credentials", () => {
  test("an auths key written as a URL with a path (docker's legacy form) is found for its host", () => {
    const home = homeWith({ "https://registry.example.com/v1/": basic("ci", "s3cret") });
    expect(findCredentials("registry.example.com", {}, home)).toEqual({ username: "ci", password: "s3cret" });
  });

  test("a key with a port and a path matches that host and port only", () => {
    const home = homeWith({ "http://127.0.0.1:5000/v2/": basic("a", "b") });
    expect(findCredentials("127.0.0.1:5000", {}, home)).toEqual({ username: "a", password: "b" });
    expect(findCredentials("127.0.0.1:5001", {}, home)).toBeUndefined();
  });

  test("the exact key wins over another key of the same host", () => {
    const home = homeWith({ "https://ghcr.io/v1/": basic("old", "x"), "ghcr.io": basic("new", "y") });
    expect(findCredentials("ghcr.io", {}, home)).toEqual({ username: "new", password: "y" });
  });

  test("an identity token (docker's OAuth2 refresh token) is kept apart from the user and password", () => {
    const home = homeWith({ "example.azurecr.io": { auth: Buffer.from("00000000-0000-0000-0000-000000000000:").toString("base64"), identitytoken: "refresh-123" } });
    expect(findCredentials("example.azurecr.io", {}, home)).toEqual({ username: "", password: "", identityToken: "refresh-123" });
  });

  test("Docker Hub's credentials are found under the key docker login writes for it, https://index.docker.io/v1/", () => {
    expect(findCredentials("docker.io", {}, homeWith({ "https://index.docker.io/v1/": basic("hub", "pw") }))).toEqual({ username: "hub", password: "pw" });
    expect(findCredentials("docker.io", {}, homeWith({ "index.docker.io": basic("hub", "pw") }))).toEqual({ username: "hub", password: "pw" });
  });

  test("a registry named like an Object property is no entry of an empty auths", () => {
    const home = homeWith({});
    expect(findCredentials("constructor", {}, home)).toBeUndefined();
  });

  test("as docker, a helper comes first: the host's credHelpers entry, else credsStore, else auths; a helper that has no credentials is anonymous", () => {
    const bin = makeTemp("kiwi-helpers-");
    // Each helper answers for one host with its own name as the user; for another, "not found".
    for (const name of ["perhost", "store"]) {
      writeFileSync(join(bin, `docker-credential-${name}`), `#!/bin/sh\nread host\n[ "$1" = get ] && [ "$host" != unknown.example ] && echo '{"Username":"${name}","Secret":"s"}' && exit 0\necho "credentials not found in native keychain"; exit 1\n`, { mode: 0o755 });
    }
    const env = { PATH: `${bin}:${process.env.PATH}` };
    const home = makeTemp("kiwi-docker-home-");
    mkdirSync(join(home, ".docker"));
    const auths = { "a.example": basic("file", "x"), "b.example": basic("file", "x"), "unknown.example": basic("file", "x") };
    const write = (config: Record<string, unknown>) => writeFileSync(join(home, ".docker", "config.json"), JSON.stringify({ auths, ...config }));
    write({ credHelpers: { "a.example": "perhost" }, credsStore: "store" });
    expect(findCredentials("a.example", env, home)).toEqual({ username: "perhost", password: "s" });
    expect(findCredentials("b.example", env, home)).toEqual({ username: "store", password: "s" });
    expect(findCredentials("unknown.example", env, home)).toBeUndefined();
    write({ credHelpers: { "a.example": "perhost", "b.example": "" } });
    expect(findCredentials("a.example", env, home)).toEqual({ username: "perhost", password: "s" });
    expect(findCredentials("b.example", env, home)).toEqual({ username: "file", password: "x" });
  });
});
