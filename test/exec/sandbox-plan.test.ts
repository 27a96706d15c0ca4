// The sandbox plan as data: argv, mounts, identity, limits and the account of what is enforced,
// built without running anything.
import { describe, expect, test } from "bun:test";
import { KiwiError } from "../../src/errors.ts";
import { renderEnforcement } from "../../src/exec/sandbox-describe.ts";
import { expandDeclaredPath } from "../../src/manifest/capability-path.ts";
import { runtimePrefixes, throughLinks } from "../../src/exec/sandbox-mounts.ts";
import { planSandbox, resolveSandboxMode, SANDBOX_UID_BASE, signalFromSandboxExit, type SandboxProbe, type SandboxRequest } from "../../src/exec/sandbox-plan.ts";
import type { Capability } from "../../src/manifest/model.ts";

const probe = (over: Partial<SandboxProbe> = {}): SandboxProbe => ({
  bwrap: "/usr/bin/bwrap",
  usable: true,
  prlimit: "/usr/bin/prlimit",
  setpriv: "/usr/bin/setpriv",
  uid: 1000,
  pid: 4242,
  ...over,
});

const request = (over: Partial<SandboxRequest> = {}): SandboxRequest => ({
  toolId: "data_processor",
  argv: ["/home/ann/.pyenv/shims/python3", "-B", "/home/ann/.cache/kiwi/run/abc/main.py"],
  commandRealPath: "/home/ann/.pyenv/shims/python3",
  runDirs: ["/home/ann/.cache/kiwi/run/abc"],
  cwd: "/home/ann/.cache/kiwi/run/abc",
  env: { PATH: "/usr/bin:/bin", HOME: "/home/ann", API_TOKEN: "s3cret" },
  capabilities: [],
  limits: {},
  home: "/home/ann",
  projectRoot: "/home/ann/proj",
  ...over,
});

const c = (name: string, targets: string[] = [], pointer = "/requires/0"): Capability =>
  name.startsWith("net.") ? { name, hosts: targets, pointer } : { name, paths: targets, pointer };

/** `--flag a b` triples in argv order, for reading mounts back out. */
function pairs(argv: string[], flag: string): string[] {
  return argv.flatMap((a, i) => (a === flag ? [argv[i + 2] ?? ""] : []));
}

describe("resolveSandboxMode", () => {
  test.each([
    ["nothing set", undefined, {}, "auto"],
    ["KIWI_SANDBOX=require", undefined, { KIWI_SANDBOX: "require" }, "require"],
    ["--sandbox=off over KIWI_SANDBOX=require", "off", { KIWI_SANDBOX: "require" }, "off"],
    ["--sandbox=REQUIRE", "REQUIRE", {}, "require"],
  ] as const)("%s gives %p", (_name, flag, env, want) => {
    expect(resolveSandboxMode(flag, env)).toBe(want);
  });

  test("rejects an unknown mode naming where it came from", () => {
    expect(() => resolveSandboxMode(undefined, { KIWI_SANDBOX: "strict" })).toThrow('KIWI_SANDBOX must be one of auto, require, off (got "strict")');
  });
});

