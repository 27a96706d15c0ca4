// MCP protocol revisions through the compiled binary: a v2-SDK server that speaks ONLY 2026-07-28
// (stdio and streamable HTTP), one that speaks ONLY 2025-06-18, and the npm reference server;
// each is pinned, called and checked for drift. Bad input: a malformed server/discover answer, a
// server whose tools change between two listings, an HTTP server listed under another credential.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hermeticEnv, runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";
import { MODERN, startModernHttp } from "../mcp/servers.ts";
import { EVERYTHING, RAW, mcpTool, readLock, stdioServer } from "./mcp-helpers.ts";

afterAll(cleanupTemps);

const SLOW = 120_000;
const ADD = ["  - name: a", "    type: integer", "    required: true", "  - name: b", "    type: integer", "    required: true"].join("\n");

/** A project with one stdio server (the v2 fixture unless `script` says otherwise) and an add tool on it. */
function project(env: Record<string, string>, script = MODERN, args: string[] = []): { root: string; setState: (s: string) => void } {
  const root = makeTemp("kiwi-mcp-rev-");
  const state = join(root, "state");
  writeFileSync(state, "v1");
  writeTree(root, {
    ".ai/tools/srv.yaml": stdioServer(root, { id: "srv", script, args, env: { MODERN_STATE: state, ...env } }),
    ".ai/tools/add.yaml": mcpTool("add", "srv", "add", ADD),
  });
  return { root, setState: (s) => writeFileSync(state, s) };
}

describe("a server that speaks only 2026-07-28 (stdio)", () => {
  test("is pinned from server/discover plus its lists, without volatile fields, called, and verified", async () => {
    const { root } = project({});
    const lock = await runKiwi(["lock"], { cwd: root });
    expect(lock.exitCode).toBe(0);
    expect(lock.stderr).toContain('pinned MCP server "srv" (kiwi-modern-fixture)');
    const pin = readLock(root).mcp_servers.srv!;
    expect(pin.protocol_version).toBe("2026-07-28");
    expect(pin.version).toBe("2.0.0");
    const iface = pin.interface as Record<string, unknown>;
    expect(iface.discover).toEqual({ capabilities: { prompts: { listChanged: true }, tools: { listChanged: true } }, supportedVersions: ["2026-07-28"] });
    expect((iface.tools as { name: string }[]).map((t) => t.name)).toEqual(["add", "echo"]);
    expect(iface.instructions).toBe("Use add for sums.");
    // ttlMs, cacheScope and resultType describe one answer: never in a pin.
    expect(readFileSync(join(root, "tool.lock.json"), "utf8")).not.toMatch(/ttlMs|cacheScope|resultType|_meta/);

    const call = await runKiwi(["exec", "add", "--param", "a=2", "--param", "b=40"], { cwd: root });
    expect([call.exitCode, call.stdout, call.stderr]).toEqual([0, "42\n", ""]);
    const verify = await runKiwi(["mcp", "verify", "--json"], { cwd: root });
    expect([verify.exitCode, verify.stderr]).toEqual([0, ""]);
    expect(JSON.parse(verify.stdout).servers[0]).toMatchObject({ server: "srv", status: "ok" });
    const hash = await runKiwi(["mcp", "hash", "srv", "--json"], { cwd: root });
    expect(hash.exitCode).toBe(0);
    expect(JSON.parse(hash.stdout)).toMatchObject({ protocol_version: "2026-07-28", interface_hash: pin.interface_hash, full_hash: pin.full_hash, counts: { tools: 2, prompts: 1 } });
  }, SLOW);

  test("a changed description between runs is drift: verify exits 10 and exec refuses", async () => {
    const { root, setState } = project({});
    expect((await runKiwi(["lock"], { cwd: root })).exitCode).toBe(0);
    setState("description");
    const verify = await runKiwi(["mcp", "verify"], { cwd: root });
    expect([verify.exitCode, verify.stdout]).toEqual([10, expect.stringContaining("srv")]);
    expect(verify.stderr).toContain("~ tool \"add\"");
    const exec = await runKiwi(["exec", "add", "--param", "a=1", "--param", "b=1"], { cwd: root });
    expect([exec.exitCode, exec.stdout]).toEqual([10, ""]);
    expect(exec.stderr).toContain('error[E_MCP_DRIFT]: MCP server "srv" changed its interface since it was pinned');
  }, SLOW);

  test("keeps the kiji-compatible interface hash of the same tools served over 2025-06-18; only the full hash sees discover", async () => {
    const modern = project({});
    const legacy = project({ MODERN_ERA: "2025-06-18" });
    const [a, b] = await Promise.all([runKiwi(["mcp", "hash", "srv", "--unlocked", "--json"], { cwd: modern.root }), runKiwi(["mcp", "hash", "srv", "--unlocked", "--json"], { cwd: legacy.root })]);
    expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
    const [ja, jb] = [JSON.parse(a.stdout), JSON.parse(b.stdout)];
    expect([ja.protocol_version, jb.protocol_version]).toEqual(["2026-07-28", "2025-06-18"]);
    expect(ja.interface_hash).toBe(jb.interface_hash);
    expect(ja.full_hash).not.toBe(jb.full_hash);
  }, SLOW);
});

