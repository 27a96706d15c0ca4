// The generated scripts, loaded into the real shells and asked for completions.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "../../src/cli.ts";
import { renderBash } from "../../src/completion/bash.ts";
import { renderFish } from "../../src/completion/fish.ts";
import { resolveCompletionTree } from "../../src/completion/command-tree.ts";
import { renderZsh } from "../../src/completion/zsh.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";
import { needs } from "../helpers/needs.ts";

afterAll(cleanupTemps);

const dir = makeTemp("kiwi-completion-");
const scripts = { bash: join(dir, "kiwi.bash"), zsh: join(dir, "_kiwi"), fish: join(dir, "kiwi.fish") };
// CI installs bash, zsh and fish (.ci/run): there a missing shell is a failure, not a skip.
const have = (shell: string) => Bun.which(shell) !== null || process.env.CI === "true";
// A stand-in `kiwi` on PATH: records how the script asked for tool ids and answers with two.
const bin = join(dir, "bin");
const asked = join(dir, "asked");

beforeAll(async () => {
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "kiwi"), `#!/bin/sh\necho "$*" >> '${asked}'\nprintf 'alpha_tool\\nbeta_tool\\n'\n`, { mode: 0o755 });
  const tree = await resolveCompletionTree(root);
  writeFileSync(scripts.bash, renderBash(tree));
  writeFileSync(scripts.zsh, renderZsh(tree));
  writeFileSync(scripts.fish, renderFish(tree));
});

function shell(argv: string[], cwd = dir): string[] {
  writeFileSync(asked, "");
  const proc = Bun.spawnSync(argv, { cwd, env: { PATH: `${bin}:${process.env.PATH}`, HOME: dir, LANG: "C.UTF-8" }, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`${argv[0]} failed: ${proc.stderr.toString()}`);
  expect(proc.stderr.toString()).toBe("");
  return proc.stdout.toString().split("\n").filter(Boolean).sort();
}

/** The words bash would offer for `kiwi <words…>` with the cursor on the last word. */
function bash(...words: string[]): string[] {
  const array = ["kiwi", ...words].map((w) => `'${w}'`).join(" ");
  return shell(["bash", "--norc", "--noprofile", "-c", `source '${scripts.bash}'; COMP_WORDS=(${array}); COMP_CWORD=${words.length}; _kiwi; printf '%s\\n' "\${COMPREPLY[@]}"`]);
}

/** zsh with the completion builtins replaced by printers: what _kiwi would offer. */
function zsh(...words: string[]): string[] {
  const stubs = [
    "compdef() { :; }",
    '_describe() { local name=${@[-1]}; local entry; for entry in "${(@P)name}"; do print -r -- "${entry%%:*}"; done }',
    'compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@"; }',
    '_files() { print -r -- "<files $*>"; }',
    '_message() { print -r -- "<message>"; }',
  ].join("\n");
  const array = ["kiwi", ...words].map((w) => `'${w}'`).join(" ");
  return shell(["zsh", "-f", "-c", `${stubs}\nsource '${scripts.zsh}'\nwords=(${array}); CURRENT=${words.length + 1}; _kiwi`]);
}

/** fish's own completion engine over the script. */
function fish(line: string): string[] {
  return shell(["fish", "--no-config", "-c", `source '${scripts.fish}'; complete -C '${line}'`]).map((l) => l.split("\t")[0]!);
}

const askedFor = () => readFileSync(asked, "utf8");

const CASES = [
  ["tool ids for a tool argument", ["exec", "al"], ["alpha_tool"]],
  ["subcommands of hook", ["hook", ""], ["install", "uninstall"]],
  ["subcommands matching a prefix", ["hook", "un"], ["uninstall"]],
  ["flags of a nested command", ["hook", "install", "--f"], ["--force"]],
  ["the shells of completion", ["completion", ""], ["bash", "fish", "zsh"]],
  ["flags after a flag that takes a value", ["init", "--cwd", "somewhere", "--j"], ["--json"]],
] as const;

describe.skipIf(!needs(have("bash"), "bash is not installed"))("bash completion", () => {
  test.each(CASES)("offers %s", (_name, words, expected) => {
    expect(bash(...words)).toEqual([...expected]);
  });

  test("offers every top-level command", () => {
    expect(bash("")).toEqual(Object.keys(root.subCommands as object).sort());
  });

  test("asks kiwi for MCP servers only, in the --cwd typed so far", () => {
    expect(bash("--cwd", "/srv/p", "mcp", "diff", "")).toEqual(["alpha_tool", "beta_tool"]);
    expect(askedFor()).toBe("completion --tools --tool-type mcp_server --cwd /srv/p\n");
  });

  test("completes directories, not files, for --cwd", () => {
    mkdirSync(join(dir, "project-a"), { recursive: true });
    writeFileSync(join(dir, "project-notes"), "");
    expect(bash("init", "--cwd", "proj")).toEqual(["project-a"]);
  });
});

describe.skipIf(!needs(have("zsh"), "zsh is not installed"))("zsh completion", () => {
  test.each(CASES)("offers %s", (_name, words, expected) => {
    const out = zsh(...words);
    // _describe and compadd receive every candidate; zsh itself filters by the typed prefix.
    for (const word of expected) expect(out).toContain(word);
  });

  test("asks kiwi for MCP servers only, in the --cwd typed so far", () => {
    expect(zsh("mcp", "diff", "--cwd=/srv/p", "")).toEqual(["alpha_tool", "beta_tool"]);
    expect(askedFor()).toBe("completion --tools --tool-type mcp_server --cwd /srv/p\n");
  });

  test("asks for directories after --cwd", () => {
    expect(zsh("init", "--cwd", "")).toEqual(["<files -/>"]);
  });
});

describe.skipIf(!needs(have("fish"), "fish is not installed"))("fish completion", () => {
  test.each(CASES)("offers %s", (_name, words, expected) => {
    expect(fish(`kiwi ${words.join(" ")}`)).toEqual([...expected]);
  });

  test("asks kiwi for MCP servers only", () => {
    expect(fish("kiwi mcp diff ")).toEqual(["alpha_tool", "beta_tool"]);
    expect(askedFor()).toBe("completion --tools --tool-type mcp_server\n");
  });

  test("describes commands", () => {
    const proc = Bun.spawnSync(["fish", "--no-config", "-c", `source '${scripts.fish}'; complete -C 'kiwi hook '`], { env: { PATH: process.env.PATH, HOME: dir } });
    expect(proc.stdout.toString()).toContain("install\tWrite a git pre-commit hook");
  });
});