describe("planSandbox", () => {
  test("isolates every namespace and shares the network only when net.outbound is declared", () => {
    const closed = planSandbox(request(), probe(), "auto");
    expect(closed.argv.slice(0, 5)).toEqual(["/usr/bin/bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--hostname"]);
    expect(closed.argv).not.toContain("--share-net");
    expect(pairs(closed.argv, "--ro-bind-try")).not.toContain("/etc/resolv.conf");
    const open = planSandbox(request({ capabilities: [c("net.outbound")] }), probe(), "auto");
    expect(open.argv).toContain("--share-net");
    expect(pairs(open.argv, "--ro-bind-try")).toContain("/etc/resolv.conf");
  });

  test("mounts the run directory and runtime read-only, declared paths as declared, and nothing of home", () => {
    const plan = planSandbox(request({ capabilities: [c("fs.read", ["~/.ssh", "data"]), c("fs.write", ["out/", "/srv/shared"], "/requires/1")] }), probe(), "auto");
    expect(pairs(plan.argv, "--ro-bind")).toEqual(["/home/ann/.cache/kiwi/run/abc"]);
    expect(pairs(plan.argv, "--ro-bind-try")).toEqual(expect.arrayContaining(["/usr", "/home/ann/.pyenv", "/home/ann/.ssh", "/home/ann/proj/data"]));
    expect(pairs(plan.argv, "--bind-try")).toEqual(["/srv/shared", "/home/ann/proj/out"]);
    expect(plan.argv.some((a) => a === "/home/ann" || a === "/home/ann/proj")).toBe(false);
  });

  test("system paths as this machine has them: a link into /usr is a link, a small file is copied in, the rest bound, the absent left out", () => {
    const systemPaths: SandboxProbe["systemPaths"] = {
      "/usr": { kind: "other" },
      "/bin": { kind: "link", realPath: "/usr/bin" },
      "/lib64": { kind: "link", realPath: "/usr/lib64" },
      "/lib32": { kind: "link", realPath: "/opt/lib32" },
      "/etc/localtime": { kind: "link", realPath: "/usr/share/zoneinfo/Etc/UTC" },
      "/etc/passwd": { kind: "file", mode: 0o100644, size: 1309 },
      "/etc/hosts": { kind: "file", mode: 0o100600, size: 200 },
      "/etc/group": { kind: "file", mode: 0o100644, size: 2 * 1024 * 1024 },
      "/etc/alternatives": { kind: "other" },
    };
    const plan = planSandbox(request(), probe({ systemPaths }), "auto");
    expect(pairs(plan.argv, "--symlink")).toEqual(["/bin", "/lib64", "/etc/localtime"]);
    expect(plan.argv.join(" ")).toContain("--symlink /usr/bin /bin");
    // Copies: each file's descriptor (3, 4, … in plan.files' order), with the host's permission bits.
    expect(plan.files).toEqual(["/etc/hosts", "/etc/passwd"]);
    expect(plan.argv.join(" ")).toContain("--perms 0600 --file 3 /etc/hosts");
    expect(plan.argv.join(" ")).toContain("--perms 0644 --file 4 /etc/passwd");
    // Bound: a folder, a link out of /usr, a file too large to copy. Absent ones are not named at all.
    expect(pairs(plan.argv, "--ro-bind-try").filter((p) => p.startsWith("/usr") || p.startsWith("/etc") || p.startsWith("/lib"))).toEqual(["/lib32", "/usr", "/etc/alternatives", "/etc/group"]);
    for (const absent of ["/sbin", "/lib", "/libx32", "/etc/nsswitch.conf"]) expect(plan.argv).not.toContain(absent);
    // Unknown facts: every system path is bound, if present.
    const unknown = planSandbox(request(), probe(), "auto");
    expect([unknown.files, pairs(unknown.argv, "--symlink")]).toEqual([[], []]);
    expect(pairs(unknown.argv, "--ro-bind-try")).toEqual(expect.arrayContaining(["/bin", "/lib64", "/etc/passwd", "/etc/localtime"]));
    // A declared path wins over kiwi's own: declared, /bin and /etc/passwd are bound as declared.
    const declared = planSandbox(request({ capabilities: [c("fs.read", ["/bin", "/etc/passwd"])] }), probe({ systemPaths }), "auto");
    expect([pairs(declared.argv, "--symlink"), declared.files]).toEqual([["/lib64", "/etc/localtime"], ["/etc/hosts"]]);
    expect(declared.argv.join(" ")).toContain("--perms 0600 --file 3 /etc/hosts");
    expect(pairs(declared.argv, "--ro-bind-try")).toEqual(expect.arrayContaining(["/bin", "/etc/passwd"]));
  });

  test("a declared folder that holds system paths (/etc) shows them as the host has them: kiwi copies and links nothing into it", () => {
    // bubblewrap can neither copy /etc/passwd into a read-only /etc nor make /bin over one.
    const systemPaths: SandboxProbe["systemPaths"] = {
      "/usr": { kind: "other" },
      "/bin": { kind: "link", realPath: "/usr/bin" },
      "/etc/localtime": { kind: "link", realPath: "/usr/share/zoneinfo/Etc/UTC" },
      "/etc/passwd": { kind: "file", mode: 0o100644, size: 1309 },
      "/etc/ssl": { kind: "other" },
    };
    for (const kind of ["fs.read", "fs.write"]) {
      const plan = planSandbox(request({ capabilities: [c(kind, ["/etc"]), c("net.outbound")] }), probe({ systemPaths }), "auto");
      expect([plan.files, pairs(plan.argv, "--symlink")]).toEqual([[], ["/bin"]]);
      expect(plan.argv.join(" ")).toContain(`--${kind === "fs.read" ? "ro-bind-try" : "bind-try"} /etc /etc`);
      expect(plan.argv.filter((a) => a.startsWith("/etc/"))).toEqual([]);
    }
  });

  test.each([
    ["/", "it is the whole file system"],
    ["/proc/self", "the sandbox has its own /proc"],
    ["/sys", "the sandbox has its own /sys"],
    ["/dev/sda", "the sandbox has its own /dev"],
  ])("a declared %p cannot be granted: E_SANDBOX naming the declaration (%s)", (path, why) => {
    for (const kind of ["fs.read", "fs.write"]) {
      expect(() => planSandbox(request({ capabilities: [c(kind, [path], "/requires/1")] }), probe(), "auto")).toThrow(
        expect.objectContaining({ code: "E_SANDBOX", message: `${kind} path "${path}" (/requires/1) cannot be granted: ${why}` }),
      );
    }
  });

  test("network paths get the same treatment when the network is declared", () => {
    const plan = planSandbox(request({ capabilities: [c("net.outbound")] }), probe({ systemPaths: { "/etc/resolv.conf": { kind: "file", mode: 0o100644, size: 80 }, "/etc/ssl": { kind: "other" } } }), "auto");
    expect(plan.files).toEqual(["/etc/resolv.conf"]);
    expect(pairs(plan.argv, "--ro-bind-try")).toContain("/etc/ssl");
    expect(plan.argv).not.toContain("/etc/gai.conf");
  });

  test("mounts a folder before anything inside it, so /tmp's tmpfs cannot hide a declared path", () => {
    const plan = planSandbox(request({ capabilities: [c("fs.read", ["/tmp/data"])] }), probe(), "auto");
    const tmpfs = plan.argv.indexOf("/tmp");
    const data = plan.argv.indexOf("/tmp/data");
    expect(tmpfs).toBeGreaterThan(0);
    expect(data).toBeGreaterThan(tmpfs);
  });

  test("a writable declaration of a parent does not make the run directory writable", () => {
    const plan = planSandbox(request({ capabilities: [c("fs.write", ["~"])] }), probe(), "auto");
    expect(plan.argv.indexOf("/home/ann/.cache/kiwi/run/abc")).toBeGreaterThan(plan.argv.indexOf("/home/ann"));
    expect(pairs(plan.argv, "--ro-bind")).toEqual(["/home/ann/.cache/kiwi/run/abc"]);
  });

  test.each(["/proc", "/proc/1/root", "/dev", "/sys/kernel"])("refuses to grant the kernel path %s", (path) => {
    expect(() => planSandbox(request({ capabilities: [c("fs.read", [path])] }), probe(), "auto")).toThrow(KiwiError);
  });

  test("under root the tool becomes an unprivileged per-run uid, without a user namespace", () => {
    const plan = planSandbox(request(), probe({ uid: 0 }), "auto");
    const uid = SANDBOX_UID_BASE + 4242;
    expect(plan.uid).toBe(uid);
    expect(plan.argv).not.toContain("--unshare-all");
    expect(plan.argv).toEqual(expect.arrayContaining(["--unshare-pid", "--unshare-net", "/usr/bin/setpriv", `--reuid=${uid}`, "--bounding-set=-all,+dac_override"]));
  });

  test("applies limits with prlimit inside the sandbox, defaults where nothing is declared", () => {
    const plan = planSandbox(request({ limits: { memoryMb: 256, processes: 8 } }), probe(), "auto");
    const at = plan.argv.indexOf("/usr/bin/prlimit");
    expect(at).toBeGreaterThan(plan.argv.indexOf("--"));
    expect(plan.argv.slice(at, at + 6)).toEqual(["/usr/bin/prlimit", `--data=${256 * 1024 * 1024}`, "--cpu=300:301", "--nofile=1024", "--nproc=8", "--"]);
    expect(plan.argv.slice(-3)).toEqual([...request().argv]);
    expect(plan.limits.memoryMb).toEqual({ value: 256, source: "declared" });
    expect(plan.limits.cpuSeconds).toEqual({ value: 300, source: "default" });
  });

  test("keeps secret values out of argv: the environment is passed as the process environment", () => {
    const plan = planSandbox(request(), probe(), "auto");
    expect(plan.argv.join(" ")).not.toContain("s3cret");
    expect(plan.env.API_TOKEN).toBe("s3cret");
  });

  test("require refuses without bubblewrap, with E_SANDBOX and a hint", () => {
    try {
      planSandbox(request(), probe({ bwrap: null, usable: false, reason: "bubblewrap (bwrap) is not installed" }), "require");
      throw new Error("expected a refusal");
    } catch (error) {
      expect(error).toBeInstanceOf(KiwiError);
      expect((error as KiwiError).code).toBe("E_SANDBOX");
      expect((error as KiwiError).message).toContain("bubblewrap (bwrap) is not installed");
      expect((error as KiwiError).hint).toContain("apt-get install bubblewrap");
    }
  });

  test("auto runs unsandboxed without bubblewrap, warns, and says what is not enforced", () => {
    const plan = planSandbox(request(), probe({ bwrap: null, usable: false, reason: "bubblewrap (bwrap) is not installed" }), "auto");
    expect(plan.active).toBe(false);
    expect(plan.argv[0]).toBe("/usr/bin/prlimit");
    expect(plan.argv).not.toContain("--nproc=128");
    expect(plan.warnings).toEqual([expect.stringContaining("no sandbox: bubblewrap (bwrap) is not installed")]);
    const off = plan.enforcement.filter((e) => !e.enforced).map((e) => e.area);
    expect(off).toEqual(["sandbox", "filesystem", "network", "processes", "commands"]);
  });

  test("off is explicit and probes nothing", () => {
    const plan = planSandbox(request(), probe(), "off");
    expect([plan.active, plan.warnings]).toEqual([false, []]);
    expect(plan.enforcement[0]).toEqual({ area: "sandbox", enforced: false, detail: "off (--sandbox=off or KIWI_SANDBOX=off)" });
  });
});

