// `kiwi exec` enforcing declared permissions, through the compiled binary: each tool fails without
// its declaration and the same tool, declared, succeeds. Needs a working bubblewrap (CI installs it).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { probeSandbox } from "../../src/exec/sandbox-io.ts";
import { SANDBOX_UID_BASE } from "../../src/exec/sandbox-plan.ts";
import { KIWI_BIN } from "../helpers/kiwi.ts";
import { execIntoHead, kiwiIn } from "./lock-helpers.ts";
import { busiestUid, waitUidGone } from "../helpers/sandbox.ts";
import { cleanupTemps, makeProject, writeTree } from "../helpers/tree.ts";

afterAll(cleanupTemps);

if (!probeSandbox(process.env).usable) throw new Error(`the sandbox tests need a working bubblewrap: ${probeSandbox(process.env).reason}`);

const PARAMS = "parameters:\n  - { name: path, type: string }\n  - { name: port, type: integer }\n";

/** A python script tool, optionally with `requires` and `limits` lines (YAML, already indented). */
function pyTool(id: string, script: string, extra = ""): Record<string, string> {
  return {
    [`.ai/tools/${id}/tool.yaml`]: `tool_id: ${id}\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n${PARAMS}${extra}`,
    [`.ai/tools/${id}/main.py`]: script,
  };
}

const READ = `import json, sys\nprint(open(json.load(sys.stdin)["path"]).read())\n`;
const WRITE = `import json, sys\nopen(json.load(sys.stdin)["path"], "w").write("from the tool")\nprint("wrote")\n`;
const CONNECT = `import json, socket, sys\np = json.load(sys.stdin)\ns = socket.create_connection(("127.0.0.1", p["port"]), timeout=10)\ns.sendall(b"hello")\nprint(s.recv(16).decode())\n`;
const ALLOC = `b = bytearray(384 * 1024 * 1024)\nprint("allocated", len(b) >> 20, "MiB")\n`;
const FORK = `import os, sys
r, w = os.pipe(); kids = []
for i in range(24):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork failed after", i, "children"); sys.exit(3)
    if pid == 0:
        os.close(w); os.read(r, 1); os._exit(0)
    kids.append(pid)
os.close(w)
for k in kids: os.waitpid(k, 0)
print("forked 24")
`;

/**
 * How the tool sees system paths: a link or not and where each leads (links on a merged /usr), and
 * the bytes and permission bits of files kiwi copies in, then whether one can be written.
 */
const LINKED = ["/bin", "/sbin", "/lib", "/lib64", "/etc/localtime"];
const COPIED = ["/etc/passwd", "/etc/hosts", "/etc/ld.so.cache"];
const LAYOUT = `import json, os
links = {p: [os.path.islink(p), os.path.realpath(p)] if os.path.lexists(p) else None for p in ${JSON.stringify(LINKED)}}
files = {p: [oct(os.stat(p).st_mode & 0o7777), open(p, "rb").read().hex()] for p in ${JSON.stringify(COPIED)} if os.path.exists(p)}
try:
    open("/etc/passwd", "a").write("x")
    written = "written"
except OSError as e:
    written = e.strerror
print(json.dumps({"links": links, "files": files, "written": written}))
`;

