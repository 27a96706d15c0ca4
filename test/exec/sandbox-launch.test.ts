// Real tools under the real launcher (bubblewrap + setpriv + prlimit): each undeclared permission makes
// the tool fail, and the same tool succeeds once the manifest declares it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { probeSandbox, prepareSandbox } from "../../src/exec/sandbox-io.ts";
import { planSandbox, SANDBOX_UID_BASE } from "../../src/exec/sandbox-plan.ts";
import { cap, launch, processesOfUid, sandboxFixture, sandboxInput, waitUidGone } from "../helpers/sandbox.ts";
import { cleanupTemps } from "../helpers/tree.ts";
import { needs } from "../helpers/needs.ts";

afterAll(cleanupTemps);

beforeAll(() => {
  const probe = probeSandbox(process.env);
  // CI installs bubblewrap; a machine that cannot sandbox must say so, not pass quietly.
  if (!probe.usable) throw new Error(`these tests need a working bubblewrap: ${probe.reason}`);
});

const READ = `import sys\nprint(open(sys.argv[1]).read())\n`;

describe("filesystem", () => {
  test("a tool cannot read ~/.ssh/id_rsa unless it declares fs.read of ~/.ssh", async () => {
    const fx = sandboxFixture({ "read.py": READ });
    const denied = await launch(prepareSandbox(sandboxInput(fx, ["python3", "read.py", fx.keyPath]), "require", process.env));
    expect(denied.exitCode).toBe(1);
    expect(denied.stdout).not.toContain(fx.keySecret);
    expect(denied.stderr).toContain("No such file or directory");

    const allowed = await launch(prepareSandbox(sandboxInput(fx, ["python3", "read.py", fx.keyPath], [cap("fs.read", ["~/.ssh"])]), "require", process.env));
    expect([allowed.exitCode, allowed.stderr]).toEqual([0, ""]);
    expect(allowed.stdout).toContain(fx.keySecret);
  });

  test("a tool cannot see the home folder or the project it was called from", async () => {
    const fx = sandboxFixture({ "ls.sh": 'ls -A "$1" && echo LISTED\n' });
    for (const dir of [fx.home, fx.project]) {
      const r = await launch(prepareSandbox(sandboxInput(fx, ["bash", "ls.sh", dir]), "require", process.env));
      // The home folder exists only as the path down to the run directory (.cache), the project not at all.
      expect(r.stdout).not.toContain(".ssh");
      if (dir === fx.project) expect([r.exitCode, r.stdout]).toEqual([2, ""]);
    }
  });

  test("a tool cannot write outside its directory unless it declares fs.write", async () => {
    const fx = sandboxFixture({ "write.py": `import sys\nopen(sys.argv[1], "w").write("written by the tool")\nprint("ok")\n` });
    const out = join(fx.project, "out");
    mkdirSync(out);
    const target = join(out, "result.txt");
    const denied = await launch(prepareSandbox(sandboxInput(fx, ["python3", "write.py", target]), "require", process.env));
    expect(denied.exitCode).toBe(1);
    expect(denied.stderr).toMatch(/No such file or directory|Read-only file system/);
    expect(existsSync(target)).toBe(false);

    const allowed = await launch(prepareSandbox(sandboxInput(fx, ["python3", "write.py", target], [cap("fs.write", ["out"])]), "require", process.env));
    expect([allowed.exitCode, allowed.stdout, allowed.stderr]).toEqual([0, "ok\n", ""]);
    expect(readFileSync(target, "utf8")).toBe("written by the tool");
  });

  test("the run directory itself is read-only, even with fs.write declared elsewhere", async () => {
    const fx = sandboxFixture({ "write.py": `import sys\nopen(sys.argv[1], "w").write("x")\n` });
    const r = await launch(prepareSandbox(sandboxInput(fx, ["python3", "write.py", join(fx.runDir, "write.py")], [cap("fs.write", ["out"])]), "require", process.env));
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("Read-only file system");
    expect(readFileSync(join(fx.runDir, "write.py"), "utf8")).toContain("open(sys.argv[1]");
  });
});

describe("network", () => {
  const CONNECT = `import socket, sys\ns = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)\ns.sendall(b"hello")\nprint(s.recv(16).decode())\n`;

  test("a tool cannot reach a loopback listener unless it declares net.outbound", async () => {
    let received = "";
    let connections = 0;
    const server = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open: () => void connections++,
        data(socket, data) {
          received += data.toString();
          socket.write("pong");
          socket.end();
        },
      },
    });
    try {
      const fx = sandboxFixture({ "connect.py": CONNECT });
      const argv = ["python3", "connect.py", String(server.port)];
      const denied = await launch(prepareSandbox(sandboxInput(fx, argv), "require", process.env));
      expect(denied.exitCode).toBe(1);
      expect(denied.stderr).toContain("ConnectionRefusedError");
      expect(connections).toBe(0);

      const allowed = await launch(prepareSandbox(sandboxInput(fx, argv, [cap("net.outbound")]), "require", process.env));
      expect([allowed.exitCode, allowed.stdout, allowed.stderr]).toEqual([0, "pong\n", ""]);
      expect([connections, received]).toEqual([1, "hello"]);
    } finally {
      server.stop(true);
    }
  });
});