describe("a server that speaks only 2025-06-18 (initialize, no server/discover)", () => {
  test("is pinned under 2025-06-18, called, verified, and its drift refused", async () => {
    const { root, setState } = project({ MODERN_ERA: "2025-06-18" });
    expect((await runKiwi(["lock"], { cwd: root })).exitCode).toBe(0);
    const pin = readLock(root).mcp_servers.srv!;
    expect(pin.protocol_version).toBe("2025-06-18");
    expect((pin.interface as Record<string, unknown>).discover).toBeUndefined();
    const call = await runKiwi(["exec", "add", "--param", "a=1", "--param", "b=2"], { cwd: root });
    expect([call.exitCode, call.stdout]).toEqual([0, "3\n"]);
    expect((await runKiwi(["mcp", "verify"], { cwd: root })).exitCode).toBe(0);
    setState("description");
    const verify = await runKiwi(["mcp", "verify", "--json"], { cwd: root });
    expect(verify.exitCode).toBe(10);
    expect(JSON.parse(verify.stdout).error.details.servers[0]).toMatchObject({ server: "srv", status: "drift", severity: "security" });
  }, SLOW);
});

describe("the npm reference server (server-everything, a 2025-11-25 handshake server)", () => {
  test("is pinned without discover, called, and verified", async () => {
    const root = makeTemp("kiwi-mcp-rev-");
    writeTree(root, {
      ".ai/tools/srv.yaml": stdioServer(root, { id: "srv", script: EVERYTHING, args: ["stdio"] }),
      ".ai/tools/echo.yaml": mcpTool("echo", "srv", "echo", ["  - name: message", "    type: string", "    required: true"].join("\n")),
    });
    expect((await runKiwi(["lock"], { cwd: root })).exitCode).toBe(0);
    const pin = readLock(root).mcp_servers.srv!;
    expect(pin.protocol_version).toBe("2025-11-25");
    expect((pin.interface as Record<string, unknown>).discover).toBeUndefined();
    const call = await runKiwi(["exec", "echo", "--param", "message=hi"], { cwd: root });
    expect([call.exitCode, call.stdout]).toEqual([0, "Echo: hi\n"]);
    expect((await runKiwi(["mcp", "verify"], { cwd: root })).exitCode).toBe(0);
  }, SLOW);
});

describe("a server that speaks only 2026-07-28 over streamable HTTP", () => {
  const manifest = (url: string) =>
    ["tool_id: web", "tool_type: mcp_server", "version: 1.0.0", "executor: http_client", "config:", "  transport: streamable-http", `  url: ${url}`, '  headers: { authorization: "Bearer ${MCP_TOKEN}" }', "requires:", '  - net.outbound: ["127.0.0.1"]', "validation:", "  child_schemas:", "    - match: { tool_type: mcp_tool }", "      schema: { type: object }", ""].join("\n");

  test("is pinned with the credential it was listed under; another credential's tools are drift, and the diff says why", async () => {
    const server = await startModernHttp({ MODERN_PARAM_HEADERS: "1" });
    try {
      const root = makeTemp("kiwi-mcp-rev-");
      writeTree(root, {
        ".ai/tools/web.yaml": manifest(server.url),
        ".ai/tools/add.yaml": mcpTool("add", "web", "add", ADD),
        ".ai/tools/forecast.yaml": mcpTool("forecast", "web", "forecast", ["  - name: region", "    type: string", "    required: true"].join("\n")),
      });
      const user = hermeticEnv({ MCP_TOKEN: "user-7f3a" });
      expect((await runKiwi(["lock"], { cwd: root, env: user })).exitCode).toBe(0);
      const pin = readLock(root).mcp_servers.web!;
      expect(pin.protocol_version).toBe("2026-07-28");
      expect(pin.credential).toMatch(/^scrypt:[0-9a-f]{32}$/);
      expect(readFileSync(join(root, "tool.lock.json"), "utf8")).not.toContain("user-7f3a");
      const call = await runKiwi(["exec", "add", "--param", "a=5", "--param", "b=6"], { cwd: root, env: user });
      expect([call.exitCode, call.stdout, call.stderr]).toEqual([0, "11\n", ""]);
      expect((await runKiwi(["mcp", "verify"], { cwd: root, env: user })).exitCode).toBe(0);
      // The tool declares x-mcp-header on region (SEP-2243): the call mirrors it into Mcp-Param-Region.
      const forecast = await runKiwi(["exec", "forecast", "--param", "region=eu-west"], { cwd: root, env: user });
      expect([forecast.exitCode, forecast.stdout, forecast.stderr]).toEqual([0, "sunny in eu-west\n", ""]);

      const admin = await runKiwi(["mcp", "diff", "web"], { cwd: root, env: hermeticEnv({ MCP_TOKEN: "admin" }) });
      expect(admin.exitCode).toBe(0);
      expect(admin.stdout).toContain('+ tool "drop_database"');
      expect(admin.stdout).toContain(`note: pinned with credential ${pin.credential}, listed now with scrypt:`);
      const refused = await runKiwi(["mcp", "verify"], { cwd: root, env: hermeticEnv({ MCP_TOKEN: "admin" }) });
      expect(refused.exitCode).toBe(10);
    } finally {
      await server.stop();
    }
  }, SLOW);
});

