// The probe and the modes on this machine: a working bubblewrap is found and used; a missing or
// broken one (simulated with KIWI_BWRAP) makes auto warn once and require refuse.
import { afterEach, describe, expect, test } from "bun:test";
import { KiwiError } from "../../src/errors.ts";
import { probeSandbox, prepareSandbox, resetSandboxProbe } from "../../src/exec/sandbox-io.ts";
import { launch, sandboxFixture, sandboxInput } from "../helpers/sandbox.ts";
import { cleanupTemps } from "../helpers/tree.ts";

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

  test.each([
    ["KIWI_BWRAP naming a missing file", { KIWI_BWRAP: "/nonexistent/bwrap" }, 'KIWI_BWRAP="/nonexistent/bwrap" is not an executable'],
    ["no bwrap on PATH", { PATH: "/nonexistent" }, "bubblewrap (bwrap) is not installed"],
    ["a bwrap that cannot sandbox", { KIWI_BWRAP: "/bin/false" }, "/bin/false cannot create a sandbox here (exit 1); user namespaces may be disabled"],
  ])("reports %s as unusable", (_name, env, reason) => {
    const probe = probeSandbox({ ...process.env, ...env });
    expect([probe.usable, probe.reason]).toEqual([false, reason]);
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