function project(): string {
  return makeProject({
    ...pyTool("read_key", READ),
    ...pyTool("read_key_ok", READ, "requires:\n  - fs.read: [\"~/.ssh\"]\n"),
    ...pyTool("write_out", WRITE),
    ...pyTool("write_out_ok", WRITE, "requires:\n  - fs.write: [\"out\"]\n"),
    ...pyTool("connect", CONNECT),
    ...pyTool("connect_ok", CONNECT, "requires:\n  - net.outbound\n"),
    ...pyTool("connect_filtered", CONNECT, "requires:\n  - net.outbound: [\"127.0.0.1\"]\n"),
    ...pyTool("alloc", ALLOC, "limits:\n  memory_mb: 256\n"),
    ...pyTool("alloc_ok", ALLOC, "limits:\n  memory_mb: 1024\n"),
    ...pyTool("forker", FORK, "limits:\n  processes: 8\n"),
    ...pyTool("forker_ok", FORK, "limits:\n  processes: 64\n"),
    ...pyTool("spin", "while True:\n    pass\n", "limits:\n  cpu_seconds: 1\n"),
    ...pyTool("layout", LAYOUT),
    // A declared /etc holds the files kiwi otherwise copies in (/etc/passwd) and, with a host, /etc/ssl.
    ...pyTool("read_etc", READ, "requires:\n  - fs.read: [\"/etc\"]\n  - net.outbound: [\"127.0.0.1\"]\n"),
    ".ai/tools/bomb/tool.yaml": "tool_id: bomb\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: bomb.sh\nlimits:\n  processes: 16\n  timeout_ms: 1500\n",
    ".ai/tools/bomb/bomb.sh": ":(){ :|:& };:\nexec sleep 60\n",
    // Parameters cannot fill a URL's host (exec refuses that); the environment can, so that is how a
    // template gets steered here.
    ".ai/tools/fetch_data.yaml": "tool_id: fetch_data\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig:\n  method: GET\n  url: \"http://${API_HOST}/data\"\n",
    ".ai/tools/fetch_data_ok.yaml":
      "tool_id: fetch_data_ok\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nrequires:\n  - net.outbound: [\"127.0.0.1\"]\nconfig:\n  method: GET\n  url: \"http://${API_HOST}/data\"\n",
    // exec itself would follow a redirect to localhost (allow_redirect_hosts); the declared hosts do not allow it.
    ".ai/tools/fetch_redirect.yaml":
      "tool_id: fetch_redirect\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nrequires:\n  - net.outbound: [\"127.0.0.1\"]\nconfig:\n  method: GET\n  url: \"http://${API_HOST}/data\"\n  allow_redirect_hosts: [localhost]\n",
  });
}

const root = project();
const kiwi = kiwiIn(root);
writeTree(kiwi.env.HOME!, { ".ssh/id_rsa": { content: "FAKE-KEY-e2e-7f3a\n", mode: 0o600 } });
const keyPath = join(kiwi.env.HOME!, ".ssh", "id_rsa");
const exec = (tool: string, params: Record<string, unknown> = {}, extra: string[] = [], env: Record<string, string> = {}) =>
  kiwi.run(["exec", tool, "--sandbox=require", "--params", JSON.stringify(params), ...extra], env);

beforeAll(async () => {
  const r = await kiwi.run(["lock"]);
  if (r.exitCode !== 0) throw new Error(`kiwi lock failed:\n${r.stderr}`);
});

