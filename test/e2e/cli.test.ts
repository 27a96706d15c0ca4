import { afterAll, describe, expect, test } from "bun:test";
import pkg from "../../package.json" with { type: "json" };
import { runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps } from "../helpers/tree.ts";

afterAll(cleanupTemps);

describe("the kiwi binary", () => {
  test("prints its version on stdout", async () => {
    const r = await runKiwi(["--version"]);
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, `${pkg.version}\n`, ""]);
  });

  test("prints help without colour codes when not on a terminal", async () => {
    const r = await runKiwi(["--help"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("USAGE");
    expect(r.stdout).not.toContain("\x1b[");
    expect(r.stderr).toBe("");
  });

  test("rejects an unknown command with a coded error, a suggestion and exit 2", async () => {
    const r = await runKiwi(["chekc"]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain('error[E_USAGE]: unknown command "chekc"');
    expect(r.stderr).toContain("hint:");
  });

  test("gives one JSON document on stdout for an error under --json", async () => {
    const r = await runKiwi(["nope", "--json"]);
    expect(r.exitCode).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: "E_USAGE", exitCode: 2 } });
    expect(r.stderr).toContain("E_USAGE");
  });
});
