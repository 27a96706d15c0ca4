// A PEP 503 "simple" index on 127.0.0.1 for tests (PyPI is not reachable here): wheels and sdists
// the test builds, listed with #sha256= fragments as PyPI lists them, so the real pip resolves,
// downloads and checks hashes against it. `lie()` serves other bytes for a wheel it already listed.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeTemp } from "./tree.ts";

export interface WheelSpec {
  name: string;
  version: string;
  /** `dependencies` of pyproject.toml (PEP 508 strings). */
  dependencies?: string[];
  /** Module files of the package, by path (e.g. `kiwi_greeting/__init__.py`). */
  files: Record<string, string>;
}

export interface PypiIndex {
  /** The simple index URL, for PIP_INDEX_URL. */
  url: string;
  /** Lists a wheel of `spec`, or with `sdist`, only a source distribution whose build runs code. */
  publish(spec: WheelSpec, options?: { sdist?: boolean }): void;
  lie(name: string, version: string, files: Record<string, string>): void;
  requests: string[];
  stop(): void;
}

const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, "-");

/**
 * Builds a pure-Python wheel (PEP 427: the modules, METADATA, WHEEL and RECORD in a zip) with
 * python3's zipfile. The machine has no wheel-building backend (setuptools without `wheel`), and
 * no index to fetch one from; what pip does with the wheel is the real thing.
 */
export function buildWheel(spec: WheelSpec): { file: string; bytes: Uint8Array } {
  const out = makeTemp("kiwi-wheel-out-");
  const dist = `${spec.name.replace(/[-.]/g, "_")}-${spec.version}`;
  const metadata = [`Metadata-Version: 2.1`, `Name: ${spec.name}`, `Version: ${spec.version}`, ...(spec.dependencies ?? []).map((d) => `Requires-Dist: ${d}`), ""].join("\n");
  const wheel = ["Wheel-Version: 1.0", "Generator: kiwi-tests", "Root-Is-Purelib: true", "Tag: py3-none-any", ""].join("\n");
  const files = { ...spec.files, [`${dist}.dist-info/METADATA`]: metadata, [`${dist}.dist-info/WHEEL`]: wheel };
  const script = `
import base64, hashlib, json, sys, zipfile
files = json.loads(sys.argv[1]); path = sys.argv[2]; record = sys.argv[3]
rows = []
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(files):
        data = files[name].encode()
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        z.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{name},sha256={digest},{len(data)}")
    rows.append(f"{record},,")
    z.writestr(zipfile.ZipInfo(record, date_time=(2026, 1, 1, 0, 0, 0)), "\\n".join(rows) + "\\n")
`;
  const file = `${dist}-py3-none-any.whl`;
  const r = Bun.spawnSync(["python3", "-c", script, JSON.stringify(files), join(out, file), `${dist}.dist-info/RECORD`], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`building ${file} failed: ${r.stderr.toString()}`);
  return { file, bytes: readFileSync(join(out, file)) };
}

/**
 * Builds a source distribution whose build runs code: an in-tree PEP 517 backend (no build
 * requirements, so pip's isolated build needs no index) that writes the modules plus a generated
 * `<module>/built.py` into a wheel. pip can install it only by running that backend.
 */
export function buildSdist(spec: WheelSpec): { file: string; bytes: Uint8Array } {
  const out = makeTemp("kiwi-sdist-out-");
  const dist = `${spec.name.replace(/[-.]/g, "_")}-${spec.version}`;
  const module = spec.name.replace(/[-.]/g, "_");
  const metadata = [`Metadata-Version: 2.1`, `Name: ${spec.name}`, `Version: ${spec.version}`, ...(spec.dependencies ?? []).map((d) => `Requires-Dist: ${d}`), ""].join("\n");
  const backend = `
import base64, hashlib, json, zipfile
FILES = json.loads(${JSON.stringify(JSON.stringify({ ...spec.files, [`${module}/built.py`]: "BUILT = 'by the backend'\n" }))})
DIST = ${JSON.stringify(dist)}
METADATA = ${JSON.stringify(metadata)}
def get_requires_for_build_wheel(config_settings=None):
    return []
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = dict(FILES)
    files[DIST + ".dist-info/METADATA"] = METADATA
    files[DIST + ".dist-info/WHEEL"] = "Wheel-Version: 1.0\\nGenerator: kiwi-tests\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    name = DIST + "-py3-none-any.whl"
    rows = []
    with zipfile.ZipFile(wheel_directory + "/" + name, "w") as z:
        for path in sorted(files):
            data = files[path].encode()
            z.writestr(zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0)), data)
            rows.append(path + ",sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode() + "," + str(len(data)))
        rows.append(DIST + ".dist-info/RECORD,,")
        z.writestr(zipfile.ZipInfo(DIST + ".dist-info/RECORD", date_time=(2026, 1, 1, 0, 0, 0)), "\\n".join(rows) + "\\n")
    return name
`;
  const pyproject = '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n\n[project]\nname = "' + spec.name + '"\nversion = "' + spec.version + '"\n';
  const files = { "PKG-INFO": metadata, "pyproject.toml": pyproject, "backend.py": backend };
  const script = `
import io, json, sys, tarfile
files = json.loads(sys.argv[1]); path = sys.argv[2]; top = sys.argv[3]
with tarfile.open(path, "w:gz") as t:
    for name in sorted(files):
        data = files[name].encode()
        info = tarfile.TarInfo(top + "/" + name); info.size = len(data); info.mtime = 1767225600
        t.addfile(info, io.BytesIO(data))
`;
  const file = `${dist}.tar.gz`;
  const r = Bun.spawnSync(["python3", "-c", script, JSON.stringify(files), join(out, file), dist], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`building ${file} failed: ${r.stderr.toString()}`);
  return { file, bytes: readFileSync(join(out, file)) };
}

export function startPypiIndex(): PypiIndex {
  const wheels = new Map<string, { file: string; bytes: Uint8Array; sha256: string; lie?: Uint8Array }[]>();
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req): Response {
      const path = new URL(req.url).pathname;
      requests.push(path);
      const project = /^\/simple\/([^/]+)\/?$/.exec(path);
      if (project) {
        const list = wheels.get(normalize(decodeURIComponent(project[1]!)));
        if (!list) return new Response("not found", { status: 404 });
        const links = list.map((w) => `<a href="/files/${w.file}#sha256=${w.sha256}">${w.file}</a>`).join("\n");
        return new Response(`<!DOCTYPE html><html><body>\n${links}\n</body></html>`, { headers: { "content-type": "text/html" } });
      }
      const file = /^\/files\/(.+)$/.exec(path);
      if (file) {
        for (const list of wheels.values()) for (const w of list) if (w.file === file[1]) return new Response(w.lie ?? w.bytes);
      }
      return new Response("not found", { status: 404 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/simple/`,
    requests,
    publish(spec, options) {
      const { file, bytes } = options?.sdist ? buildSdist(spec) : buildWheel(spec);
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      const key = normalize(spec.name);
      wheels.set(key, [...(wheels.get(key) ?? []), { file, bytes, sha256 }]);
    },
    lie(name, version, files) {
      const entry = wheels.get(normalize(name))?.find((w) => w.file.includes(`-${version}-`));
      if (!entry) throw new Error(`${name} ${version} is not published`);
      entry.lie = buildWheel({ name, version, files }).bytes;
    },
    stop: () => server.stop(true),
  };
}