describe("kiwi exec --sandbox=require", () => {
  test("reading ~/.ssh/id_rsa fails undeclared and works with fs.read: [~/.ssh]", async () => {
    const denied = await exec("read_key", { path: keyPath });
    expect(denied.exitCode).toBe(1);
    expect(denied.stdout).toBe("");
    expect(denied.stderr).toContain("No such file or directory");
    const allowed = await exec("read_key_ok", { path: keyPath });
    expect([allowed.exitCode, allowed.stdout]).toEqual([0, "FAKE-KEY-e2e-7f3a\n\n"]);
  });

  test("a declared /etc is readable as the host has it, though kiwi copies system files into /etc otherwise", async () => {
    const r = await exec("read_etc", { path: "/etc/hostname" });
    expect([r.exitCode, r.stdout]).toEqual([0, `${readFileSync("/etc/hostname", "utf8")}\n`]);
    expect(r.stderr).toBe("");
  });

  test("writing outside the tool fails undeclared and works with fs.write: [out]", async () => {
    mkdirSync(join(root, "out"), { recursive: true });
    const target = join(root, "out", "result.txt");
    const denied = await exec("write_out", { path: target });
    expect(denied.exitCode).toBe(1);
    expect(existsSync(target)).toBe(false);
    const allowed = await exec("write_out_ok", { path: target });
    expect([allowed.exitCode, allowed.stdout]).toEqual([0, "wrote\n"]);
    expect(readFileSync(target, "utf8")).toBe("from the tool");
  });

  test("a TCP connection to a loopback listener fails undeclared, works with a bare net.outbound, and has no route past the proxy of a host-filtered tool", async () => {
    let received = "";
    const server = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        data(socket, data) {
          received += data.toString();
          socket.write("pong");
          socket.end();
        },
      },
    });
    try {
      const denied = await exec("connect", { port: server.port });
      expect(denied.exitCode).toBe(1);
      expect(denied.stderr).toContain("ConnectionRefusedError");
      expect(received).toBe("");
      const allowed = await exec("connect_ok", { port: server.port });
      expect([allowed.exitCode, allowed.stdout, received]).toEqual([0, "pong\n", "hello"]);
      // Declared hosts are reached through kiwi's proxy only: a raw socket that ignores it has no route.
      received = "";
      const filtered = await exec("connect_filtered", { port: server.port });
      expect(filtered.exitCode).toBe(1);
      expect(filtered.stderr).toContain("ConnectionRefusedError");
      expect(received).toBe("");
    } finally {
      server.stop(true);
    }
  });

  test("system paths are as on this machine: links lead where they do here, copied files hold the same bytes and modes, read-only", async () => {
    const r = await exec("layout");
    const links = Object.fromEntries(LINKED.map((p) => [p, existsSync(p) ? [lstatSync(p).isSymbolicLink(), realpathSync(p)] : null]));
    const files = Object.fromEntries(COPIED.filter((p) => existsSync(p)).map((p) => [p, [`0o${(statSync(p).mode & 0o7777).toString(8)}`, readFileSync(p).toString("hex")]]));
    expect([r.exitCode, JSON.parse(r.stdout)]).toEqual([0, { links, files, written: "Read-only file system" }]);
  });

  test("allocating past memory_mb fails, and the same allocation fits a larger declared limit", async () => {
    const denied = await exec("alloc");
    expect(denied.exitCode).toBe(1);
    expect(denied.stderr).toContain("MemoryError");
    const allowed = await exec("alloc_ok");
    expect([allowed.exitCode, allowed.stdout]).toEqual([0, "allocated 384 MiB\n"]);
  });

  test("forking past the process limit fails, and succeeds under a larger declared limit", async () => {
    const denied = await exec("forker");
    expect([denied.exitCode, denied.stdout]).toEqual([3, expect.stringMatching(/^fork failed after \d+ children\n$/)]);
    const allowed = await exec("forker_ok");
    expect([allowed.exitCode, allowed.stdout]).toEqual([0, "forked 24\n"]);
  });

  test("a tool past its CPU time is reported as killed by SIGXCPU, not as a bare exit code", async () => {
    const r = await exec("spin");
    expect(r.exitCode).toBe(128 + 24);
    expect(r.stderr).toContain("error[E_EXEC_FAILED]: spin was killed by SIGXCPU (signal 24)");
    expect(r.stderr).toContain("the tool may have hit its CPU limit (limits.cpu_seconds)");
  });

  test("a fork bomb is held at its process limit and killed whole at its timeout", async () => {
    // Under root the bomb runs as a per-run uid above SANDBOX_UID_BASE: count its processes while it
    // runs (per uid, as other sandboxes on the machine have uids of their own).
    let peak = { uid: -1, count: 0 };
    const sampler = setInterval(() => {
      const now = busiestUid((uid) => uid >= SANDBOX_UID_BASE);
      if (now.count > peak.count) peak = now;
    }, 20);
    const r = await exec("bomb").finally(() => clearInterval(sampler));
    if (process.getuid?.() === 0) {
      expect(peak.count).toBeGreaterThan(4);
      // A /proc scan is no snapshot: while it reads one process after another, a bomb replaces the
      // ones that exit, so a slow (loaded) scan can see up to about twice the limit that never
      // coexisted. An unlimited bomb is in the hundreds by then; the exact limit is the forker test's.
      expect(peak.count).toBeLessThanOrEqual(32);
    }
    expect(r.exitCode).toBe(8);
    expect(r.stderr).toContain("error[E_EXEC_FAILED]: bomb timed out after 1500 ms");
    // None of it may outlive kiwi.
    if (process.getuid?.() === 0) expect(await waitUidGone(peak.uid)).toBe(0);
  }, 20_000);
});

