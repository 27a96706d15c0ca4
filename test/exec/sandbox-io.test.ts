// The probe and the modes on this machine: a working bubblewrap is found and used; a missing or
// broken one (simulated with KIWI_BWRAP) makes auto warn once and require refuse.
import { afterEach, describe, expect, test } from "bun:test";
import { accessSync, appendFileSync, chmodSync, constants, existsSync, lstatSync, readFileSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KiwiError } from "../../src/errors.ts";
import { createWritableFolders, probeSandbox, prepareSandbox, resetSandboxProbe, resolveCommand, systemPaths } from "../../src/exec/sandbox-io.ts";
import { type CommandLink, NETWORK_PATHS, SYSTEM_PATHS, type SystemEntry } from "../../src/exec/sandbox-mounts.ts";
import { launch, sandboxFixture, sandboxInput } from "../helpers/sandbox.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";

afterEach(() => {
  resetSandboxProbe();
  cleanupTemps();
});

describe("probeSandbox", () => {
  test("finds a working bubblewrap on PATH and caches the answer", () => {
    const a = probeSandbox(process.env);
    expect(a.usable).toBe(true);
    expect(a.bwrap).toMatch(/\/bwrap$/);
    expect(a.prlimit).toMatch(/\/prlimit$/);
    expect(probeSandbox(process.env)).toBe(a);
  });

  test("says what each system path is here: a link and its real path, a readable file and its mode and size, or something else", () => {
    const expected: Record<string, SystemEntry> = {};
    for (const path of [...SYSTEM_PATHS, ...NETWORK_PATHS]) {
      if (!existsSync(path)) continue;
      const st = lstatSync(path);
      const readable = (() => {
        try {
          accessSync(path, constants.R_OK);
          return true;
        } catch {
          return false;
        }
      })();
      expected[path] = st.isSymbolicLink() ? { kind: "link", realPath: realpathSync(path) } : st.isFile() && readable ? { kind: "file", mode: st.mode, size: st.size } : { kind: "other" };
    }
    expect(probeSandbox(process.env).systemPaths).toEqual(expected);
    expect(probeSandbox(process.env).systemPaths?.["/usr"]).toEqual({ kind: "other" });
  });

  // As root every file is readable, so the branch that binds a file kiwi cannot read (a copy
  // needs it opened) is driven as an unprivileged user, on files made for it.
  test.skipIf(process.getuid?.() !== 0)("as a user who cannot read a file, says it is something else (bound, not copied); absent and dangling paths are left out", () => {
    const dir = makeTemp();
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, "readable"), "ok\n", { mode: 0o644 });
    writeFileSync(join(dir, "unreadable"), "secret\n", { mode: 0o600 });
    symlinkSync(join(dir, "readable"), join(dir, "link"));
    symlinkSync(join(dir, "nowhere"), join(dir, "dangling"));
    const names = ["readable", "unreadable", "link", "dangling", "absent"];
    const script = join(dir, "facts.ts");
    writeFileSync(script, `import { systemPaths } from ${JSON.stringify(join(import.meta.dir, "../../src/exec/sandbox-io.ts"))};\nconsole.log(JSON.stringify(systemPaths(${JSON.stringify(names.map((n) => join(dir, n)))})));\n`, { mode: 0o644 });
    const asNobody = Bun.spawnSync(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, script], { env: { PATH: process.env.PATH ?? "", HOME: dir, BUN_INSTALL_CACHE_DIR: join(dir, "bun-cache") }, stdout: "pipe", stderr: "pipe" });
    expect(asNobody.stderr.toString()).toBe("");
    const st = lstatSync(join(dir, "readable"));
    expect(JSON.parse(asNobody.stdout.toString())).toEqual({
      [join(dir, "readable")]: { kind: "file", mode: st.mode, size: 3 },
      [join(dir, "unreadable")]: { kind: "other" },
      [join(dir, "link")]: { kind: "link", realPath: realpathSync(join(dir, "readable")) },
    });
    // The same files as root: the unreadable one is readable after all, and copied.
    expect(systemPaths([join(dir, "unreadable")])).toEqual({ [join(dir, "unreadable")]: { kind: "file", mode: lstatSync(join(dir, "unreadable")).mode, size: 7 } });
  });

  test.each([
    ["KIWI_BWRAP naming a missing file", { KIWI_BWRAP: "/nonexistent/bwrap" }, 'KIWI_BWRAP="/nonexistent/bwrap" is not an executable'],
    ["no bwrap on PATH", { PATH: "/nonexistent" }, "bubblewrap (bwrap) is not installed"],
    ["a bwrap that cannot sandbox", { KIWI_BWRAP: "/bin/false" }, "/bin/false cannot create a sandbox here (exit 1); user namespaces may be disabled"],
  ])("reports %s as unusable", (_name, env, reason) => {
    const probe = probeSandbox({ ...process.env, ...env });
    expect([probe.usable, probe.reason]).toEqual([false, reason]);
  });
});

