// npm packages a tool needs, through the compiled binary and the real npm client: resolved at
// lock, installed into kiwi's cache at install, materialised beside the tool at exec with no
// network. Most cases use a real npm registry on 127.0.0.1 (packages built with `npm pack`), which
// can also be stopped or made to lie; one case installs the MCP reference server from npmjs.org.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { probeSandbox } from "../../src/exec/sandbox-io.ts";
import { KIWI_BIN } from "../helpers/kiwi.ts";
import { type NpmRegistry, startNpmRegistry } from "../helpers/npm-registry.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";
import { kiwiIn, listFiles } from "./lock-helpers.ts";

/** A stdio MCP server in plain node (newline-delimited JSON-RPC, a handshake revision), published as a package with a bin. */
const ECHO_SERVER = `const rl = require("readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  if (msg.method === "initialize") send({ id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "kiwi-mcp-echo", version: "1.0.0" } } });
  else if (msg.method === "tools/list") send({ id: msg.id, result: { tools: [{ name: "echo", description: "Echoes the message.", inputSchema: { type: "object", properties: { message: { type: "string" } } } }] } });
  else if (msg.method === "tools/call") send({ id: msg.id, result: { content: [{ type: "text", text: "Echo: " + msg.params.arguments.message }] } });
  else send({ id: msg.id, error: { code: -32601, message: "unknown method" } });
});
`;

const registry: NpmRegistry = startNpmRegistry();
{
  registry.publish({ name: "kiwi-pad", version: "1.0.0", json: { main: "index.js", dependencies: { "kiwi-digits": "^2.0.0" } }, files: { "index.js": "const d = require('kiwi-digits');\nmodule.exports = (s, n) => d.zeros(n - String(s).length) + s;\n" } });
  registry.publish({ name: "kiwi-pad", version: "1.1.0", json: { main: "index.js", dependencies: { "kiwi-digits": "^2.0.0" } }, files: { "index.js": "module.exports = () => 'v1.1';\n" } });
  registry.publish({ name: "kiwi-digits", version: "2.0.0", json: { main: "index.js" }, files: { "index.js": "exports.zeros = (n) => '0'.repeat(Math.max(0, n));\n" } });
  registry.publish({ name: "kiwi-scripted", version: "1.0.0", json: { main: "index.js", scripts: { postinstall: "node -e \"require('fs').writeFileSync(process.env.HOME + '/postinstall-ran', '')\"" } }, files: { "index.js": "module.exports = 1;\n" } });
  registry.publish({ name: "kiwi-built", version: "1.0.0", json: { main: "index.js", scripts: { postinstall: "node -e \"require('fs').writeFileSync('built.js', 'module.exports = \\'built at install\\';')\"" } }, files: { "index.js": "module.exports = require('./built.js');\n" } });
  registry.publish({ name: "kiwi-failing", version: "1.0.0", json: { main: "index.js", scripts: { install: "node -e \"console.error('no compiler here'); process.exit(3)\"" } }, files: { "index.js": "module.exports = 1;\n" } });
  // esbuild's shape: one optional package per platform, of which npm installs the one that fits.
  registry.publish({ name: "kiwi-native-here", version: "1.0.0", json: { main: "index.js", os: [process.platform] }, files: { "index.js": "module.exports = 'native here';\n" } });
  registry.publish({ name: "kiwi-native-elsewhere", version: "1.0.0", json: { main: "index.js", os: [`!${process.platform}`] }, files: { "index.js": "module.exports = 'native elsewhere';\n" } });
  registry.publish({ name: "kiwi-native", version: "1.0.0", json: { main: "index.js", optionalDependencies: { "kiwi-native-here": "1.0.0", "kiwi-native-elsewhere": "1.0.0" } }, files: { "index.js": "let m;\ntry { m = require('kiwi-native-here'); } catch { m = require('kiwi-native-elsewhere'); }\nmodule.exports = m;\n" } });
  // bundleDependencies: kiwi-inner ships inside kiwi-bundler's tarball (npm locks it inBundle, with no integrity of its own).
  registry.publish({ name: "kiwi-inner", version: "1.0.0", json: { main: "index.js" }, files: { "index.js": "module.exports = 'from the registry';\n" } });
  registry.publish({ name: "kiwi-bundler", version: "1.0.0", json: { main: "index.js", dependencies: { "kiwi-inner": "1.0.0" }, bundleDependencies: ["kiwi-inner"] }, files: { "index.js": "module.exports = require('kiwi-inner');\n", "node_modules/kiwi-inner/package.json": JSON.stringify({ name: "kiwi-inner", version: "1.0.0", main: "index.js" }), "node_modules/kiwi-inner/index.js": "module.exports = 'bundled';\n" } });
  registry.publish({ name: "kiwi-mcp-echo", version: "1.0.0", json: { bin: { "kiwi-mcp-echo": "server.js" } }, files: { "server.js": ECHO_SERVER } });
  // Reads its config under HOME at start, as many servers do: the sandbox withholds that.
  registry.publish({ name: "kiwi-mcp-homecache", version: "1.0.0", json: { bin: { "kiwi-mcp-homecache": "server.js" } }, files: { "server.js": `require("fs").readFileSync(require("path").join(process.env.HOME, ".homecache.json"));\n${ECHO_SERVER}` } });
  registry.publish({ name: "kiwi-old", version: "1.0.0", json: { main: "index.js", deprecated: "use kiwi-pad instead\n\u001b[31m" }, files: { "index.js": "module.exports = 'old';\n" } });
  registry.publish({ name: "kiwi-cli", version: "1.0.0", json: { bin: { "kiwi-hello": "bin/hello.js" } }, files: { "bin/hello.js": "#!/usr/bin/env node\nconsole.log(require('../lib/msg.js'));\n", "lib/msg.js": "module.exports = 'hello from a bin';\n" } });
  registry.publish({ name: "kiwi-big", version: "1.0.0", json: { main: "index.js" }, files: { "index.js": "module.exports = 1;\n", "blob.txt": "x".repeat(200_000) } });
}
// npm resolves and installs for real: seconds, not milliseconds.
setDefaultTimeout(60_000);
afterAll(() => {
  registry.stop();
  cleanupTemps();
});

/** A node tool that pads 7 to three digits with kiwi-pad. */
const padTool = (requires: string[]) => ({
  ".ai/tools/pad/tool.yaml": `tool_id: pad\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires:\n${requires.map((r) => `  - ${r}\n`).join("")}`,
  ".ai/tools/pad/main.js": "const pad = require('kiwi-pad');\nconsole.log(pad(7, 3));\n",
});

const withRegistry = (extra: Record<string, string> = {}) => ({ npm_config_registry: registry.url, npm_config_cache: makeTemp("kiwi-npm-cache-"), ...extra });

