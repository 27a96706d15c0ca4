// `--help` for every command in the COMMANDS table (and every subcommand), snapshot-tested from the
// compiled binary: each command and flag described, with examples, and no colour codes unless a
// terminal asks for them and NO_COLOR does not forbid them.
import { afterAll, describe, expect, test } from "bun:test";
import { COMMANDS, root } from "../../src/cli.ts";
import { COMMAND_SUMMARIES } from "../../src/commands/_summaries.ts";
import { EXAMPLES } from "../../src/commands/_examples.ts";
import { flattenTree, resolveCompletionTree } from "../../src/completion/command-tree.ts";
import { KIWI_BIN, REPO_ROOT, hermeticEnv, runKiwi } from "../helpers/kiwi.ts";
import { needs } from "../helpers/needs.ts";
import { cleanupTemps } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const tree = await resolveCompletionTree(root);
const paths = flattenTree(tree).map((n) => n.path);

describe("kiwi --help", () => {
  test.each(paths.map((p) => [p.join(" ") || "(kiwi)", p] as const))("%s", async (_name, path) => {
    const r = await runKiwi([...path, "--help"]);
    expect([r.exitCode, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).not.toContain("\x1b[");
    expect(r.stdout).toContain("USAGE");
    expect(r.stdout).toContain("EXAMPLES");
    expect(r.stdout).toMatchSnapshot();
  });

  test("describes every flag and every subcommand", () => {
    const bare = flattenTree(tree).flatMap((n) => [
      ...n.flags.filter((f) => !f.description).map((f) => `${n.path.join(" ")} --${f.name}`),
      ...n.children.filter((c) => !c.description).map((c) => c.path.join(" ")),
    ]);
    expect(bare).toEqual([]);
  });

  test("the root help's summary table says what each command's own description says", async () => {
    const described = Object.fromEntries(await Promise.all(Object.entries(COMMANDS).map(async ([name, load]) => [name, ((await load()).meta as { description?: string } | undefined)?.description] as const)));
    expect(COMMAND_SUMMARIES).toEqual(described as Record<string, string>);
  });

  test("the root help baked into the binary is what the CLI renders, for kiwi, kiwi help, --help and -h", async () => {
    const source = Bun.spawnSync([process.execPath, "src/cli.ts", "--help"], { cwd: REPO_ROOT, env: hermeticEnv({ NO_COLOR: "1" }), stdout: "pipe", stderr: "pipe" });
    expect(source.exitCode).toBe(0);
    const fromSource = source.stdout.toString();
    expect(fromSource).toContain("USAGE");
    for (const args of [[], ["help"], ["--help"], ["-h"]]) {
      const r = await runKiwi(args);
      expect({ args, ...r }).toEqual({ args, exitCode: 0, stdout: fromSource, stderr: "" });
    }
  });

  test("-h is --help", async () => {
    const [long, short] = await Promise.all([runKiwi(["hook", "install", "--help"]), runKiwi(["hook", "install", "-h"])]);
    expect(short).toEqual(long);
  });

  test("appends the examples table to the command's help", async () => {
    const r = await runKiwi(["init", "--help"]);
    for (const [description, command] of EXAMPLES.init!) expect(r.stdout).toContain(`  # ${description}\n  ${command}\n`);
  });
});

// script(1) gives kiwi a real terminal, so colour is allowed unless NO_COLOR says otherwise.
// CI installs script(1) (.ci/run): there its absence is a failure, not a skip.
const script = Bun.which("script") ?? (process.env.CI === "true" ? "script" : null);
describe.skipIf(!needs(script !== null, "script(1) (bsdutils) is not installed"))("help on a terminal", () => {
  const onTty = (env: Record<string, string>) => {
    const proc = Bun.spawnSync([script!, "-qec", `${KIWI_BIN} hook --help`, "/dev/null"], { env, stdout: "pipe", stderr: "pipe" });
    return { exitCode: proc.exitCode, out: proc.stdout.toString() };
  };

  test("is coloured", () => {
    const { NO_COLOR: _drop, ...env } = hermeticEnv({ TERM: "xterm-256color" });
    const r = onTty(env);
    expect(r.exitCode).toBe(0);
    expect(r.out).toContain("\x1b[");
  });

  test("has no colour with NO_COLOR", () => {
    const r = onTty(hermeticEnv({ TERM: "xterm-256color", NO_COLOR: "1" }));
    expect(r.exitCode).toBe(0);
    expect(r.out).toContain("EXAMPLES");
    expect(r.out).not.toContain("\x1b[");
  });
});