describe("the probe remembered across processes", () => {
  // A bwrap that logs each run, so a test can count how often the probe really ran.
  const countingBwrap = (body = 'exec "$REAL" "$@"') => {
    const dir = makeTemp("kiwi-probe-");
    const log = join(dir, "runs.log");
    const bwrap = join(dir, "bwrap");
    writeFileSync(bwrap, `#!/bin/bash\necho run >> ${JSON.stringify(log)}\nREAL=${JSON.stringify(Bun.which("bwrap"))}\n${body}\n`, { mode: 0o755 });
    return { env: { ...process.env, KIWI_BWRAP: bwrap }, cacheDir: join(dir, "cache"), bwrap, runs: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").length - 1 : 0) };
  };

  test("a later process reuses a working verdict without running bwrap", () => {
    const fx = countingBwrap();
    expect(probeSandbox(fx.env, fx.cacheDir).usable).toBe(true);
    resetSandboxProbe(); // as if a new kiwi process started
    const again = probeSandbox(fx.env, fx.cacheDir);
    expect([again.usable, again.bwrap, fx.runs()]).toEqual([true, fx.bwrap, 1]);
  });

  test("a changed bwrap file is probed again", () => {
    const fx = countingBwrap();
    probeSandbox(fx.env, fx.cacheDir);
    resetSandboxProbe();
    appendFileSync(fx.bwrap, "# reinstalled\n");
    probeSandbox(fx.env, fx.cacheDir);
    expect(fx.runs()).toBe(2);
  });

  test("a failed probe is not remembered: the next process asks again", () => {
    const fx = countingBwrap("exit 1");
    expect(probeSandbox(fx.env, fx.cacheDir).usable).toBe(false);
    resetSandboxProbe();
    expect(probeSandbox(fx.env, fx.cacheDir).usable).toBe(false);
    expect(fx.runs()).toBe(2);
  });

  test("a damaged memo is ignored and the probe runs", () => {
    const fx = countingBwrap();
    probeSandbox(fx.env, fx.cacheDir);
    resetSandboxProbe();
    for (const file of listFiles(join(fx.cacheDir, "exec", "probes"))) {
      chmodSync(file, 0o644);
      writeFileSync(file, "garbage\n{}");
    }
    expect(probeSandbox(fx.env, fx.cacheDir).usable).toBe(true);
    expect(fx.runs()).toBe(2);
  });
});

describe("modes without bubblewrap", () => {
  const noBwrap = { ...process.env, KIWI_BWRAP: "/nonexistent/bwrap" };

  test("auto warns once per process and still runs the tool, unsandboxed", async () => {
    const fx = sandboxFixture({ "hello.sh": "echo hello from $0\n" });
    const first = prepareSandbox(sandboxInput(fx, ["bash", "hello.sh"]), "auto", noBwrap);
    const second = prepareSandbox(sandboxInput(fx, ["bash", "hello.sh"]), "auto", noBwrap);
    expect(first.active).toBe(false);
    expect(first.warnings).toEqual([expect.stringMatching(/^no sandbox: KIWI_BWRAP="\/nonexistent\/bwrap" is not an executable; probe-tool runs with your full file system/)]);
    expect(second.warnings).toEqual([]);
    const r = await launch(first);
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, "hello from hello.sh\n", ""]);
  });

  test("an unsandboxed run can read the home folder: that is what the warning is about", async () => {
    const fx = sandboxFixture({ "read.sh": 'cat "$1"\n' });
    const r = await launch(prepareSandbox(sandboxInput(fx, ["bash", "read.sh", fx.keyPath]), "auto", noBwrap));
    expect(r.stdout).toContain(fx.keySecret);
  });

  test("require refuses with E_SANDBOX before anything runs", () => {
    const fx = sandboxFixture({});
    let error: unknown;
    try {
      prepareSandbox(sandboxInput(fx, ["bash", "-c", "true"]), "require", noBwrap);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KiwiError);
    expect((error as KiwiError).code).toBe("E_SANDBOX");
    expect((error as KiwiError).exitCode).toBe(11);
    expect((error as KiwiError).message).toBe('cannot run probe-tool: the sandbox is required but unavailable (KIWI_BWRAP="/nonexistent/bwrap" is not an executable)');
  });

  test("off neither probes nor warns", () => {
    const fx = sandboxFixture({});
    const plan = prepareSandbox(sandboxInput(fx, ["bash", "-c", "true"]), "off", noBwrap);
    expect([plan.active, plan.warnings, plan.argv.slice(-3)]).toEqual([false, [], [expect.stringMatching(/\/bash$/), "-c", "true"]]);
  });
});

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe("createWritableFolders", () => {
  test("creates a missing declared folder (mode 0700) and says so; an existing one is left alone", () => {
    const root = makeTemp("kiwi-write-");
    const cache = join(root, "home", ".npm");
    const out = join(root, "out");
    writeFileSync(join(root, "exists.json"), "{}");
    expect(createWritableFolders([cache, out, join(root, "exists.json")])).toEqual([
      `created ${cache}, declared in fs.write but missing (a missing folder cannot be mounted writable)`,
      `created ${out}, declared in fs.write but missing (a missing folder cannot be mounted writable)`,
    ]);
    expect([lstatSync(cache).isDirectory(), lstatSync(out).mode & 0o777]).toEqual([true, 0o700]);
  });

  test.each(["result.json", "report.csv", "archive.tar.gz"])("a missing path named like a file (%s) is not made a folder, which would fail the tool's write with EISDIR", (name) => {
    const root = makeTemp("kiwi-write-");
    const path = join(root, name);
    const warnings = createWritableFolders([path]);
    expect(existsSync(path)).toBe(false);
    expect(warnings).toEqual([expect.stringContaining(`${path}, declared in fs.write, does not exist and was not created: it is named like a file`)]);
  });
});