describe("a node tool with npm packages", () => {
  const root = makeProject(padTool(["npm:kiwi-pad@^1.0.0 <1.1.0"]));
  const kiwi = kiwiIn(root, withRegistry());

  test("kiwi lock records npm's resolution: every package with its version and sha512 integrity", async () => {
    const r = await kiwi.run(["lock"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain(`resolved pad: 2 npm packages from ${new URL(registry.url).origin} (npm_config_registry)`);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    const npm = lock.dependencies.pad.npm;
    expect(npm.requires).toEqual({ "kiwi-pad": "^1.0.0 <1.1.0" });
    expect(Object.keys(npm.packages)).toEqual(["node_modules/kiwi-digits", "node_modules/kiwi-pad"]);
    expect(npm.packages["node_modules/kiwi-pad"].version).toBe("1.0.0");
    expect(npm.packages["node_modules/kiwi-pad"].integrity).toMatch(/^sha512-/);
    expect(npm.tree).toBeUndefined();
  });

  test("before kiwi install, exec refuses: packages are never fetched at exec time", async () => {
    const before = registry.requests.length;
    const r = await kiwi.run(["exec", "pad"]);
    expect(r.exitCode).toBe(15);
    expect(r.stderr).toContain("error[E_DEPS]: pad's npm packages are locked but not installed");
    expect(registry.requests.length).toBe(before);
  });

  test("kiwi install installs them into the cache and records the tree; exec then runs with the registry unreachable", async () => {
    const r = await kiwi.run(["install"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toEndWith("; 1 package set (1 installed, 0 already cached)\n");
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    expect(lock.dependencies.pad.npm.tree).toMatch(/^sha256:[0-9a-f]{64}$/);
    const offline = await kiwi.run(["exec", "pad"], { npm_config_registry: "http://127.0.0.1:9/" });
    expect([offline.exitCode, offline.stdout]).toEqual([0, "007\n"]);
  });

  test("a warm install finds the tree in the cache and does not run npm (the registry may be down)", async () => {
    const before = registry.requests.length;
    const r = await kiwi.run(["install", "--frozen-lockfile"], { npm_config_registry: "http://127.0.0.1:9/" });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).not.toContain("resolved pad");
    expect(r.stdout).toEndWith("; 1 package set (0 installed, 1 already cached)\n");
    const json = await kiwi.run(["install", "--frozen-lockfile", "--json"]);
    expect(JSON.parse(json.stdout).packages).toEqual({ installed: 0, reused: 1 });
    expect(registry.requests.length).toBe(before);
  });

  test.skipIf(!probeSandbox(process.env).usable)("in the sandbox it needs no network and no home folder", async () => {
    const r = await kiwi.run(["exec", "pad", "--sandbox=require"]);
    expect([r.exitCode, r.stdout]).toEqual([0, "007\n"]);
  });

  test("kiwi verify checks the installed tree; cache prune keeps it; a tampered package file is caught", async () => {
    const verified = await kiwi.run(["verify", "--json"]);
    expect(verified.exitCode).toBe(0);
    expect(JSON.parse(verified.stdout).cache.checked).toBeGreaterThan(4);
    // The tool's run directory (its integrity and its tree's key) is referenced: prune keeps it.
    const runs = readdirSync(join(kiwi.cache, "runs")).filter((n) => /^[0-9a-f]{64}-[0-9a-f]{16}$/.test(n));
    expect(runs.length).toBe(1);
    expect((await kiwi.run(["cache", "prune", "--grace", "0"])).exitCode).toBe(0);
    expect(readdirSync(join(kiwi.cache, "runs"))).toContain(runs[0]!);
    expect((await kiwi.run(["exec", "pad"])).stdout).toBe("007\n");
    // The blob of kiwi-pad's index.js, rewritten in the cache.
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    const treeHex = lock.dependencies.pad.npm.tree.slice("sha256:".length);
    const entry = JSON.parse(readFileSync(join(kiwi.cache, "index", treeHex.slice(0, 2), `${treeHex.slice(2)}.json`), "utf8"));
    const index = entry.files.find((f: { path: string }) => f.path === "node_modules/kiwi-pad/index.js");
    const blob = join(kiwi.cache, "blobs", index.sha256.slice(0, 2), index.sha256.slice(2));
    chmodSync(blob, 0o644);
    writeFileSync(blob, "module.exports = () => 'tampered';\n");
    const r = await kiwi.run(["verify"]);
    expect(r.exitCode).toBe(4);
    expect(r.stdout).toContain("pad node_modules/kiwi-pad/index.js");
  });

  test("kiwi verify fails when the lock records packages but no installed tree (exec would refuse them)", async () => {
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const lockPath = join(root, "tool.lock.json");
    const text = readFileSync(lockPath, "utf8");
    // What kiwi lock writes for a new resolution, before kiwi install records the tree.
    writeFileSync(lockPath, text.replace(/,\n\s*"tree": "sha256:[0-9a-f]{64}"/, ""));
    const r = await kiwi.run(["verify"]);
    expect(r.exitCode).toBe(4);
    expect(r.stdout).toContain("? pad (installed npm packages)  locked, not installed");
    expect(r.stderr).toContain('error[E_CACHE_MISSING]: 1 locked entry is not in the cache (first: installed npm packages of "pad", not recorded in the lock)');
    expect((await kiwi.run(["exec", "pad"])).exitCode).toBe(15);
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    expect((await kiwi.run(["verify"])).exitCode).toBe(0);
  });

  test("a frozen install with a changed requirement is refused with what changed", async () => {
    const changed = makeProject(padTool(["npm:kiwi-pad@^1.0.0 <1.1.0"]));
    const k = kiwiIn(changed, withRegistry());
    expect((await k.run(["install"])).exitCode).toBe(0);
    writeFileSync(join(changed, ".ai/tools/pad/tool.yaml"), readFileSync(join(changed, ".ai/tools/pad/tool.yaml"), "utf8").replace("^1.0.0 <1.1.0", "1.1.0"));
    const r = await k.run(["install", "--frozen-lockfile"]);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain("E_LOCK_STALE");
    expect(r.stderr).toContain("~ requires (npm): ~ kiwi-pad ^1.0.0 <1.1.0 -> 1.1.0");
  });
});

test("a lock entry whose tree and packages come from two resolutions (a bad merge) is refused by kiwi verify, kiwi install and kiwi exec", async () => {
  const root = makeProject(padTool(["npm:kiwi-pad@^1.0.0 <1.1.0"]));
  const kiwi = kiwiIn(root, withRegistry());
  const lockPath = join(root, "tool.lock.json");
  const manifest = join(root, ".ai/tools/pad/tool.yaml");
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  const oldTree = JSON.parse(readFileSync(lockPath, "utf8")).dependencies.pad.npm.tree as string;
  writeFileSync(manifest, readFileSync(manifest, "utf8").replace("^1.0.0 <1.1.0", "1.1.0"));
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  expect((await kiwi.run(["exec", "pad"])).stdout).toBe("v1.1\n");
  // One side bumped kiwi-pad to 1.1.0; the merge kept the other side's tree line.
  const text = readFileSync(lockPath, "utf8");
  writeFileSync(lockPath, text.replace(JSON.parse(text).dependencies.pad.npm.tree, oldTree));
  // This machine holds both trees: exec must not run the 1.0.0 tree for a lock that lists 1.1.0.
  const exec = await kiwi.run(["exec", "pad"]);
  expect([exec.exitCode, exec.stdout]).toEqual([5, ""]);
  expect(exec.stderr).toContain("error[E_LOCK_INVALID]: tool.lock.json: the installed npm tree recorded for pad");
  expect(exec.stderr).toContain('delete the "tree" line of pad\'s npm entry');
  const verify = await kiwi.run(["verify"]);
  expect(verify.exitCode).toBe(5);
  expect(verify.stdout).toContain(`! the installed npm tree recorded for pad (${oldTree.slice(0, 19)}) is not the packages its entry lists: it holds kiwi-pad 1.0.0, not 1.1.0`);
  expect(verify.stderr).toContain('hint: the entry\'s tree and packages come from two resolutions (a merge that kept one side\'s of each?); delete the "tree" line of pad\'s npm entry');
  const install = await kiwi.run(["install", "--frozen-lockfile"]);
  expect(install.exitCode).toBe(5);
  expect(install.stderr).toContain("error[E_LOCK_INVALID]: tool.lock.json: the installed npm tree recorded for pad");
  // What the hint says: without the tree line, install records the tree of the packages listed.
  writeFileSync(lockPath, readFileSync(lockPath, "utf8").replace(/,\n\s*"tree": "sha256:[0-9a-f]{64}"/, ""));
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  expect((await kiwi.run(["exec", "pad"])).stdout).toBe("v1.1\n");
  expect((await kiwi.run(["verify"])).exitCode).toBe(0);
});

test("a project .npmrc that sets another layout or lockfile version does not change what kiwi locks and installs", async () => {
  // install-strategy=linked puts symbolic links in node_modules; lockfile-version=1 has no "packages".
  const root = makeProject({ ...padTool(["npm:kiwi-pad@^1.0.0 <1.1.0"]), ".npmrc": "install-strategy=linked\nlockfile-version=1\n" });
  const kiwi = kiwiIn(root, withRegistry());
  const install = await kiwi.run(["install"]);
  expect([install.exitCode, install.stderr]).toEqual([0, expect.not.stringContaining("error")]);
  expect(Object.keys(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.pad.npm.packages)).toEqual(["node_modules/kiwi-digits", "node_modules/kiwi-pad"]);
  const r = await kiwi.run(["exec", "pad"]);
  expect([r.exitCode, r.stdout]).toEqual([0, "007\n"]);
});

test("a scope's registry and auth token from the project .npmrc: packages come from it, and the token is sent but never written or printed", async () => {
  const scoped = startNpmRegistry();
  try {
    scoped.publish({ name: "@kiwi-acme/secret", version: "1.0.0", json: { main: "index.js" }, files: { "index.js": "module.exports = 'from acme';\n" } });
    const token = "npm_KIWITESTTOKEN0123456789abcdef";
    const host = new URL(scoped.url).host;
    const root = makeProject({
      ".npmrc": `@kiwi-acme:registry=${scoped.url}\n//${host}/:_authToken=\${ACME_NPM_TOKEN}\n`,
      ".ai/tools/acme/tool.yaml": "tool_id: acme\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:@kiwi-acme/secret@1.0.0]\n",
      ".ai/tools/acme/main.js": "console.log(require('@kiwi-acme/secret'));\n",
    });
    const kiwi = kiwiIn(root, { npm_config_cache: makeTemp("kiwi-npm-cache-"), ACME_NPM_TOKEN: token });
    const lock = await kiwi.run(["lock", "--json"]);
    expect(lock.exitCode).toBe(0);
    expect(JSON.parse(lock.stdout).resolutions).toEqual([{ tools: ["acme"], ecosystem: "npm", packages: 1, sources: [new URL(scoped.url).origin], setting: "the project's .npmrc" }]);
    const install = await kiwi.run(["install"]);
    expect(install.exitCode).toBe(0);
    expect(scoped.authorizations.length).toBeGreaterThan(0);
    expect(scoped.authorizations.every((a) => a === `Bearer ${token}`)).toBe(true);
    // A failure quotes npm, and still not the token.
    writeFileSync(join(root, ".ai/tools/acme/tool.yaml"), readFileSync(join(root, ".ai/tools/acme/tool.yaml"), "utf8").replace("@1.0.0", "@9.0.0"));
    const missing = await kiwi.run(["lock"]);
    expect(missing.exitCode).toBe(15);
    const r = await kiwi.run(["exec", "acme"]);
    for (const out of [lock.stdout, lock.stderr, install.stdout, install.stderr, missing.stderr, r.stderr, readFileSync(join(root, "tool.lock.json"), "utf8")]) expect(out).not.toContain(token);
    expect(listFiles(kiwi.cache).filter((f) => readFileSync(join(kiwi.cache, f)).includes(token))).toEqual([]);
  } finally {
    scoped.stop();
  }
});

test("a renamed tool keeps the resolution and installed tree of its requirements: the lock reaches no registry, exec needs no install", async () => {
  const root = makeProject(padTool(["npm:kiwi-pad@^1.0.0 <1.1.0"]));
  const kiwi = kiwiIn(root, withRegistry());
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  const before = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.pad.npm;
  renameSync(join(root, ".ai/tools/pad"), join(root, ".ai/tools/padder"));
  const manifest = join(root, ".ai/tools/padder/tool.yaml");
  writeFileSync(manifest, readFileSync(manifest, "utf8").replace("tool_id: pad", "tool_id: padder"));
  const requests = registry.requests.length;
  const lock = await kiwi.run(["lock"], { npm_config_registry: "http://127.0.0.1:9/" });
  expect([lock.exitCode, lock.stderr]).toEqual([0, expect.not.stringContaining("resolved")]);
  expect(registry.requests.length).toBe(requests);
  const deps = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies;
  expect(Object.keys(deps)).toEqual(["padder"]);
  expect(deps.padder.npm).toEqual(before);
  const r = await kiwi.run(["exec", "padder"]);
  expect([r.exitCode, r.stdout]).toEqual([0, "007\n"]);
});

test("kill -9 at any point of an install with packages: the lock parses, exec runs a verified tree or refuses, a rerun completes and removes what the killed runs staged", async () => {
  const root = makeProject(padTool(["npm:kiwi-pad@^1.0.0 <1.1.0"]));
  const temp = makeTemp("kiwi-tmpdir-");
  const kiwi = kiwiIn(root, { ...withRegistry(), TMPDIR: temp });
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  const manifest = join(root, ".ai/tools/pad/tool.yaml");
  writeFileSync(manifest, readFileSync(manifest, "utf8").replace("^1.0.0 <1.1.0", "1.1.0"));
  for (const delay of [150, 400, 800, 1500, 2500]) {
    const proc = Bun.spawn([KIWI_BIN, "install"], { cwd: root, env: kiwi.env, stdout: "ignore", stderr: "ignore" });
    await Bun.sleep(delay);
    proc.kill(9);
    await proc.exited;
    JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    const r = await kiwi.run(["exec", "pad"]);
    // The old lock no longer matches the manifest (6); a new one without its tree is not installed (15).
    if (r.exitCode === 0) expect(r.stdout).toBe("v1.1\n");
    else expect([6, 15]).toContain(r.exitCode);
  }
  // Each killed run's staging folder is named after its pid; the rerun staged, so it removed them.
  writeFileSync(manifest, readFileSync(manifest, "utf8").replace("npm:kiwi-pad@1.1.0", "npm:kiwi-pad@^1.1.0"));
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  expect(readdirSync(temp).filter((n) => n.startsWith("kiwi-npm-"))).toEqual([]);
  const r = await kiwi.run(["exec", "pad"], { npm_config_registry: "http://127.0.0.1:9/" });
  expect([r.exitCode, r.stdout]).toEqual([0, "v1.1\n"]);
  expect((await kiwi.run(["verify"])).exitCode).toBe(0);
});

test("a kiwi lock that resolves anew while an install runs keeps its entry without the install's tree", async () => {
  const root = makeProject(padTool(["npm:kiwi-pad@^1.0.0 <1.1.0"]));
  const kiwi = kiwiIn(root, withRegistry());
  expect((await kiwi.run(["lock"])).exitCode).toBe(0);
  // npm as kiwi install finds it on PATH: the real one, but npm ci waits for the test's go.
  const bin = makeTemp("kiwi-npm-wrapper-");
  const started = join(bin, "started");
  const go = join(bin, "go");
  writeFileSync(join(bin, "npm"), `#!/bin/sh\nif [ "$1" = ci ]; then : > "${started}"; while [ ! -e "${go}" ]; do sleep 0.05; done; fi\nexec "${Bun.which("npm")}" "$@"\n`);
  chmodSync(join(bin, "npm"), 0o755);
  const install = Bun.spawn([KIWI_BIN, "install"], { cwd: root, env: { ...kiwi.env, PATH: `${bin}:${kiwi.env.PATH}` }, stdout: "pipe", stderr: "pipe" });
  while (!existsSync(started)) await Bun.sleep(20);
  // Meanwhile the requirement changes and kiwi lock resolves it: kiwi-pad 1.1.0, not installed.
  const manifest = join(root, ".ai/tools/pad/tool.yaml");
  writeFileSync(manifest, readFileSync(manifest, "utf8").replace("^1.0.0 <1.1.0", "1.1.0"));
  expect((await kiwi.run(["lock"])).exitCode).toBe(0);
  writeFileSync(go, "");
  expect(await install.exited).toBe(0);
  const npm = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.pad.npm;
  expect([npm.requires, npm.packages["node_modules/kiwi-pad"].version, npm.tree]).toEqual([{ "kiwi-pad": "1.1.0" }, "1.1.0", undefined]);
  // So exec refuses what is not installed, rather than run kiwi-pad 1.0.0 under a lock that pins 1.1.0.
  const r = await kiwi.run(["exec", "pad"]);
  expect([r.exitCode, r.stdout]).toEqual([15, ""]);
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  expect((await kiwi.run(["exec", "pad"])).stdout).toBe("v1.1\n");
});

test("a package with an optional package per platform (esbuild's shape) installs the one for this platform", async () => {
  const root = makeProject({
    ".ai/tools/native/tool.yaml": "tool_id: native\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:kiwi-native@1.0.0]\n",
    ".ai/tools/native/main.js": "console.log(require('kiwi-native'));\n",
  });
  const kiwi = kiwiIn(root, withRegistry());
  const install = await kiwi.run(["install"]);
  expect([install.exitCode, install.stderr]).toEqual([0, expect.not.stringContaining("error")]);
  const npm = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.native.npm;
  // Every platform's package is locked; the tree holds what this platform installed.
  expect(Object.keys(npm.packages)).toEqual(["node_modules/kiwi-native", "node_modules/kiwi-native-elsewhere", "node_modules/kiwi-native-here"]);
  expect(npm.tree).toMatch(/^sha256:/);
  const r = await kiwi.run(["exec", "native"]);
  expect([r.exitCode, r.stdout]).toEqual([0, "native here\n"]);
  expect((await kiwi.run(["verify"])).exitCode).toBe(0);
  // A lock whose tree another platform recorded (here: another digest) says why this machine's differs.
  const lockPath = join(root, "tool.lock.json");
  writeFileSync(lockPath, readFileSync(lockPath, "utf8").replace(npm.tree, `sha256:${"0".repeat(64)}`));
  const other = await kiwi.run(["install"]);
  expect(other.exitCode).toBe(6);
  expect(other.stderr).toContain("they include optional packages for particular platforms (kiwi-native-elsewhere, kiwi-native-here), so the installed tree depends on the machine");
  expect(other.stderr).toContain("hint: tool.lock.json records one installed tree per tool, from the platform (os, cpu, libc) that first ran kiwi install");
});

test("a package with bundled dependencies is locked, installed from its own tarball and verified", async () => {
  const root = makeProject({
    ".ai/tools/bundle/tool.yaml": "tool_id: bundle\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:kiwi-bundler@1.0.0]\n",
    ".ai/tools/bundle/main.js": "console.log(require('kiwi-bundler'));\n",
  });
  const kiwi = kiwiIn(root, withRegistry());
  const install = await kiwi.run(["install"]);
  expect([install.exitCode, install.stderr]).toEqual([0, expect.not.stringContaining("error")]);
  expect(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.bundle.npm.packages["node_modules/kiwi-bundler/node_modules/kiwi-inner"]).toEqual({ version: "1.0.0", inBundle: true });
  const r = await kiwi.run(["exec", "bundle"]);
  expect([r.exitCode, r.stdout]).toEqual([0, "bundled\n"]);
  expect((await kiwi.run(["verify"])).exitCode).toBe(0);
  // A fresh cache: npm ci installs the bundle again and gives the locked tree.
  expect((await kiwi.run(["install", "--frozen-lockfile"], { KIWI_CACHE_DIR: makeTemp("kiwi-cache-") })).exitCode).toBe(0);
});

test("a package.json in a directory tool declares its npm packages", async () => {
  const root = makeProject({
    ".ai/tools/pj/tool.yaml": "tool_id: pj\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\n",
    ".ai/tools/pj/package.json": JSON.stringify({ name: "pj", private: true, dependencies: { "kiwi-pad": "~1.0.0" }, devDependencies: { "kiwi-big": "1.0.0" } }),
    ".ai/tools/pj/main.js": "console.log(require('kiwi-pad')(5, 2));\n",
  });
  const kiwi = kiwiIn(root, withRegistry());
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  expect(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.pj.npm.requires).toEqual({ "kiwi-pad": "~1.0.0" });
  expect((await kiwi.run(["exec", "pj"])).stdout).toBe("05\n");
});

test("an npm alias (package.json's \"pad\": \"npm:kiwi-pad@…\", requires' npm:digits@npm:kiwi-digits@…) installs the package under the alias, pinned like any", async () => {
  const root = makeProject({
    ".ai/tools/al/tool.yaml": "tool_id: al\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:digits@npm:kiwi-digits@2.0.0]\n",
    ".ai/tools/al/package.json": JSON.stringify({ name: "al", private: true, dependencies: { pad: "npm:kiwi-pad@~1.0.0" } }),
    ".ai/tools/al/main.js": "console.log(require('pad')(5, 2), require('digits').zeros(3));\n",
  });
  const kiwi = kiwiIn(root, withRegistry());
  const install = await kiwi.run(["install"]);
  expect([install.exitCode, install.stderr]).toEqual([0, expect.stringContaining("resolved al: 3 npm packages")]);
  const npm = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.al.npm;
  expect(npm.requires).toEqual({ digits: "npm:kiwi-digits@2.0.0", pad: "npm:kiwi-pad@~1.0.0" });
  expect(npm.packages["node_modules/pad"]).toMatchObject({ name: "kiwi-pad", version: "1.0.0", integrity: expect.stringMatching(/^sha512-/) });
  expect((await kiwi.run(["exec", "al"], { npm_config_registry: "http://127.0.0.1:9/" })).stdout).toBe("05 000\n");
  expect((await kiwi.run(["verify"])).exitCode).toBe(0);
  // An alias to a tag is no more pinned than the tag.
  writeFileSync(join(root, ".ai/tools/al/package.json"), JSON.stringify({ name: "al", private: true, dependencies: { pad: "npm:kiwi-pad@latest" } }));
  const tagged = await kiwi.run(["lock"]);
  expect(tagged.exitCode).toBe(1);
  expect(tagged.stderr).toContain('deps/requirement  .ai/tools/al/package.json: requirement "npm:pad@npm:kiwi-pad@latest": "npm:kiwi-pad@latest" is not a version range');
});

test("a package.json's overrides apply as npm install applies them, and a changed override is a changed requirement", async () => {
  registry.publish({ name: "kiwi-ov-dep", version: "1.0.0", json: { main: "index.js" }, files: { "index.js": "module.exports = 'dep 1.0.0';\n" } });
  registry.publish({ name: "kiwi-ov-dep", version: "1.1.0", json: { main: "index.js" }, files: { "index.js": "module.exports = 'dep 1.1.0';\n" } });
  registry.publish({ name: "kiwi-ov-top", version: "1.0.0", json: { main: "index.js", dependencies: { "kiwi-ov-dep": "^1.0.0" } }, files: { "index.js": "module.exports = require('kiwi-ov-dep');\n" } });
  const packageJson = (overrides: Record<string, unknown>) => JSON.stringify({ name: "ov", private: true, dependencies: { "kiwi-ov-top": "1.0.0" }, overrides });
  const root = makeProject({
    ".ai/tools/ov/tool.yaml": "tool_id: ov\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\n",
    // A security pin of a dependency's dependency, as projects write them.
    ".ai/tools/ov/package.json": packageJson({ "kiwi-ov-dep": "1.0.0" }),
    ".ai/tools/ov/main.js": "console.log(require('kiwi-ov-top'));\n",
  });
  const kiwi = kiwiIn(root, withRegistry());
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  const npm = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.ov.npm;
  expect([npm.overrides, npm.packages["node_modules/kiwi-ov-dep"].version]).toEqual([{ "kiwi-ov-dep": "1.0.0" }, "1.0.0"]);
  expect((await kiwi.run(["exec", "ov"])).stdout).toBe("dep 1.0.0\n");
  // A teammate's clone installs the same tree (npm ci is given the overrides with the lock).
  expect((await kiwi.run(["install", "--frozen-lockfile"], { KIWI_CACHE_DIR: makeTemp("kiwi-other-cache-") })).exitCode).toBe(0);
  writeFileSync(join(root, ".ai/tools/ov/package.json"), packageJson({ "kiwi-ov-top": { "kiwi-ov-dep": "1.1.0" } }));
  const frozen = await kiwi.run(["install", "--frozen-lockfile"]);
  expect(frozen.exitCode).toBe(3);
  expect(frozen.stderr).toContain('~ overrides {"kiwi-ov-dep":"1.0.0"} -> {"kiwi-ov-top":{"kiwi-ov-dep":"1.1.0"}}');
  // The package.json is a tool file: exec refuses the changed tool before any package is run.
  expect((await kiwi.run(["exec", "ov"])).stdout).toBe("");
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  expect((await kiwi.run(["exec", "ov"])).stdout).toBe("dep 1.1.0\n");
});

test("a tool where npm install was run (its own node_modules/) is a check error before anything is locked", async () => {
  const root = makeProject({
    ".ai/tools/pj/tool.yaml": "tool_id: pj\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\n",
    ".ai/tools/pj/package.json": JSON.stringify({ name: "pj", private: true, dependencies: { "kiwi-pad": "~1.0.0" } }),
    ".ai/tools/pj/main.js": "console.log(require('kiwi-pad')(5, 2));\n",
    ".ai/tools/pj/node_modules/kiwi-pad/package.json": JSON.stringify({ name: "kiwi-pad", version: "1.0.0" }),
    ".ai/tools/pj/node_modules/kiwi-pad/index.js": "module.exports = () => 'local';\n",
  });
  const kiwi = kiwiIn(root, withRegistry());
  const r = await kiwi.run(["install"]);
  expect(r.exitCode).toBe(1);
  expect(r.stderr).toContain(".ai/tools/pj/tool.yaml:1:1  error  deps/installed-folder  pj declares packages but has its own node_modules/ (2 files), where kiwi installs them");
  expect(r.stderr).toContain("hint: delete .ai/tools/pj/node_modules/ (an install run in the tool made it)");
  expect(existsSync(join(root, "tool.lock.json"))).toBe(false);
});

test("a package-lock.json beside the tool's package.json is honoured: kiwi resolves from the versions it pins", async () => {
  // The tool's author ran the real npm: package-lock.json pins kiwi-pad 1.0.0 under a ^1.0.0 range (1.1.0 exists).
  const author = makeTemp("kiwi-npm-author-");
  writeFileSync(join(author, "package.json"), JSON.stringify({ name: "pl", version: "1.0.0", private: true, dependencies: { "kiwi-pad": "1.0.0" } }));
  // Async: the registry answers from this process.
  const npm = (args: string[]) => Bun.spawn(["npm", ...args, "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: author, env: { ...process.env, ...withRegistry() }, stdout: "ignore", stderr: "ignore" }).exited;
  expect(await npm(["install"])).toBe(0);
  const pinned = readFileSync(join(author, "package-lock.json"), "utf8").replace('"kiwi-pad": "1.0.0"', '"kiwi-pad": "^1.0.0"');
  const root = makeProject({
    ".ai/tools/pl/tool.yaml": "tool_id: pl\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\n",
    ".ai/tools/pl/package.json": JSON.stringify({ name: "pl", version: "1.0.0", private: true, dependencies: { "kiwi-pad": "^1.0.0" } }),
    ".ai/tools/pl/package-lock.json": pinned,
    ".ai/tools/pl/main.js": "console.log(require('kiwi-pad')(7, 3));\n",
  });
  const kiwi = kiwiIn(root, withRegistry());
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  const lockOf = () => JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.pl.npm;
  expect(lockOf().packages["node_modules/kiwi-pad"].version).toBe("1.0.0");
  expect((await kiwi.run(["exec", "pl"])).stdout).toBe("007\n");
  // The author moves to 1.1.0 with npm: the next lock follows the tool's package-lock, not its old resolution.
  expect(await npm(["install", "kiwi-pad@1.1.0"])).toBe(0);
  writeFileSync(join(root, ".ai/tools/pl/package-lock.json"), readFileSync(join(author, "package-lock.json"), "utf8").replace('"kiwi-pad": "^1.1.0"', '"kiwi-pad": "^1.0.0"'));
  const relock = await kiwi.run(["install"]);
  expect(relock.exitCode).toBe(0);
  expect(lockOf().packages["node_modules/kiwi-pad"].version).toBe("1.1.0");
  expect((await kiwi.run(["exec", "pl"])).stdout).toBe("v1.1\n");
  // A package-lock that package.json's range no longer allows is resolved anew, with a warning.
  writeFileSync(join(root, ".ai/tools/pl/package.json"), JSON.stringify({ name: "pl", version: "1.0.0", private: true, dependencies: { "kiwi-pad": "~1.0.0" } }));
  const drifted = await kiwi.run(["lock"]);
  expect(drifted.exitCode).toBe(0);
  expect(drifted.stderr).toContain("warning: pl: package-lock.json pins kiwi-pad 1.1.0, which its requirements no longer allow");
  expect(lockOf().packages["node_modules/kiwi-pad"].version).toBe("1.0.0");
});

test("a package-lock.json with a git or file dependency is refused: it cannot be pinned by digest", async () => {
  const root = makeProject({
    ".ai/tools/gl/tool.yaml": "tool_id: gl\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\n",
    ".ai/tools/gl/package.json": JSON.stringify({ name: "gl", private: true, dependencies: { x: "^1.0.0" } }),
    ".ai/tools/gl/package-lock.json": JSON.stringify({ name: "gl", lockfileVersion: 3, requires: true, packages: { "": { name: "gl", dependencies: { x: "^1.0.0" } }, "node_modules/x": { version: "1.0.0", resolved: "git+ssh://git@example.com/x.git#abc" } } }),
    ".ai/tools/gl/main.js": "console.log(1);\n",
  });
  const r = await kiwiIn(root, withRegistry()).run(["lock"]);
  expect(r.exitCode).toBe(15);
  expect(r.stderr).toContain("error[E_DEPS]: gl (.ai/tools/gl/package-lock.json): x does not come from a registry tarball with an integrity (git+ssh://git@example.com/x.git#abc)");
  expect(existsSync(join(root, "tool.lock.json"))).toBe(false);
});

test("two links of one chain that bring one package at two versions are refused, naming both", async () => {
  const root = makeProject({
    ".ai/tools/pad_runtime.yaml": "tool_id: pad_runtime\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: node }\nrequires: [npm:kiwi-pad@1.0.0]\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { type: object }\n",
    ".ai/tools/pad2/tool.yaml": "tool_id: pad2\ntool_type: script\nversion: 1.0.0\nexecutor: pad_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:kiwi-pad@1.1.0]\n",
    ".ai/tools/pad2/main.js": "console.log(require('kiwi-pad')());\n",
  });
  const kiwi = kiwiIn(root, withRegistry());
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  const r = await kiwi.run(["exec", "pad2"]);
  expect(r.exitCode).toBe(15);
  expect(r.stderr).toContain("error[E_DEPS]: the chain of pad2 brings kiwi-pad twice: 1.1.0 for pad2 and 1.0.0 for pad_runtime");
});

describe("what npm gets wrong is a coded error naming the tool and package", () => {
  test("a version that does not exist", async () => {
    const root = makeProject(padTool(["npm:kiwi-pad@^9.0.0"]));
    const r = await kiwiIn(root, withRegistry()).run(["lock"]);
    expect(r.exitCode).toBe(15);
    expect(r.stderr).toContain("error[E_DEPS]: pad: cannot get kiwi-pad@^9.0.0: no version of kiwi-pad@^9.0.0 matches");
    expect(existsSync(join(root, "tool.lock.json"))).toBe(false);
  });

  test("a registry that is down", async () => {
    const root = makeProject(padTool(["npm:kiwi-pad@^1.0.0"]));
    const r = await kiwiIn(root, withRegistry({ npm_config_registry: "http://127.0.0.1:9/", npm_config_fetch_retries: "0" })).run(["lock"]);
    expect(r.exitCode).toBe(15);
    expect(r.stderr).toContain("cannot get kiwi-pad@^1.0.0: the registry cannot be reached");
  });

  test("a registry that serves other bytes than it locked (sha512 mismatch) installs nothing", async () => {
    registry.publish({ name: "kiwi-liar", version: "1.0.0", json: { main: "index.js" }, files: { "index.js": "module.exports = 'honest';\n" } });
    const root = makeProject({
      ".ai/tools/liar/tool.yaml": "tool_id: liar\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:kiwi-liar@1.0.0]\n",
      ".ai/tools/liar/main.js": "console.log(require('kiwi-liar'));\n",
    });
    const kiwi = kiwiIn(root, withRegistry());
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    registry.lie("kiwi-liar", "1.0.0", { "index.js": "module.exports = 'evil';\n" });
    const r = await kiwi.run(["install"]);
    expect(r.exitCode).toBe(6);
    expect(r.stderr).toContain("error[E_INTEGRITY_MISMATCH]: liar: cannot get kiwi-liar@1.0.0: a tarball does not match the integrity in the lock");
    const run = await kiwi.run(["exec", "liar"]);
    expect(run.exitCode).toBe(15);
    expect(run.stdout).not.toContain("evil");
  });

  test("an install script is not run, and lock says so", async () => {
    const root = makeProject({
      ".ai/tools/scripted/tool.yaml": "tool_id: scripted\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:kiwi-scripted@1.0.0]\n",
      ".ai/tools/scripted/main.js": "console.log(require('kiwi-scripted'));\n",
    });
    const kiwi = kiwiIn(root, withRegistry());
    const lock = await kiwi.run(["lock"]);
    expect(lock.exitCode).toBe(0);
    expect(lock.stderr).toContain("warning: scripted: kiwi-scripted has an install script, which kiwi does not run");
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    expect(existsSync(join(kiwi.env.HOME!, "postinstall-ran"))).toBe(false);
    expect((await kiwi.run(["exec", "scripted"])).stdout).toBe("1\n");
  });

  test("without the sandbox, --dry-run says node may resolve an undeclared package from a node_modules folder above the run directory", async () => {
    const root = makeProject(padTool(["npm:kiwi-pad@1.0.0"]));
    const kiwi = kiwiIn(root, withRegistry());
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const off = await kiwi.run(["exec", "pad", "--dry-run", "--sandbox=off", "--json"]);
    expect(off.exitCode).toBe(0);
    expect(JSON.parse(off.stdout).sandbox.enforcement).toContainEqual({ area: "packages", enforced: false, detail: `only the locked npm packages are installed, but node also resolves a package the tool does not declare from node_modules/ in any folder above its run directory, up to / (${kiwi.env.HOME}/node_modules among them)` });
    if (probeSandbox(process.env).usable) expect(JSON.parse((await kiwi.run(["exec", "pad", "--dry-run", "--sandbox=require", "--json"])).stdout).sandbox.enforcement.map((e: { area: string }) => e.area)).not.toContain("packages");
  });

  test("a package's bin runs from node_modules/.bin, as after npm install, in the sandbox too; a link changed in the run directory is replaced", async () => {
    const root = makeProject({
      ".ai/tools/hello/tool.yaml": "tool_id: hello\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:kiwi-cli@1.0.0]\n",
      ".ai/tools/hello/main.js": "process.stdout.write(require('child_process').execFileSync('node_modules/.bin/kiwi-hello', { encoding: 'utf8' }));\n",
    });
    const kiwi = kiwiIn(root, withRegistry());
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const r = await kiwi.run(["exec", "hello", "--sandbox=off"]);
    expect([r.exitCode, r.stdout]).toEqual([0, "hello from a bin\n"]);
    if (probeSandbox(process.env).usable) {
      const boxed = await kiwi.run(["exec", "hello", "--sandbox=require"]);
      expect([boxed.exitCode, boxed.stdout]).toEqual([0, "hello from a bin\n"]);
    }
    // The run directory is kiwi's: a link pointed elsewhere is not reused.
    const runs = join(kiwi.cache, "runs");
    const dir = readdirSync(runs).find((n) => existsSync(join(runs, n, "files", "node_modules", ".bin", "kiwi-hello")))!;
    const bin = join(runs, dir, "files", "node_modules", ".bin");
    chmodSync(join(runs, dir), 0o755);
    chmodSync(bin, 0o755);
    rmSync(join(bin, "kiwi-hello"));
    symlinkSync("/bin/false", join(bin, "kiwi-hello"));
    chmodSync(bin, 0o555);
    chmodSync(join(runs, dir), 0o555);
    const again = await kiwi.run(["exec", "hello", "--sandbox=off"]);
    expect([again.exitCode, again.stdout]).toEqual([0, "hello from a bin\n"]);
  });

  test("a deprecated package is a warning at lock, as npm warns at install, on one line without the registry's control characters", async () => {
    const root = makeProject({
      ".ai/tools/old/tool.yaml": "tool_id: old\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:kiwi-old@1.0.0]\n",
      ".ai/tools/old/main.js": "console.log(require('kiwi-old'));\n",
    });
    const kiwi = kiwiIn(root, withRegistry());
    const lock = await kiwi.run(["lock"]);
    expect(lock.exitCode).toBe(0);
    expect(lock.stderr).toContain("warning: old: deprecated kiwi-old@1.0.0: use kiwi-pad instead [31m\n");
    expect(lock.stderr).not.toContain("\u001b");
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    expect((await kiwi.run(["exec", "old"])).stdout).toBe("old\n");
  });

  test("allow_scripts runs the named package's install script at kiwi install, and only that one", async () => {
    const tool = (allow: string) => `tool_id: built\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:kiwi-built@1.0.0, npm:kiwi-scripted@1.0.0]\n${allow}`;
    const root = makeProject({ ".ai/tools/built/tool.yaml": tool("allow_scripts: [kiwi-built]\n"), ".ai/tools/built/main.js": "console.log(require('kiwi-built'));\n" });
    const kiwi = kiwiIn(root, withRegistry());
    const lock = await kiwi.run(["lock"]);
    expect(lock.exitCode).toBe(0);
    expect(lock.stderr).toContain("warning: built: kiwi-scripted has an install script, which kiwi does not run (allow_scripts: [kiwi-scripted] would run it at kiwi install)");
    expect(lock.stderr).not.toContain("kiwi-built has");
    expect(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.built.npm.allow_scripts).toEqual(["kiwi-built"]);
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    expect(existsSync(join(kiwi.env.HOME!, "postinstall-ran"))).toBe(false);
    const r = await kiwi.run(["exec", "built"], { npm_config_registry: "http://127.0.0.1:9/" });
    expect([r.exitCode, r.stdout]).toEqual([0, "built at install\n"]);
    expect((await kiwi.run(["verify"])).exitCode).toBe(0);
    // Who may run code at install is pinned like a requirement.
    writeFileSync(join(root, ".ai/tools/built/tool.yaml"), tool(""));
    const frozen = await kiwi.run(["install", "--frozen-lockfile"]);
    expect(frozen.exitCode).toBe(3);
    expect(frozen.stderr).toContain("~ requires (npm): - allow_scripts kiwi-built");
  });

  test("two tools with the same packages, one allowing the install script and one not, get their own trees", async () => {
    // "a" sorts first: the install must not give "b" the unbuilt tree "a" asked for, nor "a" b's build.
    const tool = (id: string, allow: string) => ({
      [`.ai/tools/${id}/tool.yaml`]: `tool_id: ${id}\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:kiwi-built@1.0.0]\n${allow}`,
      [`.ai/tools/${id}/main.js`]: "try { console.log(require('kiwi-built')); } catch { console.log('not built'); }\n",
    });
    const root = makeProject({ ...tool("a", ""), ...tool("b", "allow_scripts: [kiwi-built]\n") });
    const kiwi = kiwiIn(root, withRegistry());
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const deps = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies;
    expect(deps.a.npm.tree).not.toBe(deps.b.npm.tree);
    const a = await kiwi.run(["exec", "a"]);
    const b = await kiwi.run(["exec", "b"]);
    expect([a.exitCode, a.stdout, b.exitCode, b.stdout]).toEqual([0, "not built\n", 0, "built at install\n"]);
    expect((await kiwi.run(["install", "--frozen-lockfile"])).exitCode).toBe(0);
  });

  test("an allowed install script that fails is E_DEPS naming it; an allowance with no script is a warning", async () => {
    const root = makeProject({
      ".ai/tools/failing/tool.yaml": "tool_id: failing\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:kiwi-failing@1.0.0, npm:kiwi-digits@2.0.0]\nallow_scripts: [kiwi-failing, kiwi-digits]\n",
      ".ai/tools/failing/main.js": "console.log(require('kiwi-failing'));\n",
    });
    const kiwi = kiwiIn(root, withRegistry());
    const lock = await kiwi.run(["lock"]);
    expect(lock.stderr).toContain("warning: failing: allow_scripts names kiwi-digits, which has no install script in the resolved packages");
    const r = await kiwi.run(["install"]);
    expect(r.exitCode).toBe(15);
    expect(r.stderr).toContain("error[E_DEPS]: failing: the install script of kiwi-failing failed");
    expect(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.failing.npm.tree).toBeUndefined();
    expect((await kiwi.run(["exec", "failing"])).exitCode).toBe(15);
  });

  test("an allow_scripts entry that is not a package name is a check error at the field", async () => {
    const root = makeProject({ ".ai/tools/bad/tool.yaml": "tool_id: bad\ntool_type: script\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: true }\nallow_scripts: [\"Not A Name\", esbuild]\n" });
    const r = await kiwiIn(root).run(["check"]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("deps/requirement");
    expect(r.stdout + r.stderr).toContain("allow_scripts entry \"Not A Name\" names no ecosystem");
  });

  test("a package tree past the size cap is refused and nothing is recorded", async () => {
    const root = makeProject({
      ".ai/tools/big/tool.yaml": "tool_id: big\ntool_type: script\nversion: 1.0.0\nexecutor: node_runtime\nconfig: { entrypoint: main.js }\nrequires: [npm:kiwi-big@1.0.0]\n",
      ".ai/tools/big/main.js": "console.log(require('kiwi-big'));\n",
    });
    const kiwi = kiwiIn(root, withRegistry({ KIWI_MAX_PACKAGE_BYTES: "100000" }));
    const r = await kiwi.run(["install"]);
    expect(r.exitCode).toBe(15);
    expect(r.stderr).toContain("big: its packages install more than 100000 bytes");
    expect(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.big.npm.tree).toBeUndefined();
  });

  test.each([
    ["npm:kiwi-pad@latest", "deps/requirement", 'is not a version range'],
    ["npm:kiwi-pad@next", "deps/requirement", "is not a version range"],
    ["npm:Kiwi Pad@1", "deps/requirement", "is not an npm package name"],
    ["npm:git+https://example.com/x.git", "deps/requirement", "is not an npm package name"],
  ])("the requirement %s is a check error naming the field", async (requirement, rule, message) => {
    const root = makeProject(padTool([JSON.stringify(requirement)]));
    const r = await kiwiIn(root, withRegistry()).run(["check", "--json"]);
    expect(r.exitCode).not.toBe(0);
    const finding = (JSON.parse(r.stdout).findings as { rule: string; message: string; pointer: string }[]).find((f) => f.rule === rule);
    expect(finding?.message).toContain(message);
    expect(finding?.pointer).toBe("/requires/0");
  });

  test("conflicting ranges for one package are a check error", async () => {
    const root = makeProject(padTool(["npm:kiwi-pad@^1.0.0", "npm:kiwi-pad@1.1.0"]));
    const r = await kiwiIn(root, withRegistry()).run(["check", "--json"]);
    expect((JSON.parse(r.stdout).findings as { rule: string; message: string }[]).find((f) => f.rule === "deps/conflict")?.message).toBe("conflicting requirements: kiwi-pad is required as ^1.0.0 and as 1.1.0");
  });
});

/** npm's own cache for the npmjs.org case, shared between runs: the suite need not download twice. */
const NPM_CACHE = join(homedir(), ".cache", "kiwi-test", "npm");

describe("an MCP server run from its installed package (config.package)", () => {
  test("kiwi lock does not start it before kiwi install has installed its package; kiwi install pins it", async () => {
    const root = makeProject({
      ".ai/tools/echo_server.yaml": "tool_id: echo_server\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  package: npm:kiwi-mcp-echo@1.0.0\n",
    });
    const kiwi = kiwiIn(root, withRegistry({ KIWI_SANDBOX: "off" }));
    const lock = await kiwi.run(["lock"]);
    expect(lock.exitCode).toBe(0);
    expect(lock.stderr).not.toContain("starting MCP server");
    expect(lock.stderr).toContain('note: MCP server "echo_server" was not pinned (its packages are locked but not installed; "kiwi install" installs them, then pins the server)');
    const install = await kiwi.run(["install"]);
    expect(install.exitCode).toBe(0);
    expect(install.stderr).toContain('pinned MCP server "echo_server" (kiwi-mcp-echo)');
    expect(Object.keys(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).mcp_servers)).toEqual(["echo_server"]);
    expect((await kiwi.run(["mcp", "verify"])).exitCode).toBe(0);
    // A CI runner whose cache lacks the package: mcp verify fails with what stopped the server, and says what to run.
    const cold = await kiwi.run(["mcp", "verify", "--json"], { KIWI_CACHE_DIR: makeTemp("kiwi-cache-") });
    expect(cold.exitCode).toBe(4);
    expect(JSON.parse(cold.stdout).error).toMatchObject({ code: "E_CACHE_MISSING", message: "kiwi mcp verify failed for echo_server", hint: 'run "kiwi install" to install them again', exitCode: 4 });
  });

  test.skipIf(!probeSandbox(process.env).usable)("one that fails to start in the sandbox gets a hint about what it reaches for, not about npx fetching its package", async () => {
    const root = makeProject({
      ".ai/tools/homecache.yaml": "tool_id: homecache\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  package: npm:kiwi-mcp-homecache@1.0.0\n  timeout: 10\n",
    });
    const kiwi = kiwiIn(root, withRegistry({ KIWI_SANDBOX: "off" }));
    writeFileSync(join(kiwi.env.HOME!, ".homecache.json"), "{}");
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const r = await kiwi.run(["mcp", "pin", "homecache"], { KIWI_SANDBOX: "require" });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain("it ran in kiwi's sandbox (no network and only the paths it declares): it runs from its installed package (npm:kiwi-mcp-homecache@1.0.0) and fetches nothing at start");
    expect(r.stderr).toContain("declare fs.read or fs.write for what it reads or writes");
    expect(r.stderr).not.toContain("npx");
  });

  test.skipIf(!probeSandbox(process.env).usable)("server-everything from npmjs.org: installed, pinned, and called in the sandbox with no network declared", async () => {
    const root = makeProject({
      ".ai/tools/everything.yaml":
        "tool_id: everything\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  package: npm:@modelcontextprotocol/server-everything@2026.8.31\n  args: [stdio]\nvalidation:\n  child_schemas:\n    - match: { tool_type: mcp_tool }\n      schema: { type: object }\n",
      ".ai/tools/echo.yaml": "tool_id: echo\ntool_type: mcp_tool\nversion: 1.0.0\nexecutor: everything\nconfig: { tool_name: echo }\nparameters:\n  - { name: message, type: string, required: true }\n",
    });
    const kiwi = kiwiIn(root, { npm_config_cache: NPM_CACHE });
    const install = await kiwi.run(["install"], {}, undefined);
    expect(install.exitCode).toBe(0);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    expect(lock.dependencies.everything.npm.packages["node_modules/@modelcontextprotocol/server-everything"].version).toBe("2026.8.31");
    expect(Object.keys(lock.mcp_servers)).toEqual(["everything"]);
    const r = await kiwi.run(["exec", "echo", "--param", "message=hello", "--sandbox=require"]);
    expect([r.exitCode, r.stdout]).toEqual([0, "Echo: hello\n"]);
  }, 180_000);
});