describe("a declared fs.write folder that does not exist yet (the init scaffold's ~/.npm on a fresh HOME)", () => {
  test("is created before the first run, said once, and every run writes to the same place", async () => {
    const cacheDir = join(kiwi.env.HOME!, ".toolcache");
    const r = makeProject(pyTool("cacher", `import json, os, sys\np = json.load(sys.stdin)["path"]\nn = len(os.listdir(p))\nopen(os.path.join(p, f"entry{n}"), "w").write("x")\nprint(n + 1)\n`, 'requires:\n  - fs.write: ["~/.toolcache"]\n'));
    const k = kiwiIn(r, { HOME: kiwi.env.HOME! });
    expect((await k.run(["lock"])).exitCode).toBe(0);
    const dry = await k.run(["exec", "cacher", "--sandbox=require", "--dry-run", "--params", JSON.stringify({ path: cacheDir })]);
    expect([dry.exitCode, existsSync(cacheDir)]).toEqual([0, false]);
    const first = await k.run(["exec", "cacher", "--sandbox=require", "--params", JSON.stringify({ path: cacheDir })]);
    expect([first.exitCode, first.stdout]).toEqual([0, "1\n"]);
    expect(first.stderr).toContain(`warning: created ${cacheDir}, declared in fs.write but missing`);
    for (const n of [2, 3]) {
      const again = await k.run(["exec", "cacher", "--sandbox=require", "--params", JSON.stringify({ path: cacheDir })]);
      expect([again.exitCode, again.stdout, again.stderr]).toEqual([0, `${n}\n`, ""]);
    }
  });
});

describe("Ctrl-C during a run", () => {
  const HANDLER = `import signal, sys, time\ndef stop(signum, frame):\n    print("cleaned up", flush=True)\n    sys.exit(0)\nsignal.signal(signal.SIGINT, stop)\nprint("ready", flush=True)\ntime.sleep(60)\n`;

  test.each(["require", "off"])("--sandbox=%s: the tool's own handler gets SIGINT; kiwi says interrupted and exits 130", async (mode) => {
    const r = makeProject(pyTool("patient", HANDLER));
    const k = kiwiIn(r);
    expect((await k.run(["lock"])).exitCode).toBe(0);
    const proc = Bun.spawn([KIWI_BIN, "exec", "patient", `--sandbox=${mode}`, "--params", "{}"], { cwd: r, env: k.env, stdout: "pipe", stderr: "pipe" });
    const reader = proc.stdout.getReader();
    let out = "";
    while (!out.includes("ready\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    proc.kill("SIGINT");
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect([code, out]).toEqual([130, "ready\ncleaned up\n"]);
    expect(stderr).toContain("error[E_INTERRUPTED]: patient was interrupted: kiwi received SIGINT and passed it on to the tool");
  }, 60_000);
});

describe("a sandboxed tool whose reader goes away (`kiwi exec … | head -2`)", () => {
  test("ends at once as `yes | head -2` does: the signal reaches it below bubblewrap, kiwi exits 141 and reports nothing", async () => {
    const root = makeProject({ ".ai/tools/endless.sh": "#!/bin/bash\n# ---\n# tool_id: endless\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# limits:\n#   timeout_ms: 100000\n# ---\nyes\n" });
    const k = kiwiIn(root, { KIWI_SANDBOX: "require" });
    expect((await k.run(["lock"])).exitCode).toBe(0);
    // Past the racy margin (2 s), the first call remembers its launch and the second replays it.
    await Bun.sleep(2_100);
    for (let call = 0; call < 2; call++) {
      expect(await execIntoHead(k.env, root, ["endless"])).toEqual({ stdout: "y\ny\n", kiwi: 141, stderr: "" });
      expect(readdirSync(join(k.cache, "exec", "launches"), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length).toBe(1);
    }
  });
});

describe("http_client host policy through kiwi exec", () => {
  test("a URL template steered to 127.0.0.1 is refused undeclared, and reaches the server when declared", async () => {
    let hits = 0;
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (hits++, Response.json({ ok: "inside" })) });
    try {
      const host = `127.0.0.1:${server.port}`;
      const denied = await exec("fetch_data", {}, [], { API_HOST: host });
      expect([denied.exitCode, denied.stderr]).toEqual([11, expect.any(String)]);
      expect(denied.stderr).toContain(`error[E_SANDBOX]: fetch_data may not contact http://${host}: 127.0.0.1 is a loopback address`);
      expect(hits).toBe(0);
      for (const spelled of [`localhost:${server.port}`, `2130706433:${server.port}`, `[::ffff:127.0.0.1]:${server.port}`]) {
        const r = await exec("fetch_data", {}, [], { API_HOST: spelled });
        expect([r.exitCode, hits]).toEqual([11, 0]);
      }
      const allowed = await exec("fetch_data_ok", {}, [], { API_HOST: host });
      expect(allowed.exitCode).toBe(0);
      expect(JSON.parse(allowed.stdout)).toEqual({ ok: "inside" });
      expect(hits).toBe(1);
    } finally {
      server.stop(true);
    }
  });

  test("a redirect to an undeclared host is refused before it is followed", async () => {
    let innerHits = 0;
    const inner = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (innerHits++, new Response("secret")) });
    const outer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.redirect(`http://localhost:${inner.port}/admin`, 302) });
    try {
      const r = await exec("fetch_redirect", {}, [], { API_HOST: `127.0.0.1:${outer.port}` });
      expect(r.exitCode).toBe(11);
      expect(r.stderr).toContain(`error[E_SANDBOX]: fetch_redirect may not contact localhost:${inner.port}: it is not among the declared net.outbound hosts (127.0.0.1)`);
      expect(innerHits).toBe(0);
    } finally {
      inner.stop(true);
      outer.stop(true);
    }
  });
});