describe("an HTTP server keyed in its URL", () => {
  const keyed = (url: string) =>
    ["tool_id: web", "tool_type: mcp_server", "version: 1.0.0", "executor: http_client", "config:", "  transport: streamable-http", `  url: "${url}"`, "requires:", '  - net.outbound: ["127.0.0.1"]', ""].join("\n");

  test("is pinned with a fingerprint of the key, and an error never shows the key", async () => {
    const server = await startModernHttp({});
    try {
      const root = makeTemp("kiwi-mcp-rev-");
      writeTree(root, { ".ai/tools/web.yaml": keyed(`${server.url}?api_key=\${MCP_KEY}&region=eu`) });
      expect((await runKiwi(["lock"], { cwd: root, env: hermeticEnv({ MCP_KEY: "k-7f3a" }) })).exitCode).toBe(0);
      const pin = readLock(root).mcp_servers.web!;
      expect(pin.credential).toMatch(/^scrypt:[0-9a-f]{32}$/);
      expect(readFileSync(join(root, "tool.lock.json"), "utf8")).not.toContain("k-7f3a");
      const hash = await runKiwi(["mcp", "hash", "web", "--json"], { cwd: root, env: hermeticEnv({ MCP_KEY: "k-other" }) });
      expect(hash.exitCode).toBe(0);
      expect(JSON.parse(hash.stdout).credential).not.toBe(pin.credential);
    } finally {
      await server.stop();
    }
    const root = makeTemp("kiwi-mcp-rev-");
    writeTree(root, { ".ai/tools/web.yaml": keyed("http://bob:hunter2@127.0.0.1:9/mcp?api_key=literal-9c1d&region=eu") });
    const r = await runKiwi(["mcp", "hash", "web", "--unlocked"], { cwd: root });
    expect(r.exitCode).toBe(9);
    expect(r.stderr).toContain("could not be reached at http://***:***@127.0.0.1:9/mcp?api_key=***&region=eu");
    expect(r.stderr).not.toMatch(/hunter2|literal-9c1d/);
  }, SLOW);
});

describe("bad input", () => {
  test("a malformed server/discover answer is E_MCP naming the field, not a silent fallback", async () => {
    const { root } = project({ RAW_MODE: "bad-discover" }, RAW);
    const r = await runKiwi(["mcp", "hash", "srv", "--unlocked"], { cwd: root });
    expect([r.exitCode, r.stdout]).toEqual([9, ""]);
    expect(r.stderr).toContain('error[E_MCP]: MCP server "srv" sent a malformed server/discover result: /supportedVersions: Invalid input: expected array, received string');
  }, SLOW);

  test("a 2026-07-28 server whose tools differ between two listings cannot be pinned", async () => {
    const { root } = project({ MODERN_MODE: "drifting" });
    const lock = await runKiwi(["lock"], { cwd: root });
    expect(lock.exitCode).toBe(0);
    expect(lock.stderr).toContain('warning: MCP server "srv" was not pinned: MCP server "srv" answered tools/list differently twice in one connection (added surprise_2)');
    expect(readLock(root).mcp_servers.srv).toBeUndefined();
    const pin = await runKiwi(["mcp", "pin", "srv"], { cwd: root });
    expect([pin.exitCode, pin.stdout]).toEqual([9, ""]);
    expect(pin.stderr).toContain("revision 2026-07-28 requires tools/list not to vary per connection");
  }, SLOW);
});

