// Real tools under the real launcher (bubblewrap + setpriv + prlimit): each undeclared permission makes
// the tool fail, and the same tool succeeds once the manifest declares it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { probeSandbox, prepareSandbox } from "../../src/exec/sandbox-io.ts";
import { planSandbox, SANDBOX_UID_BASE } from "../../src/exec/sandbox-plan.ts";
import { cap, launch, processesOfUid, sandboxFixture, sandboxInput, waitUidGone } from "../helpers/sandbox.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";
import { REPO_ROOT } from "../helpers/kiwi.ts";
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

describe("a runtime reached through a linked folder", () => {
  // A real folder holding the runtime, reached through a symbolic link in an ancestor: a worktree's
  // node_modules linked to another checkout's, a home on /home -> /data/home, a pnpm-style store.
  function linkedTree(files: Record<string, string>, linkAt: string, linkTo: string): { fx: ReturnType<typeof sandboxFixture>; root: string } {
    const fx = sandboxFixture({});
    const root = makeTemp("kiwi-sbx-linked-");
    writeTree(root, Object.fromEntries(Object.entries(files).map(([p, content]) => [p, { content, mode: 0o755 }])));
    mkdirSync(dirname(join(root, linkAt)), { recursive: true });
    symlinkSync(linkTo, join(root, linkAt));
    return { fx, root };
  }

  test("a command under a linked node_modules/.bin starts, and its relative link leads to the package mounted at its real path", async () => {
    const { fx, root } = linkedTree(
      { "store/node_modules/greet/bin/greet.sh": '#!/bin/bash\necho "me=$0"\ncat "$(dirname "$(readlink -f "$0")")/../share/word.txt"\n', "store/node_modules/greet/share/word.txt": "hello\n", "store/node_modules/secret.txt": "SECRET\n" },
      "proj/node_modules",
      "../store/node_modules",
    );
    mkdirSync(join(root, "store/node_modules/.bin"));
    symlinkSync("../greet/bin/greet.sh", join(root, "store/node_modules/.bin/greet"));
    const cmd = join(root, "proj/node_modules/.bin/greet");
    const plan = prepareSandbox(sandboxInput(fx, [cmd, join(root, "store/node_modules/secret.txt")]), "require", process.env);
    const r = await launch(plan);
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, `me=${cmd}\nhello\n`, ""]);
    // Exactly the link, the .bin folder and the package, at their real paths: not the rest of the store.
    const real = realpathSync(root);
    expect(plan.mounts.filter((m) => m.why.startsWith("runtime")).map((m) => [m.kind, m.path, m.target ?? ""])).toEqual([
      ["symlink", `${real}/proj/node_modules`, "../store/node_modules"],
      ["ro", `${real}/store/node_modules/.bin`, ""],
      ["ro", `${real}/store/node_modules/greet`, ""],
    ]);
    const peek = await launch(prepareSandbox(sandboxInput(fx, ["/bin/cat", join(root, "store/node_modules/secret.txt")]), "require", process.env));
    expect(peek.stdout).not.toContain("SECRET");
  });

  test("a script found through a linked home keeps its path as started: files beside it are found from $0 and from its real path", async () => {
    const { fx, root } = linkedTree(
      {
        "data/home/ann/.venvs/tool/bin/run": '#!/bin/bash\n. "$(dirname "$0")/../lib/helper.sh"\necho "$0 says $(helper) $(cat "$(dirname "$(readlink -f "$0")")/../VERSION")"\n',
        "data/home/ann/.venvs/tool/lib/helper.sh": "helper() { echo hi; }\n",
        "data/home/ann/.venvs/tool/VERSION": "1.2\n",
        "data/home/ann/notes.txt": "PRIVATE\n",
      },
      "home",
      "data/home",
    );
    const cmd = join(root, "home/ann/.venvs/tool/bin/run");
    const r = await launch(prepareSandbox(sandboxInput(fx, [cmd]), "require", process.env));
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, `${cmd} says hi 1.2\n`, ""]);
    const peek = await launch(prepareSandbox(sandboxInput(fx, ["/bin/cat", join(root, "home/ann/notes.txt")]), "require", process.env));
    expect(peek.stdout).not.toContain("PRIVATE");
  });

  test.each([["relative", "data/home"], ["absolute", ""]])("under a home reached through a link (%s target), the run directory and a declared fs.write folder there are usable too", async (_kind, relative) => {
    const { fx, root } = linkedTree(
      { "data/home/ann/tools/bin/run": '#!/bin/bash\ncat msg.txt\necho written > "$1/w.txt" && echo "wrote in $PWD"\n', "data/home/ann/.cache/run/msg.txt": "hi\n" },
      "home",
      "data/home",
    );
    if (!relative) {
      rmSync(join(root, "home"));
      symlinkSync(join(root, "data/home"), join(root, "home"));
    }
    const runDir = join(root, "home/ann/.cache/run");
    const out = join(root, "home/ann/out");
    const input = { ...sandboxInput(fx, [join(root, "home/ann/tools/bin/run"), out], [cap("fs.write", [out])]), runDirs: [runDir], cwd: runDir };
    const r = await launch(prepareSandbox(input, "require", process.env));
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, `hi\nwrote in ${runDir}\n`, ""]);
    expect(readFileSync(join(root, "data/home/ann/out/w.txt"), "utf8")).toBe("written\n");
  });

  test("with the linked home declared, a link inside it that the command goes through is there as the host has it, not made again", async () => {
    const { fx, root } = linkedTree({ "store/nm/greet/bin/greet.sh": '#!/bin/bash\necho "greet $(cat ~/note.txt)"\n', "data/home/ann/note.txt": "from home\n" }, "home", "data/home");
    mkdirSync(join(root, "store/nm/.bin"));
    symlinkSync("../greet/bin/greet.sh", join(root, "store/nm/.bin/greet"));
    symlinkSync(join(root, "store/nm"), join(root, "data/home/ann/nm"));
    const home = join(root, "home/ann");
    const input = sandboxInput(fx, [join(home, "nm/.bin/greet")], [cap("fs.read", [home])]);
    const r = await launch(prepareSandbox({ ...input, env: { ...input.env, HOME: home } }, "require", process.env));
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, "greet from home\n", ""]);
  });

  test("node runs a package's bin reached through a linked node_modules, importing its own modules", async () => {
    const { fx, root } = linkedTree(
      { "store/node_modules/hello/bin/hello.mjs": '#!/usr/bin/env node\nimport { word } from "../lib/word.mjs";\nconsole.log(word);\n', "store/node_modules/hello/lib/word.mjs": 'export const word = "from node";\n' },
      "proj/node_modules",
      "../store/node_modules",
    );
    mkdirSync(join(root, "store/node_modules/.bin"));
    symlinkSync("../hello/bin/hello.mjs", join(root, "store/node_modules/.bin/hello"));
    const r = await launch(prepareSandbox(sandboxInput(fx, [join(root, "proj/node_modules/.bin/hello")]), "require", process.env));
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, "from node\n", ""]);
  });

  test("a link inside a declared folder is not followed out of it: its target is readable only when declared too", async () => {
    const { fx, root } = linkedTree({ "store/node_modules/dep/index.js": "DEP\n", "proj/main.js": "MAIN\n" }, "proj/node_modules", "../store/node_modules");
    const argv = ["/bin/cat", join(root, "proj/main.js"), join(root, "proj/node_modules/dep/index.js")];
    const project = await launch(prepareSandbox(sandboxInput(fx, argv, [cap("fs.read", [join(root, "proj")])]), "require", process.env));
    expect([project.exitCode, project.stdout]).toEqual([1, "MAIN\n"]);
    expect(project.stderr).toContain("No such file or directory");
    const both = await launch(prepareSandbox(sandboxInput(fx, argv, [cap("fs.read", [join(root, "proj"), join(root, "store/node_modules")])]), "require", process.env));
    expect([both.exitCode, both.stdout, both.stderr]).toEqual([0, "MAIN\nDEP\n", ""]);
  });

  test("bun reached through a worktree's node_modules linked to another checkout's starts", async () => {
    // The repository's own bun (a devDependency), reached as a worktree linked to this checkout would.
    const { fx, root } = linkedTree({}, "worktree/node_modules", realpathSync(join(REPO_ROOT, "node_modules")));
    const r = await launch(prepareSandbox(sandboxInput(fx, [join(root, "worktree/node_modules/.bin/bun"), "-e", "console.log(6 * 7)"]), "require", process.env));
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, "42\n", ""]);
  });
});