describe("the account of what is enforced", () => {
  test("says plainly that declared hosts are not filtered for a subprocess", () => {
    const plan = planSandbox(request({ capabilities: [c("net.outbound", ["api.example.com"], "/requires/2")] }), probe(), "auto");
    const text = renderEnforcement(plan.enforcement);
    expect(text).toContain("not enforced:\n");
    expect(text).toContain("  network: allowed (host filtering not enforced): api.example.com declared at /requires/2, but any host can be reached");
  });

  test("lists each area once, enforced first", () => {
    const plan = planSandbox(request({ limits: { memoryMb: 512, fuel: 1000 } }), probe(), "auto");
    expect(renderEnforcement(plan.enforcement)).toMatchInlineSnapshot(`
"enforced:
  sandbox: bubblewrap /usr/bin/bwrap (--sandbox=auto)
  filesystem: read-only run directory /home/ann/.cache/kiwi/run/abc; read-only runtime /home/ann/.pyenv; read-only system paths (/usr, /bin, /lib*, part of /etc); private /tmp (512 MiB), /dev/shm (512 MiB); nothing else is visible (home, other projects)
  network: none (own network namespace, loopback only)
  environment: only 3 variables: API_TOKEN, HOME, PATH
  identity: your uid 1000 in a user namespace, no capabilities
  memory: 512 MiB of private writable memory (RLIMIT_DATA) (declared)
  cpu: 300 s of CPU time (RLIMIT_CPU) (kiwi default)
  open files: 1024 descriptors (RLIMIT_NOFILE) (kiwi default)
  processes: 128 processes and threads (kiwi default), counted for this sandbox alone (its own user namespace; private pid namespace)
  output: 16 MiB of stdout and stderr (kiwi default)
  timeout: 60000 ms wall clock, then the whole sandbox is killed (kiwi default)
not enforced:
  commands: which programs the tool starts is not checked (proc.spawn, shell.execute): anything visible can run, within the process limit
  fuel: fuel 1000 is for WebAssembly runtimes; a subprocess is bounded by its CPU time instead"
`);
  });
});

