// Registry auth and transport from the compiled binary: htpasswd basic auth with credentials from
// ~/.docker/config.json or a docker-credential helper, the distribution Bearer token flow, and
// HTTPS with a CA the test makes (trusted through SSL_CERT_FILE).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hasRegistry, startRegistry } from "../helpers/registry.ts";
import { startProxy } from "../helpers/registry-proxy.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";
import { kiwiIn } from "./lock-helpers.ts";
import { needs } from "../helpers/needs.ts";

afterAll(cleanupTemps);

const tool = () =>
  makeProject({
    ".ai/tools/hello/tool.yaml": "tool_id: hello\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\ndescription: says hello\nconfig:\n  entrypoint: run.sh\n  timeout: 20.0\n",
    ".ai/tools/hello/run.sh": { content: "#!/bin/bash\necho hello\n", mode: 0o755 },
  });
const consumer = () => makeProject({ ".ai/tools/.keep": "" });

/** A kiwi whose HOME has a docker config with `auths` for `host`. */
function withDockerLogin(root: string, host: string, user: string, password: string) {
  const k = kiwiIn(root);
  mkdirSync(join(k.env.HOME!, ".docker"), { recursive: true });
  writeFileSync(join(k.env.HOME!, ".docker", "config.json"), JSON.stringify({ auths: { [host]: { auth: Buffer.from(`${user}:${password}`).toString("base64") } } }));
  return k;
}

describe.skipIf(!needs(hasRegistry, "docker-registry is not installed"))("registry auth", () => {
  test("htpasswd basic auth: refused without a login, refused with a wrong password, accepted from ~/.docker/config.json", async () => {
    const registry = await startRegistry({ htpasswd: { user: "ci", password: "s3cret" } });
    try {
      const ref = `${registry.host}/team/hello:1`;
      const anon = await kiwiIn(tool()).run(["publish", "hello", ref]);
      expect(anon.exitCode).toBe(12);
      expect(anon.stderr).toContain(`error[E_REGISTRY_AUTH]: ${registry.host} requires a login`);
      expect(anon.stderr).toContain(`hint: run "docker login ${registry.host}"`);
      const wrong = await withDockerLogin(tool(), registry.host, "ci", "nope").run(["publish", "hello", ref]);
      expect(wrong.exitCode).toBe(12);
      expect(wrong.stderr).toContain("refused the credentials from the docker config");
      const ok = await withDockerLogin(tool(), registry.host, "ci", "s3cret").run(["publish", "hello", ref]);
      expect([ok.exitCode, ok.stderr]).toEqual([0, ""]);
      const b = consumer();
      const add = await withDockerLogin(b, registry.host, "ci", "s3cret").run(["add", ref]);
      expect([add.exitCode, add.stderr]).toEqual([0, ""]);

      // A credential helper named in credHelpers answers instead (docker's protocol: host on stdin, JSON out).
      const bin = makeTemp("kiwi-helper-");
      writeFileSync(join(bin, "docker-credential-kiwitest"), `#!/bin/bash\nread host\n[ "$1" = get ] && [ "$host" = "${registry.host}" ] && echo '{"Username":"ci","Secret":"s3cret"}' && exit 0\necho "credentials not found in native keychain"; exit 1\n`, { mode: 0o755 });
      const c = consumer();
      const k = kiwiIn(c, { PATH: `${bin}:${process.env.PATH}` });
      mkdirSync(join(k.env.HOME!, ".docker"), { recursive: true });
      writeFileSync(join(k.env.HOME!, ".docker", "config.json"), JSON.stringify({ credHelpers: { [registry.host]: "kiwitest" } }));
      const viaHelper = await k.run(["add", ref]);
      expect([viaHelper.exitCode, viaHelper.stderr]).toEqual([0, ""]);
      expect((await k.run(["exec", "hello"])).stdout).toBe("hello\n");
    } finally {
      await registry.stop();
    }
  });

  test("the Bearer token flow: a token from the realm, with the docker login as basic credentials", async () => {
    const registry = await startRegistry();
    const proxy = startProxy({ upstream: registry.url, bearer: { user: "bot", password: "pw", token: "tok-123" } });
    try {
      const ref = `${proxy.host}/team/hello:1`;
      const anon = await kiwiIn(consumer()).run(["add", ref]);
      expect(anon.exitCode).toBe(12);
      expect(anon.stderr).toContain(`error[E_REGISTRY_AUTH]: the token service of ${proxy.host} refused an anonymous token (HTTP 401)`);
      const pub = await withDockerLogin(tool(), proxy.host, "bot", "pw").run(["publish", "hello", ref]);
      expect([pub.exitCode, pub.stderr]).toEqual([0, ""]);
      const add = await withDockerLogin(consumer(), proxy.host, "bot", "pw").run(["add", ref]);
      expect([add.exitCode, add.stderr]).toEqual([0, ""]);
      expect(proxy.seen).toContain("GET /token");
    } finally {
      proxy.stop();
      await registry.stop();
    }
  });

  test("distribution's own token auth: a JWT from the token service, asked with the docker login", async () => {
    const registry = await startRegistry({ token: { user: "robot", password: "t0ken" } });
    try {
      const ref = `${registry.host}/team/hello:1`;
      const anon = await kiwiIn(consumer()).run(["add", ref]);
      expect(anon.exitCode).toBe(12);
      expect(anon.stderr).toContain(`error[E_REGISTRY_AUTH]: the token service of ${registry.host} refused an anonymous token (HTTP 401)`);
      const pub = await withDockerLogin(tool(), registry.host, "robot", "t0ken").run(["publish", "hello", ref]);
      expect([pub.exitCode, pub.stderr]).toEqual([0, ""]);
      const b = consumer();
      const k = withDockerLogin(b, registry.host, "robot", "t0ken");
      const add = await k.run(["add", ref]);
      expect([add.exitCode, add.stderr]).toEqual([0, ""]);
      expect((await k.run(["exec", "hello"])).stdout).toBe("hello\n");
    } finally {
      await registry.stop();
    }
  });

  test("HTTPS: a registry whose CA is not trusted is refused with a hint; SSL_CERT_FILE makes it work", async () => {
    const registry = await startRegistry({ tls: true });
    try {
      const ref = `${registry.host}/team/hello:1`;
      const untrusted = await kiwiIn(tool()).run(["publish", "hello", ref]);
      expect(untrusted.exitCode).toBe(12);
      expect(untrusted.stderr).toContain(`error[E_REGISTRY]: cannot reach ${registry.host} (https://${registry.host})`);
      expect(untrusted.stderr).toContain("set SSL_CERT_FILE to its CA bundle");
      const pub = await kiwiIn(tool(), { SSL_CERT_FILE: registry.caFile }).run(["publish", "hello", ref]);
      expect([pub.exitCode, pub.stderr]).toEqual([0, ""]);
      const b = consumer();
      const add = await kiwiIn(b, { SSL_CERT_FILE: registry.caFile }).run(["add", ref, "--json"]);
      expect(add.exitCode).toBe(0);
      expect(JSON.parse(add.stdout).source).toStartWith(`oci://${registry.host}/team/hello@sha256:`);
    } finally {
      await registry.stop();
    }
  });
});