describe("without bubblewrap", () => {
  const noBwrap = { KIWI_BWRAP: "/nonexistent/bwrap" };

  test("auto warns once on stderr and runs the tool unsandboxed", async () => {
    const r = await kiwi.run(["exec", "read_key", "--params", JSON.stringify({ path: keyPath })], { ...noBwrap, KIWI_SANDBOX: "auto" });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("FAKE-KEY-e2e-7f3a");
    expect(r.stderr.match(/no sandbox: /g)).toHaveLength(1);
  });

  test("require refuses with E_SANDBOX and runs nothing", async () => {
    const r = await kiwi.run(["exec", "read_key", "--sandbox=require", "--params", JSON.stringify({ path: keyPath })], noBwrap);
    expect([r.exitCode, r.stdout]).toEqual([11, ""]);
    expect(r.stderr).toContain('error[E_SANDBOX]: cannot run read_key: the sandbox is required but unavailable (KIWI_BWRAP="/nonexistent/bwrap" is not an executable)');
  });
});

describe("kiwi exec --dry-run", () => {
  test("shows what is enforced and what is not", async () => {
    const r = await kiwi.run(["exec", "connect_filtered", "--dry-run", "--sandbox=require", "--params", '{"port": 1}']);
    expect(r.exitCode).toBe(0);
    const doc = JSON.parse(r.stdout);
    const lines = (doc.sandbox.enforcement as { area: string; enforced: boolean; detail: string }[]).map((e) => `${e.enforced ? "+" : "-"} ${e.area}: ${e.detail}`);
    expect(lines).toContainEqual(expect.stringMatching(/^\+ network: only 127\.0\.0\.1 \(declared at \/requires\/0\), through kiwi's proxy at 127\.0\.0\.1:3128 .*any other connection has no route/));
    expect(lines).toContainEqual(expect.stringMatching(/^\+ filesystem: read-only run directory /));
    expect(lines).toContainEqual("- commands: which programs the tool starts is not checked (proc.spawn, shell.execute): anything visible can run, within the process limit");
  });
});


describe("a sandboxed call made before runs from its launch memo, sandboxed", () => {
  // The tool reports where it runs: the sandbox's hostname, its uid, and a variable of its plan.
  const WHERE = `import os\nprint(open("/proc/sys/kernel/hostname").read().strip(), os.getuid(), os.environ.get("KIWI_MARK", "-"))\n`;

  test("each replay is sandboxed anew: the launcher is planned per call (under root, a uid of its own per run)", async () => {
    const root = makeProject({ ...pyTool("where", WHERE) });
    const k = kiwiIn(root, { KIWI_SANDBOX: "auto" });
    expect((await k.run(["lock"])).exitCode).toBe(0);
    // Inputs within the racy margin (2 s) are never remembered.
    await Bun.sleep(2_100);
    const first = await k.run(["exec", "where"]);
    expect([first.exitCode, first.stderr]).toEqual([0, ""]);
    const launches = join(k.cache, "exec", "launches");
    const memo = readdirSync(launches, { recursive: true, withFileTypes: true }).find((e) => e.isFile())!;
    const file = join(memo.parentPath, memo.name);
    // The replay runs what the memo holds: a variable added to the remembered plan reaches the tool.
    const original = readFileSync(file, "utf8");
    const body = original.slice(original.indexOf("\n") + 1).replaceAll('"env":{', '"env":{"KIWI_MARK":"replayed",');
    chmodSync(file, 0o644);
    writeFileSync(file, `${new Bun.CryptoHasher("sha256").update(body).digest("hex")}\n${body}`);
    const runs = [await k.run(["exec", "where"]), await k.run(["exec", "where"])];
    const seen = runs.map((r) => r.stdout.trim().split(" "));
    expect(runs.map((r) => r.exitCode)).toEqual([0, 0]);
    expect(seen.map(([host, , mark]) => [host, mark])).toEqual([
      ["kiwi-sandbox", "replayed"],
      ["kiwi-sandbox", "replayed"],
    ]);
    const uids = seen.map(([, uid]) => Number(uid));
    if (process.getuid?.() === 0) {
      expect(uids.every((u) => u > SANDBOX_UID_BASE)).toBe(true);
      expect(uids[0]).not.toBe(uids[1]);
    } else expect(uids).toEqual([process.getuid!(), process.getuid!()]);
  });
});

describe("a runtime found on PATH through a linked folder (a worktree's node_modules linked to another checkout's)", () => {
  test("runs sandboxed, from its launch memo too, and a link repointed since leads the next call to the new runtime", async () => {
    const root = makeProject({
      ".ai/tools/greet_rt.yaml": "tool_id: greet_rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: greet }\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { type: object }\n",
      ".ai/tools/hello/tool.yaml": "tool_id: hello\ntool_type: script\nversion: 1.0.0\nexecutor: greet_rt\nconfig:\n  entrypoint: msg.txt\n",
      ".ai/tools/hello/msg.txt": "hi\n",
    });
    const store = makeProject({});
    for (const n of ["one", "two"]) {
      writeTree(store, {
        [`${n}/node_modules/greet/bin/greet.sh`]: { content: `#!/bin/bash\necho "${n} ran $(cat "$1")"\n`, mode: 0o755 },
        [`${n}/node_modules/.bin/greet`]: { symlink: "../greet/bin/greet.sh" },
      });
    }
    writeTree(store, { "worktree/node_modules": { symlink: "../one/node_modules" } });
    const k = kiwiIn(root);
    const env = { PATH: `${store}/worktree/node_modules/.bin:${k.env.PATH ?? "/usr/bin:/bin"}` };
    expect((await k.run(["lock"], env)).exitCode).toBe(0);
    // Inputs within the racy margin (2 s) are never remembered.
    await Bun.sleep(2_100);
    const calls = [];
    for (let i = 0; i < 3; i++) calls.push(await k.run(["exec", "hello", "--sandbox=require"], env));
    expect(calls.map((r) => [r.exitCode, r.stdout, r.stderr])).toEqual(Array(3).fill([0, "one ran hi\n", ""]));
    // The warm call replays its launch memo, which holds no machine facts: the links are looked at anew.
    const launches = join(k.cache, "exec", "launches");
    const memoFile = () => readdirSync(launches, { recursive: true, withFileTypes: true }).find((e) => e.isFile())!;
    const memo = join(memoFile().parentPath, memoFile().name);
    const recorded = statSync(memo);
    symlinkSync("../two/node_modules", `${store}/worktree/node_modules.new`);
    renameSync(`${store}/worktree/node_modules.new`, `${store}/worktree/node_modules`);
    const after = await k.run(["exec", "hello", "--sandbox=require"], env);
    expect([after.exitCode, after.stdout, after.stderr]).toEqual([0, "two ran hi\n", ""]);
    // Replayed, not recorded again.
    expect([statSync(memo).ino, statSync(memo).mtimeMs]).toEqual([recorded.ino, recorded.mtimeMs]);
  });
});