describe("paths", () => {
  test.each([
    ["~", "/home/ann"],
    ["~/.ssh", "/home/ann/.ssh"],
    ["data/", "/home/ann/proj/data"],
    ["./a/../b", "/home/ann/proj/b"],
    ["/srv//x/", "/srv/x"],
  ])("declared path %p is %p", (raw, want) => {
    expect(expandDeclaredPath(raw, "/home/ann", "/home/ann/proj")).toBe(want);
  });

  test.each([
    [["/root/.pyenv/shims/python3"], ["/root/.pyenv"]],
    [["/usr/bin/python3"], []],
    [["/proj2/.venv/bin/python", "/usr/bin/python3.11"], ["/proj2/.venv"]],
    [["/work/p/node_modules/.bin/bun", "/work/p/node_modules/bun/bin/bun.exe"], ["/work/p/node_modules/.bin", "/work/p/node_modules/bun"]],
    [["/home/ann/bin/tool"], ["/home/ann/bin"]],
    [["/home/ann/.local/bin/black", "/home/ann/.local/pipx/venvs/black/bin/black"], ["/home/ann/.local/bin", "/home/ann/.local/pipx/venvs/black"]],
    [["/home/ann/.cargo/bin/rg"], ["/home/ann/.cargo/bin"]],
    [["/home/ann/proj/tools/run"], ["/home/ann/proj/tools"]],
    [["/opt/x"], ["/opt/x"]],
    [["/nix/store/abc-python3/bin/python3"], ["/nix/store"]],
  ])("the runtime of %p is mounted as %p", ([cmd, real], want) => {
    expect(runtimePrefixes({ argv: [cmd!], commandRealPath: real, home: "/home/ann", projectRoot: "/home/ann/proj" })).toEqual(want);
  });
});

