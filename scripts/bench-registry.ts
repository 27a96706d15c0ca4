// What pulling a tool from an OCI registry costs, against curl fetching the same blobs in the same
// run (medians, alternating so load drift hits both alike):
//   1. `kiwi install --frozen-lockfile` of a remote 1,000-file (~10 MB) tool into a fresh clone with
//      an empty cache (manifest, config, 1,001 blobs each verified, cached, placed, then the lock check);
//   2. `kiwi add` of the same tag into a fresh project (the same, plus validation and writing the lock);
//   baseline: one curl process fetching the manifest, the config and every blob in sequence over one
//   connection, to /dev/null (no verification, no disk). Target: install ≤ 1.2 x curl. kiwi fetches
//   8 blobs at a time, which is why it can beat a sequential curl.
//   3. a warm `kiwi install --frozen-lockfile`: the registry's access log must not grow.
//   bun run scripts/bench-registry.ts [--runs 5] [--files 1000] [--kb 10]
// Needs dist/kiwi (bun run build), docker-registry and curl.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRegistry } from "../test/helpers/registry.ts";
import { cleanupTemps } from "../test/helpers/tree.ts";
import { kiwiBinary, measureProcess, median, numberFlag } from "./bench-lib.ts";

const argv = process.argv.slice(2);
const runs = numberFlag(argv, "--runs", 5);
const fileCount = numberFlag(argv, "--files", 1000);
const kb = numberFlag(argv, "--kb", 10);
const kiwi = kiwiBinary();
const work = mkdtempSync(join(tmpdir(), "kiwi-bench-registry-"));
const registry = await startRegistry();

function env(home: string): Record<string, string> {
  return { PATH: process.env.PATH!, HOME: home, KIWI_CACHE_DIR: join(home, "cache"), NO_COLOR: "1", LANG: "C.UTF-8" };
}
let n = 0;
const fresh = (files: Record<string, string> = { ".ai/tools/.keep": "" }) => {
  const root = join(work, `p${n++}`);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
};

try {
  // The tool: 1,000 files of ~10 KB of distinct text in 10 folders.
  const files: Record<string, string> = {
    ".ai/tools/big/tool.yaml": "tool_id: big\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\ndescription: a big tool\nconfig:\n  entrypoint: run.sh\n",
    ".ai/tools/big/run.sh": "#!/bin/bash\necho big\n",
  };
  for (let i = 0; i < fileCount; i++) files[`.ai/tools/big/data/${i % 10}/f${i}.txt`] = `${i} `.repeat(Math.ceil((kb * 1024) / `${i} `.length)).slice(0, kb * 1024);
  const publisher = fresh(files);
  const ref = `${registry.host}/bench/big:1`;
  const pub = Bun.spawnSync([kiwi, "publish", "big", ref, "--json"], { cwd: publisher, env: env(join(work, "pubhome")) });
  if (pub.exitCode !== 0) throw new Error(`publish failed: ${pub.stderr.toString()}`);
  const { digest } = JSON.parse(pub.stdout.toString());

  // The baseline's URL list: exactly the manifest, the config and every layer kiwi fetches.
  const manifest = (await (await fetch(`${registry.url}/v2/bench/big/manifests/${digest}`, { headers: { accept: "application/vnd.oci.image.manifest.v1+json" } })).json()) as { config: { digest: string }; layers: { digest: string; size: number }[] };
  const urls = [`${registry.url}/v2/bench/big/manifests/${digest}`, `${registry.url}/v2/bench/big/blobs/${manifest.config.digest}`, ...[...new Set(manifest.layers.map((l) => l.digest))].map((d) => `${registry.url}/v2/bench/big/blobs/${d}`)];
  const curlConfig = join(work, "curl.cfg");
  writeFileSync(curlConfig, urls.map((u) => `url = "${u}"\noutput = "/dev/null"\n`).join(""));
  const totalBytes = manifest.layers.reduce((s, l) => s + l.size, 0);

  // A lockfile to install from: one add, then fresh clones copy it.
  const seed = fresh();
  const added = Bun.spawnSync([kiwi, "add", ref], { cwd: seed, env: env(join(work, "seedhome")) });
  if (added.exitCode !== 0) throw new Error(`add failed: ${added.stderr.toString()}`);
  const lockText = readFileSync(join(seed, "tool.lock.json"), "utf8");

  const times: Record<string, number[]> = { curl: [], install: [], add: [] };
  const variants: Record<string, () => Promise<number>> = {
    curl: async () => (await measureProcess(["curl", "-sf", "-H", "Accept: application/vnd.oci.image.manifest.v1+json", "-K", curlConfig], env(work), work)).ms,
    install: async () => {
      const root = fresh({ "tool.lock.json": lockText, ".ai/tools/.keep": "" });
      const s = await measureProcess([kiwi, "install", "--frozen-lockfile"], env(join(work, `h${n++}`)), root);
      if (s.exitCode !== 0) throw new Error("install failed");
      return s.ms;
    },
    add: async () => {
      const s = await measureProcess([kiwi, "add", ref], env(join(work, `h${n++}`)), fresh());
      if (s.exitCode !== 0) throw new Error("add failed");
      return s.ms;
    },
  };
  for (const f of Object.values(variants)) await f();
  for (let i = 0; i < runs; i++) for (const [k, f] of Object.entries(variants)) times[k]!.push(await f());
  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])) as Record<string, number>;
  console.log(`pull of a ${fileCount}-file tool (${(totalBytes / 1048576).toFixed(1)} MB, ${urls.length} requests), median of ${runs}:`);
  console.log(`  curl, same blobs in sequence         ${m.curl!.toFixed(0).padStart(6)} ms`);
  console.log(`  kiwi install --frozen-lockfile (cold) ${m.install!.toFixed(0).padStart(6)} ms   x${(m.install! / m.curl!).toFixed(2)} of curl (target <= 1.2)`);
  console.log(`  kiwi add (cold)                      ${m.add!.toFixed(0).padStart(6)} ms   x${(m.add! / m.curl!).toFixed(2)} of curl`);

  // Warm: every blob cached and placed; the registry must see nothing.
  const warmHome = join(work, "warm");
  const warmRoot = fresh({ "tool.lock.json": lockText, ".ai/tools/.keep": "" });
  await measureProcess([kiwi, "install", "--frozen-lockfile"], env(warmHome), warmRoot);
  const before = registry.requests().length;
  const warm = await measureProcess([kiwi, "install", "--frozen-lockfile"], env(warmHome), warmRoot);
  console.log(`  warm kiwi install --frozen-lockfile  ${warm.ms.toFixed(0).padStart(6)} ms   registry requests: ${registry.requests().length - before}`);
} finally {
  await registry.stop();
  cleanupTemps();
  rmSync(work, { recursive: true, force: true });
}