describe("resources", () => {
  test("a tool allocating past its memory limit fails, and succeeds under a larger declared limit", async () => {
    const fx = sandboxFixture({ "alloc.py": `b = bytearray(384 * 1024 * 1024)\nprint("allocated", len(b) >> 20, "MiB")\n` });
    const denied = await launch(prepareSandbox(sandboxInput(fx, ["python3", "alloc.py"], [], { memoryMb: 256 }), "require", process.env));
    expect(denied.exitCode).toBe(1);
    expect(denied.stderr).toContain("MemoryError");

    const allowed = await launch(prepareSandbox(sandboxInput(fx, ["python3", "alloc.py"], [], { memoryMb: 1024 }), "require", process.env));
    expect([allowed.exitCode, allowed.stdout, allowed.stderr]).toEqual([0, "allocated 384 MiB\n", ""]);
  });

  // Children block on a pipe until the parent has forked them all, so all of them are alive at once.
  const FORK = `import os, sys
n = int(sys.argv[1]); r, w = os.pipe(); kids = []
for i in range(n):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork failed after", i, "children:", e.strerror); sys.exit(3)
    if pid == 0:
        os.close(w); os.read(r, 1); os._exit(0)
    kids.append(pid)
os.close(w)
for k in kids: os.waitpid(k, 0)
print("forked", n)
`;

  test("a tool forking past its process limit fails, and succeeds under a larger declared limit", async () => {
    const fx = sandboxFixture({ "fork.py": FORK });
    const denied = await launch(prepareSandbox(sandboxInput(fx, ["python3", "fork.py", "24"], [], { processes: 8 }), "require", process.env));
    expect(denied.exitCode).toBe(3);
    expect(denied.stdout).toMatch(/^fork failed after \d+ children: Resource temporarily unavailable/);

    const allowed = await launch(prepareSandbox(sandboxInput(fx, ["python3", "fork.py", "24"], [], { processes: 64 }), "require", process.env));
    expect([allowed.exitCode, allowed.stdout, allowed.stderr]).toEqual([0, "forked 24\n", ""]);
  });

  const BOMB = ":(){ :|:& };:; exec sleep 60";

  test.skipIf(!needs(process.getuid?.() === 0, "needs root"))("a fork bomb stays under its process limit and is gone once killed (kiwi as root)", async () => {
    const fx = sandboxFixture({});
    const plan = prepareSandbox(sandboxInput(fx, ["bash", "-c", BOMB], [], { processes: 16 }), "require", process.env);
    expect(plan.uid).toBe(SANDBOX_UID_BASE + process.pid);
    let peak = 0;
    const r = await launch(plan, { killAfterMs: 2500, onTick: () => (peak = Math.max(peak, processesOfUid(plan.uid!))) });
    expect([r.killed, r.signal]).toEqual([true, "SIGKILL"]);
    expect(peak).toBeGreaterThan(4); // it really did fork
    expect(peak).toBeLessThanOrEqual(16);
    expect(await waitUidGone(plan.uid!)).toBe(0);
  });

  test.skipIf(!needs(process.getuid?.() === 0, "needs root"))("a fork bomb stays under its process limit for an unprivileged user too (per-sandbox user namespace)", async () => {
    // Exercises the non-root launcher (a user namespace instead of setpriv) by starting it as nobody.
    const fx = sandboxFixture({});
    for (const dir of [fx.home, join(fx.home, ".cache"), join(fx.home, ".cache", "kiwi"), join(fx.home, ".cache", "kiwi", "run"), fx.runDir]) chmodSync(dir, 0o755);
    const nobody = 65534;
    const before = processesOfUid(nobody);
    const probe = { ...probeSandbox(process.env), uid: nobody };
    const input = { ...sandboxInput(fx, ["/bin/bash", "-c", BOMB], [], { processes: 16 }), env: { PATH: "/usr/bin:/bin" } };
    const plan = planSandbox(input, probe, "require");
    expect(plan.argv).toContain("--unshare-all");
    let peak = 0;
    const r = await launch(plan, {
      killAfterMs: 2500,
      prefix: ["setpriv", `--reuid=${nobody}`, `--regid=${nobody}`, "--clear-groups"],
      onTick: () => (peak = Math.max(peak, processesOfUid(nobody) - before)),
    });
    expect(r.killed).toBe(true);
    expect(peak).toBeGreaterThan(4);
    // 16 inside the namespace plus bwrap's own monitor outside it.
    expect(peak).toBeLessThanOrEqual(17);
    expect(await waitUidGone(nobody)).toBe(before);
  });
});

describe("environment", () => {
  test("a tool sees exactly the planned variables, not kiwi's", async () => {
    const fx = sandboxFixture({ "env.sh": 'env | cut -d= -f1 | sort | tr "\\n" " "\n' });
    const input = sandboxInput(fx, ["/bin/bash", "env.sh"]);
    const r = await launch(prepareSandbox({ ...input, env: { PATH: "/usr/bin:/bin", DECLARED: "1" } }, "require", { ...process.env, LEAKED_SECRET: "x" }));
    expect(r.exitCode).toBe(0);
    // bash adds PWD, SHLVL and _ itself.
    expect(r.stdout.trim().split(" ")).toEqual(["DECLARED", "PATH", "PWD", "SHLVL", "_"]);
  });
});