describe("a command reached through symbolic links", () => {
  // /w/h/node_modules -> /w/m/node_modules (a worktree's), whose .bin/bun -> ../bun/bin/bun.exe.
  const worktree = [
    { path: "/w/h/node_modules", target: "/w/m/node_modules" },
    { path: "/w/m/node_modules/.bin/bun", target: "../bun/bin/bun.exe" },
  ];

  test.each([
    ["/w/h/node_modules/.bin/bun", "/w/m/node_modules/bun/bin/bun.exe"],
    ["/w/h/node_modules/.bin", "/w/m/node_modules/.bin"],
    ["/w/h/node_modules", "/w/m/node_modules"],
    ["/w/h", "/w/h"],
    ["/w/h/node_modules/../x", "/w/m/x"],
  ])("%p resolves to %p, as the kernel would", (path, want) => {
    expect(throughLinks(path, worktree)).toBe(want);
  });

  test("a relative link resolves from its own folder; a loop stops", () => {
    expect(throughLinks("/a/b/c", [{ path: "/a/b", target: "../d/e" }])).toBe("/d/e/c");
    expect(typeof throughLinks("/a/x", [{ path: "/a/x", target: "/a/x" }])).toBe("string");
  });

  test.each([
    // The runtime is mounted at its real paths: the .bin folder and the package.
    ["/w/h/node_modules/.bin/bun", "/w/m/node_modules/bun/bin/bun.exe", worktree, ["/w/m/node_modules/.bin", "/w/m/node_modules/bun"]],
    // A home reached through /home -> /data/home: ~/.local stays too broad under its real path too.
    ["/home/ann/.local/bin/black", "/data/home/ann/.local/pipx/venvs/black/bin/black", [{ path: "/home", target: "/data/home" }, { path: "/data/home/ann/.local/bin/black", target: "../pipx/venvs/black/bin/black" }], ["/data/home/ann/.local/bin", "/data/home/ann/.local/pipx/venvs/black"]],
    // A prefix whose real path is the home folder is too broad: its bin folder alone.
    ["/opt/tools/bin/x", "/home/ann/bin/x", [{ path: "/opt/tools", target: "/home/ann" }], ["/home/ann/bin"]],
  ])("the runtime of %p (real %p) is mounted as %p", (cmd, real, links, want) => {
    expect(runtimePrefixes({ argv: [cmd], commandRealPath: real, commandLinks: links, home: "/home/ann", projectRoot: "/home/ann/proj" })).toEqual(want);
  });

  test("the sandbox makes the links the command goes through, except one in a folder bound already or a system path", () => {
    const plan = planSandbox(
      request({
        argv: ["/w/h/node_modules/.bin/bun", "run.ts"],
        commandRealPath: "/w/m/node_modules/bun/bin/bun.exe",
        commandLinks: [...worktree, { path: "/usr/local/bin/x", target: "y" }],
      }),
      probe(),
      "require",
    );
    const runtime = plan.mounts.filter((m) => m.why.startsWith("runtime")).map((m) => [m.kind, m.path, m.target ?? ""]);
    expect(runtime).toEqual([
      ["symlink", "/w/h/node_modules", "/w/m/node_modules"],
      ["ro", "/w/m/node_modules/.bin", ""],
      ["ro", "/w/m/node_modules/bun", ""],
    ]);
    expect(plan.enforcement.find((e) => e.area === "filesystem")?.detail).toContain("read-only runtime /w/m/node_modules/.bin, /w/m/node_modules/bun (reached through the link /w/h/node_modules -> /w/m/node_modules)");
    // Made before anything is mounted through it.
    expect(plan.argv.indexOf("/w/h/node_modules")).toBeLessThan(plan.argv.indexOf("/w/m/node_modules/.bin"));
    // A mount whose path goes through a link made there is placed where the link leads (bubblewrap
    // sets mounts up before the sandbox's root is its root); its host path is the one declared.
    const home = planSandbox(
      request({
        argv: ["/home/ann/tools/bin/run"],
        commandRealPath: "/data/home/ann/tools/bin/run",
        commandLinks: [{ path: "/home", target: "/data/home" }],
        capabilities: [c("fs.write", ["~/out"])],
      }),
      probe(),
      "require",
    );
    expect(home.mounts.filter((m) => m.path.startsWith("/home") || m.path.startsWith("/data")).map((m) => [m.kind, m.path, m.source ?? m.target ?? ""])).toEqual([
      ["symlink", "/home", "/data/home"],
      ["rw", "/data/home/ann/out", "/home/ann/out"],
      ["ro", "/data/home/ann/tools", ""],
      ["ro", "/data/home/ann/.cache/kiwi/run/abc", "/home/ann/.cache/kiwi/run/abc"],
    ]);
    expect(pairs(home.argv, "--bind-try")).toEqual(["/data/home/ann/out"]);
    expect(home.enforcement.find((e) => e.area === "filesystem")?.detail).toContain("writable /home/ann/out (declared fs.write");
    // Under a declared folder that holds it, the link is there as the host has it.
    const declared = planSandbox(request({ argv: ["/w/h/node_modules/.bin/bun"], commandRealPath: "/w/m/node_modules/bun/bin/bun.exe", commandLinks: worktree, capabilities: [c("fs.read", ["/w/h"])] }), probe(), "require");
    expect(declared.mounts.some((m) => m.kind === "symlink" && m.path === "/w/h/node_modules")).toBe(false);
  });
});

describe("signalFromSandboxExit", () => {
  test.each([
    [137, "SIGKILL"],
    [152, "SIGXCPU"],
    [143, "SIGTERM"],
    [0, null],
    [1, null],
    [128, null],
    [255, null],
  ])("exit %p means %p", (code, want) => {
    expect(signalFromSandboxExit(code)).toBe(want);
  });
});