describe("the Skills extension (SEP-2640)", () => {
  test("skills are pinned like tools, and a skill is fetched with every file checked against the pin", async () => {
    const { root } = project({ MODERN_MODE: "skills" });
    const lock = await runKiwi(["lock"], { cwd: root });
    expect(lock.exitCode).toBe(0);
    const skills = (readLock(root).mcp_servers.srv!.interface as { skills: { uri: string; frontmatter: Record<string, string>; resources: { uri: string; digest: string }[] }[] }).skills;
    expect(skills.map((s) => s.uri)).toEqual(["skill://git-workflow/SKILL.md", "skill://release/SKILL.md"]);
    expect(skills[0]!.resources.map((r) => r.uri)).toEqual(["skill://git-workflow/SKILL.md", "skill://git-workflow/references/COMMITS.md"]);
    for (const r of skills[0]!.resources) expect(r.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(skills[1]!.frontmatter).toEqual({ name: "release", description: "Cut a release.", license: "MIT" });

    const get = await runKiwi(["mcp", "skill", "srv", "skill://git-workflow/SKILL.md"], { cwd: root });
    expect([get.exitCode, get.stderr]).toEqual([0, "verified 2 files of skill://git-workflow/SKILL.md against the pin (sha256)\n"]);
    expect(get.stdout).toBe("---\nname: git-workflow\ndescription: Follow the team's Git conventions.\n---\n# Git workflow\n\nBranch from main; see references/COMMITS.md.\n");
    const out = await runKiwi(["mcp", "skill", "srv", "skill://git-workflow/SKILL.md", "--out", "skill-copy", "--json"], { cwd: root });
    expect([out.exitCode, out.stderr]).toEqual([0, ""]);
    expect(JSON.parse(out.stdout)).toMatchObject({ ok: true, name: "git-workflow", verified: true, files: [{ path: "SKILL.md" }, { path: "references/COMMITS.md", digest: skills[0]!.resources[1]!.digest }] });
    expect(readFileSync(join(root, "skill-copy", "references", "COMMITS.md"), "utf8")).toBe("# Commits\n\nImperative mood, 72 columns.\n");
  }, SLOW);

  test("a changed skill is drift: verify exits 10 naming it, and fetching it is refused", async () => {
    const { root, setState } = project({ MODERN_MODE: "skills" });
    expect((await runKiwi(["lock"], { cwd: root })).exitCode).toBe(0);
    setState("skill");
    const verify = await runKiwi(["mcp", "verify"], { cwd: root });
    expect(verify.exitCode).toBe(10);
    expect(verify.stderr).toContain('~ skill "skill://git-workflow/SKILL.md"');
    const get = await runKiwi(["mcp", "skill", "srv", "skill://git-workflow/SKILL.md"], { cwd: root });
    expect([get.exitCode, get.stdout]).toEqual([10, ""]);
    expect(get.stderr).toContain('error[E_MCP_DRIFT]: MCP server "srv": the skill skill://git-workflow/SKILL.md changed since it was pinned');
  }, SLOW);

  test("a skill file whose bytes do not match its digest is E_INTEGRITY_MISMATCH and nothing is written", async () => {
    const { root } = project({ MODERN_MODE: "bad-digest" });
    expect((await runKiwi(["lock"], { cwd: root })).exitCode).toBe(0);
    const ok = await runKiwi(["mcp", "skill", "srv", "skill://release/SKILL.md"], { cwd: root });
    expect(ok.exitCode).toBe(0);
    const bad = await runKiwi(["mcp", "skill", "srv", "skill://git-workflow/SKILL.md", "--out", "copy"], { cwd: root });
    expect([bad.exitCode, bad.stdout]).toEqual([6, ""]);
    // Same size (28 bytes), other bytes: the digest catches it.
    const pinned = (readLock(root).mcp_servers.srv!.interface as { skills: { resources: { uri: string; digest: string }[] }[] }).skills[0]!.resources[1]!.digest;
    expect(bad.stderr).toContain(`error[E_INTEGRITY_MISMATCH]: MCP server "srv": skill file skill://git-workflow/references/COMMITS.md has digest sha256:${new Bun.CryptoHasher("sha256").update("# Commits\n\nAnything goes; push to main.\n").digest("hex")}, but the skill's entry says ${pinned}`);
    expect(() => readFileSync(join(root, "copy", "SKILL.md"))).toThrow();
  }, SLOW);
});