describe("resolveCommand", () => {
  test("finds the real path as realpath does, and each link met on the way at its real location with its text", () => {
    const root = realpathSync(makeTemp("kiwi-resolve-"));
    writeTree(root, {
      "store/pkg/bin/tool": { content: "#!/bin/sh\n", mode: 0o755 },
      "store/.bin/tool": { symlink: "../pkg/bin/tool" },
      "proj/node_modules": { symlink: `${root}/store` },
      "alias": { symlink: "proj/node_modules/.bin/../.bin/tool" },
      "loop": { symlink: "loop" },
    });
    const cases: [string, CommandLink[]][] = [
      [`${root}/store/pkg/bin/tool`, []],
      [
        `${root}/proj/node_modules/.bin/tool`,
        [
          { path: `${root}/proj/node_modules`, target: `${root}/store` },
          { path: `${root}/store/.bin/tool`, target: "../pkg/bin/tool" },
        ],
      ],
      [
        `${root}/alias`,
        [
          { path: `${root}/alias`, target: "proj/node_modules/.bin/../.bin/tool" },
          { path: `${root}/proj/node_modules`, target: `${root}/store` },
          { path: `${root}/store/.bin/tool`, target: "../pkg/bin/tool" },
        ],
      ],
    ];
    for (const [path, links] of cases) expect(resolveCommand(path)).toEqual({ realPath: realpathSync(path), links });
    expect(resolveCommand(`${root}/missing/tool`).realPath).toBeUndefined();
    expect(resolveCommand(`${root}/loop`).realPath).toBeUndefined();
    expect(resolveCommand(`${root}/store/pkg/bin/tool/x`).realPath).toBeUndefined();
  });
});
