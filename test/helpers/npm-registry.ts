// A real npm registry on 127.0.0.1 for tests: packuments and tarballs over HTTP, the tarballs made
// by the real `npm pack` from package folders the test writes. npm (the real client) resolves and
// installs from it through npm_config_registry. `lie()` makes it serve other bytes for a version it
// already published, as a compromised registry or mirror would.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTemp } from "./tree.ts";

export interface PackageSpec {
  name: string;
  version: string;
  /** package.json fields besides name and version (dependencies, bin, scripts, main). */
  json?: Record<string, unknown>;
  /** Files of the package, by path. */
  files: Record<string, string>;
}

interface Published {
  spec: PackageSpec;
  tarball: Uint8Array;
  integrity: string;
  shasum: string;
}

export interface NpmRegistry {
  url: string;
  publish(spec: PackageSpec): void;
  /** Serves `bytes` of another package build for name@version from now on (the packument keeps the old integrity). */
  lie(name: string, version: string, files: Record<string, string>): void;
  requests: string[];
  /** The Authorization header of each request ("" when none), in step with `requests`. */
  authorizations: string[];
  stop(): void;
}

/** Packs a package folder with the real npm and returns the tarball's bytes. */
function pack(spec: PackageSpec): Uint8Array {
  const dir = makeTemp("kiwi-npm-pkg-");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: spec.name, version: spec.version, license: "MIT", ...spec.json }, null, 2));
  for (const [path, text] of Object.entries(spec.files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const out = makeTemp("kiwi-npm-tgz-");
  const r = Bun.spawnSync(["npm", "pack", "--silent", "--pack-destination", out], { cwd: dir, stdout: "pipe", stderr: "pipe", env: { ...process.env, npm_config_update_notifier: "false" } });
  if (r.exitCode !== 0) throw new Error(`npm pack failed: ${r.stderr.toString()}`);
  const file = r.stdout.toString().trim().split("\n").pop()!;
  return readFileSync(join(out, file));
}

export function startNpmRegistry(): NpmRegistry {
  const packages = new Map<string, Map<string, Published>>();
  const lies = new Map<string, Uint8Array>();
  const requests: string[] = [];
  const authorizations: string[] = [];
  let port = 0;
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req): Response {
      const path = decodeURIComponent(new URL(req.url).pathname);
      requests.push(path);
      authorizations.push(req.headers.get("authorization") ?? "");
      const tgz = /^\/(.+)\/-\/[^/]+-(\d[^/]*)\.tgz$/.exec(path);
      if (tgz) {
        const lie = lies.get(`${tgz[1]}@${tgz[2]}`);
        const published = packages.get(tgz[1]!)?.get(tgz[2]!);
        if (!published) return new Response("not found", { status: 404 });
        return new Response(lie ?? published.tarball, { headers: { "content-type": "application/octet-stream" } });
      }
      const name = path.slice(1);
      const versions = packages.get(name);
      if (!versions) return Response.json({ error: "Not found" }, { status: 404 });
      const base = `http://127.0.0.1:${port}`;
      const all = [...versions.values()];
      const doc = {
        name,
        "dist-tags": { latest: all[all.length - 1]!.spec.version },
        versions: Object.fromEntries(
          all.map((p) => [
            p.spec.version,
            {
              name,
              version: p.spec.version,
              license: "MIT",
              ...p.spec.json,
              dist: { tarball: `${base}/${name}/-/${name.split("/").pop()}-${p.spec.version}.tgz`, integrity: p.integrity, shasum: p.shasum },
            },
          ]),
        ),
      };
      return Response.json(doc);
    },
  });
  port = server.port ?? 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    authorizations,
    publish(spec) {
      const tarball = pack(spec);
      const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
      const shasum = createHash("sha1").update(tarball).digest("hex");
      const versions = packages.get(spec.name) ?? new Map<string, Published>();
      versions.set(spec.version, { spec, tarball, integrity, shasum });
      packages.set(spec.name, versions);
    },
    lie(name, version, files) {
      const spec = packages.get(name)?.get(version)?.spec;
      if (!spec) throw new Error(`${name}@${version} is not published`);
      lies.set(`${name}@${version}`, pack({ ...spec, files }));
    },
    stop: () => server.stop(true),
  };
}
