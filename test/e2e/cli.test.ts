import { afterAll, describe, expect, test } from "bun:test";
import pkg from "../../package.json" with { type: "json" };
import { KIWI_BIN, hermeticEnv, runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";

afterAll(cleanupTemps);

describe("the kiwi binary", () => {
  test("prints its version on stdout", async () => {
    const r = await runKiwi(["--version"]);
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, `${pkg.version}\n`, ""]);
  });

  test("a mistyped --version gets a suggestion", async () => {
    expect(await runKiwi(["--verison"])).toEqual({ exitCode: 2, stdout: "", stderr: 'error[E_USAGE]: unknown flag "--verison" for "kiwi"\n  hint: did you mean "--version"?\n' });
  });

  test("kiwi help <command> is kiwi <command> --help", async () => {
    const [a, b] = await Promise.all([runKiwi(["help", "mcp", "pin"]), runKiwi(["mcp", "pin", "--help"])]);
    expect(a).toEqual(b);
    expect(a.stdout).toContain("USAGE kiwi mcp pin [OPTIONS] [SERVERS]");
  });

  test("prints help without colour codes when not on a terminal", async () => {
    const r = await runKiwi(["--help"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("USAGE");
    expect(r.stdout).not.toContain("\x1b[");
    expect(r.stderr).toBe("");
  });

  test("a command missing its argument points at that command's --help", async () => {
    const root = makeProject({ ".ai/tools/.keep": "" });
    expect(await runKiwi(["show"], { cwd: root })).toEqual({ exitCode: 2, stdout: "", stderr: 'error[E_USAGE]: Missing required positional argument: TOOL\n  hint: run "kiwi show --help" for its arguments and flags\n' });
    expect((await runKiwi(["mcp", "approve"], { cwd: root })).stderr).toContain('hint: run "kiwi mcp approve --help" for its arguments and flags');
  });

  test.each([
    [["key", "generate", "k1.key", "k2.key"], "kiwi key generate takes one argument (FILE); \"k2.key\" would be ignored"],
    [["outdated", "x"], 'kiwi outdated takes no arguments; "x" would be ignored'],
    [["lock", "a"], 'kiwi lock takes no arguments; "a" would be ignored'],
    [["show", "a", "b"], 'kiwi show takes one argument (TOOL); "b" would be ignored'],
    [["mcp", "skill", "s", "skill://x/SKILL.md", "more"], 'kiwi mcp skill takes 2 arguments (SERVER, URI); "more" would be ignored'],
    [["cache", "clean", "--", "x"], 'kiwi cache clean takes no arguments; "x" would be ignored'],
  ])("%p refuses the words it would drop, and does nothing", async (args, message) => {
    const root = makeProject({ ".ai/tools/a.yaml": "tool_id: a\ntool_type: knowledge\nversion: 1.0.0\n" });
    const r = await runKiwi(args, { cwd: root });
    const command = args.slice(0, args[0] === "key" || args[0] === "mcp" || args[0] === "cache" ? 2 : 1).join(" ");
    expect(r).toEqual({ exitCode: 2, stdout: "", stderr: `error[E_USAGE]: ${message}, so nothing was done\n  hint: run "kiwi ${command} --help" for its arguments and flags\n` });
    // Nothing was written: no key, no lockfile.
    expect(await Bun.file(`${root}/k1.key`).exists()).toBe(false);
    expect(await Bun.file(`${root}/tool.lock.json`).exists()).toBe(false);
  });

  test("a command that takes many words still takes them", async () => {
    const root = makeProject({ ".ai/tools/a.yaml": "tool_id: a\ntool_type: knowledge\nversion: 1.0.0\n", ".ai/tools/b.yaml": "tool_id: b\ntool_type: knowledge\nversion: 1.0.0\n" });
    const r = await runKiwi(["check", "a", "b", "--json"], { cwd: root });
    expect([r.exitCode, r.stderr]).toEqual([1, ""]);
    expect(JSON.parse(r.stdout)).toMatchObject({ tools_checked: 2 });
  });

  test.each([[["lock", "--cwd"]], [["check", "--cwd", ""]], [["list", "--cwd="]]])("%p is a usage error, not the folder kiwi runs in (an unset variable after --cwd)", async (args) => {
    const root = makeProject({ ".ai/tools/a.yaml": "tool_id: a\ntool_type: knowledge\nversion: 1.0.0\n" });
    const r = await runKiwi(args, { cwd: root });
    expect(r).toEqual({ exitCode: 2, stdout: "", stderr: "error[E_USAGE]: --cwd needs a folder\n  hint: pass --cwd <dir>, or leave --cwd out to use the folder kiwi runs in\n" });
    // Nothing was written where kiwi ran.
    expect(await Bun.file(`${root}/tool.lock.json`).exists()).toBe(false);
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

  test("delivers a large --json document whole to a reader that starts late", async () => {
    const files: Record<string, string> = {};
    // Each tool has a misspelt field, so check --json reports one warning per tool.
    for (let i = 0; i < 400; i++) {
      files[`.ai/tools/t${i}.yaml`] = `tool_id: t${i}\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\ndescriptoin: typo\nconfig:\n  url: https://example.com/${i}\n`;
    }
    const root = makeProject(files);
    // Before the fix, everything past the pipe's 64 KiB buffer was lost when kiwi exited.
    const proc = Bun.spawn(["sh", "-c", `"${KIWI_BIN}" check --json | (sleep 1; cat)`], { cwd: root, env: hermeticEnv(), stdout: "pipe", stderr: "pipe" });
    const [stdout, exitCode] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(exitCode).toBe(0);
    expect(stdout.length).toBeGreaterThan(65_536);
    expect(JSON.parse(stdout).findings).toHaveLength(400);
  });
});
