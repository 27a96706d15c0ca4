// `kiwi exec` through the compiled binary: verified chains, every parameter source, the plan,
// refusals with their exit codes, faults of running tools, injection attempts and HTTP tools
// against a real server on 127.0.0.1. The sandbox is off here (its own tests cover it) unless a
// test says otherwise.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";
import { execIntoHead, kiwiIn } from "./lock-helpers.ts";
import { KIWI_BIN } from "../helpers/kiwi.ts";

afterAll(cleanupTemps);

const servers: ReturnType<typeof Bun.serve>[] = [];
afterAll(() => servers.forEach((s) => s.stop(true)));

const SUM = {
  ".ai/tools/summer/tool.yaml": [
    "tool_id: summer",
    "tool_type: script",
    "version: 1.0.0",
    "executor: python_runtime",
    "description: Sums numbers read as JSON on stdin",
    "config:",
    "  entrypoint: main.py",
    '  args: ["--label", "{label}"]',
    "parameters:",
    "  - { name: numbers, type: array, required: true }",
    "  - { name: label, type: string, default: total, maxLength: 10 }",
    "  - { name: priority, type: integer, minimum: 1, maximum: 100 }",
    "  - { name: email, type: string, format: email }",
    "",
  ].join("\n"),
  ".ai/tools/summer/main.py": "import json, sys\np = json.load(sys.stdin)\nprint(f\"{sys.argv[2]}={sum(p['numbers'])}\")\n",
};

const ECHO = {
  ".ai/tools/echo_args/tool.yaml":
    'tool_id: echo_args\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\n  args: ["{text}"]\nparameters:\n  - { name: text, type: string, required: true }\n',
  ".ai/tools/echo_args/main.sh": 'printf "%s\\n" "$#" "$1"\n',
};

const FAULTS = {
  ".ai/tools/exits.sh": "#!/bin/bash\n# ---\n# tool_id: exits\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\necho partial; exit 42\n",
  ".ai/tools/segv.sh": "#!/bin/bash\n# ---\n# tool_id: segv\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\nkill -SEGV $$\n",
  ".ai/tools/hangs.sh": "#!/bin/bash\n# ---\n# tool_id: hangs\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# limits:\n#   timeout_ms: 500\n# ---\ntrap '' TERM\nsleep 30 &\nwait\nwait\n",
  ".ai/tools/floods.sh": "#!/bin/bash\n# ---\n# tool_id: floods\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# limits:\n#   output_bytes: 65536\n# ---\nyes flood\n",
};

/** A locked project with the sandbox off. */
async function lockedProject(files: Record<string, string | { content: string; mode?: number }>, extra: Record<string, string> = {}) {
  const root = makeProject(files);
  const k = kiwiIn(root, { KIWI_SANDBOX: "off", ...extra });
  const lock = await k.run(["lock"]);
  expect(lock.exitCode).toBe(0);
  return { root, k };
}

/**
 * A project locked past the racy margin: inputs written within 2 s are never remembered, so only
 * there does a call record its launch and the next one replay it.
 */
async function settledProject(files: Record<string, string | { content: string; mode?: number }>) {
  const project = await lockedProject(files);
  await Bun.sleep(2_100);
  return project;
}

/** How many launches kiwi remembers (each replays a later call). */
function launchMemos(cache: string): number {
  const dir = join(cache, "exec", "launches");
  return existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length : 0;
}

describe("kiwi exec: a three-link chain", () => {
  test("runs the verified script with coerced --param values, the JSON on stdin, defaults applied", async () => {
    const { k } = await lockedProject(SUM);
    expect(await k.run(["exec", "summer", "--param", "numbers=[1,2,3.5]", "--param=priority=7"])).toEqual({ exitCode: 0, stdout: "total=6.5\n", stderr: "" });
  });

  test.each([
    ["--params", ["--params", '{"numbers":[1,2],"label":"json"}'], undefined, "json=3\n"],
    ["stdin", [], '{"numbers":[4],"label":"stdin"}', "stdin=4\n"],
    ["--params -", ["--params", "-"], '{"numbers":[5],"label":"dash"}', "dash=5\n"],
    ["--param over --params", ["--params", '{"numbers":[1],"label":"json"}', "--param", "label=flag"], undefined, "flag=1\n"],
  ])("takes parameters from %s", async (_name, args, stdin, expected) => {
    const { k } = await lockedProject(SUM);
    expect(await k.run(["exec", "summer", ...args], {}, stdin)).toEqual({ exitCode: 0, stdout: expected, stderr: "" });
  });

  test("takes parameters from --params-file", async () => {
    const { root, k } = await lockedProject(SUM);
    writeFileSync(join(root, "p.json"), '{"numbers":[10,20],"label":"file"}');
    expect(await k.run(["exec", "summer", "--params-file", "p.json"])).toEqual({ exitCode: 0, stdout: "file=30\n", stderr: "" });
  });

  test("reports every parameter violation at once and runs nothing (exit 7)", async () => {
    const { k } = await lockedProject(SUM);
    const r = await k.run(["exec", "summer", "--params", '{"priority":150,"label":"far too long a label","email":"x","colour":"red"}']);
    expect(r.exitCode).toBe(7);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      [
        "error[E_PARAMS_INVALID]: 5 parameters of summer are invalid:",
        "  params/colour: is not a declared parameter (declared: numbers, label, priority, email) (got \"red\")",
        '  params/email: must be a valid email (got "x")',
        '  params/label: must be at most 10 characters long (got "far too long a label")',
        "  params/numbers: is required",
        "  params/priority: must be <= 100 (got 150)",
        '  hint: "kiwi show summer" lists the parameters it takes; "kiwi exec summer --dry-run" checks a call without running it',
        "",
      ].join("\n"),
    );
  });

  test("--dry-run prints the resolved plan as one JSON document and runs nothing", async () => {
    const { root, k } = await lockedProject({ ...SUM, ".ai/tools/summer/main.py": `open(${JSON.stringify(join(makeTemp(), "ran"))}, "w")\n` });
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    const r = await k.run(["exec", "summer", "--param", "numbers=[1]", "--dry-run"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    const plan = JSON.parse(r.stdout);
    expect(plan).toEqual(
      expect.objectContaining({ ok: true, dryRun: true, tool: "summer", mode: "locked", primitive: "subprocess", params: { numbers: [1], label: "total" } }),
    );
    expect(plan.chain.map((l: { id: string; integrity: string }) => [l.id, l.integrity])).toEqual([
      ["summer", lock.tools.summer.integrity],
      ["python_runtime", lock.tools.python_runtime.integrity],
      ["subprocess", lock.tools.subprocess.integrity],
    ]);
    expect(plan.subprocess.argv.slice(1)).toEqual(["-B", "-u", `${plan.subprocess.cwd}/main.py`, "--label", "total"]);
    expect(plan.subprocess.launch[0]).toEndWith("prlimit");
    expect(plan.limits).toEqual(expect.objectContaining({ timeoutMs: 60000, memoryMb: 2048 }));
    expect(plan.sandbox.mode).toBe("off");
    expect(existsSync(plan.subprocess.cwd)).toBe(false);
  });

  test("--dry-run shows secret values as *** and the env keys", async () => {
    const { k } = await lockedProject(
      { ".ai/tools/api/tool.yaml": "tool_id: api\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: run.sh\n  secrets: [SERVICE_KEY]\n  env:\n    KEY: \"${SERVICE_KEY}\"\n    AUTH: \"Bearer ${GH_TOKEN}\"\n", ".ai/tools/api/run.sh": "echo $KEY\n" },
      { SERVICE_KEY: "very-secret-value", GH_TOKEN: "ghp_abcdef" },
    );
    const r = await k.run(["exec", "api", "--dry-run"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain("very-secret-value");
    expect(r.stdout).not.toContain("ghp_abcdef");
    const plan = JSON.parse(r.stdout);
    expect(plan.secrets).toEqual(["GH_TOKEN", "SERVICE_KEY"]);
    expect(plan.subprocess.env).toEqual(expect.objectContaining({ KEY: "***", AUTH: "Bearer ***" }));
    expect(await k.run(["exec", "api"])).toEqual({ exitCode: 0, stdout: "very-secret-value\n", stderr: "" });
  });
});

describe("kiwi exec: refusals", () => {
  test("an unknown tool suggests the nearest ids (exit 2)", async () => {
    const { k } = await lockedProject(SUM);
    expect(await k.run(["exec", "sumer"])).toEqual({ exitCode: 2, stdout: "", stderr: 'error[E_TOOL_NOT_FOUND]: no tool has the id "sumer"\n  hint: did you mean "summer"?\n' });
  });

  test("a missing lockfile is refused with the hint to lock (exit 3)", async () => {
    const root = makeProject(SUM);
    const r = await kiwiIn(root, { KIWI_SANDBOX: "off" }).run(["exec", "summer", "--param", "numbers=[1]"]);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain('hint: run "kiwi lock"');
  });

  test("a project's .env and bunfig.toml never reach kiwi itself: KIWI_UNLOCKED=1 there runs nothing unlocked", async () => {
    const root = makeProject({
      ...SUM,
      ".env": "KIWI_UNLOCKED=1\nKIWI_SANDBOX=off\n",
      "bunfig.toml": '[run]\npreload = ["./pre.ts"]\n',
      "pre.ts": 'console.error("preloaded project code ran");\n',
    });
    const r = await kiwiIn(root).run(["exec", "summer", "--param", "numbers=[1]"]);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("error[E_LOCK_MISSING]");
    expect(r.stderr).not.toContain("preloaded project code ran");
  });

  test("an integrity mismatch names the link, the file and both hashes, and runs nothing (exit 6)", async () => {
    const { root, k } = await lockedProject(SUM);
    const locked = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).tools.summer.integrity;
    writeFileSync(join(root, ".ai/tools/summer/main.py"), "print('tampered')\n");
    const r = await k.run(["exec", "summer", "--param", "numbers=[1]"]);
    expect(r.exitCode).toBe(6);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("error[E_INTEGRITY_MISMATCH]: summer -> python_runtime -> subprocess does not match tool.lock.json; nothing was run");
    expect(r.stderr).toContain("link 1 (summer@1.0.0): .ai/tools/summer/main.py changed (locked sha256:");
    expect(r.stderr).toContain(`locked ${locked}, tree sha256:`);
  });

  test("--json renders a refusal as exactly one JSON document", async () => {
    const { k } = await lockedProject(SUM);
    const r = await k.run(["exec", "summer", "--json", "--params", '{"numbers":"x"}']);
    expect(r.exitCode).toBe(7);
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, error: expect.objectContaining({ code: "E_PARAMS_INVALID", exitCode: 7, details: expect.objectContaining({ violations: [{ pointer: "/numbers", rule: "type", message: "must be array", value: "x" }] }) }) });
  });

  test("--unlocked (or KIWI_UNLOCKED=1) runs the tree without the lockfile, with a warning", async () => {
    const root = makeProject(SUM);
    const k = kiwiIn(root, { KIWI_SANDBOX: "off" });
    for (const [args, env] of [[["--unlocked"], {}], [[], { KIWI_UNLOCKED: "1" }]] as const) {
      const r = await k.run(["exec", "summer", "--param", "numbers=[2]", ...args], env);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe("total=2\n");
      expect(r.stderr).toContain("warning: running summer unlocked: tool.lock.json is not compared");
    }
  });

  test("--unlocked from a subfolder names the files that stop it from there, as kiwi check does", async () => {
    const root = makeProject({ ".ai/tools/apis/w.yaml": "tool_id: w\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { url: 'https://a.example.com', method: FETCH }\nrequires: [{ net.outbound: [a.example.com] }]\n" });
    const r = await kiwiIn(join(root, ".ai/tools/apis"), { KIWI_SANDBOX: "off" }).run(["exec", "--unlocked", "w"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("w.yaml:5:41  error  api/method  ");
    expect(r.stderr).not.toContain(".ai/tools/apis/w.yaml");
  });
});

describe("kiwi exec: what runs is what was verified", () => {
  test("a file changed in the working tree during the run does not change what runs", async () => {
    // The runtime edits the tool's working-tree file after kiwi verified it, then runs the entry point.
    const files = {
      ".ai/tools/editing_runtime.yaml":
        'tool_id: editing_runtime\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  command: bash\n  args: ["-c", "printf \\"print(\'tampered\')\\\\n\\" > \\"$0/.ai/tools/victim/main.py\\"; exec python3 \\"$1\\"", "{project}"]\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { type: object }\n',
      ".ai/tools/victim/tool.yaml": "tool_id: victim\ntool_type: script\nversion: 1.0.0\nexecutor: editing_runtime\nconfig:\n  entrypoint: main.py\nparameters:\n  - { name: project, type: string, required: true }\n",
      ".ai/tools/victim/main.py": "print('verified')\n",
    };
    const { root, k } = await lockedProject(files);
    const r = await k.run(["exec", "victim", "--param", `project=${root}`]);
    expect(r).toEqual({ exitCode: 0, stdout: "verified\n", stderr: "" });
    expect(readFileSync(join(root, ".ai/tools/victim/main.py"), "utf8")).toBe("print('tampered')\n");
    const again = await k.run(["exec", "victim", "--param", `project=${root}`]);
    expect(again.exitCode).toBe(6);
    expect(again.stderr).toContain(".ai/tools/victim/main.py changed");
  });

  test("a corrupt cached blob a run directory needs is evicted, restored from the tree and reported, as kiwi install reports it", async () => {
    const script = "#!/bin/bash\n# ---\n# tool_id: greet\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\necho hi\n";
    const root = makeProject({ ".ai/tools/greet.sh": { content: script, mode: 0o755 } });
    const k = kiwiIn(root, { KIWI_SANDBOX: "off" });
    expect((await k.run(["install"])).exitCode).toBe(0);
    const hex = new Bun.CryptoHasher("sha256").update(script).digest("hex");
    const blob = join(k.cache, "blobs", hex.slice(0, 2), hex.slice(2));
    chmodSync(blob, 0o644);
    writeFileSync(blob, "garbage\n");
    for (const dir of ["runs", "exec"]) rmSync(join(k.cache, dir), { recursive: true, force: true });
    const r = await k.run(["exec", "greet"]);
    expect([r.exitCode, r.stdout]).toEqual([0, "hi\n"]);
    expect(r.stderr).toContain(`warning: evicted a corrupt cached blob sha256:${hex.slice(0, 12)} of greet (it held sha256:`);
    expect(r.stderr).toContain("; restored from the tree");
    expect(readdirSync(join(k.cache, "quarantine"))).toHaveLength(1);
    expect(await k.run(["exec", "greet"])).toEqual({ exitCode: 0, stdout: "hi\n", stderr: "" });
  });
});

describe("kiwi exec: concurrency", () => {
  test("four kiwi processes running one version for the first time all run the verified files", async () => {
    const { k } = await lockedProject(ECHO);
    const runs = await Promise.all(Array.from({ length: 4 }, (_, i) => k.run(["exec", "echo_args", "--param", `text=run ${i}`])));
    expect(runs).toEqual(Array.from({ length: 4 }, (_, i) => ({ exitCode: 0, stdout: `1\nrun ${i}\n`, stderr: "" })));
    expect(readdirSync(join(k.cache, "runs")).filter((n) => n.startsWith("."))).toEqual([]);
  });
});

describe("kiwi exec: faults of running tools", () => {
  test("the tool's exit code becomes kiwi's", async () => {
    const { k } = await lockedProject(FAULTS);
    expect(await k.run(["exec", "exits"])).toEqual({ exitCode: 42, stdout: "partial\n", stderr: "" });
  });

  test("death by a signal is reported as such (exit 128+N)", async () => {
    const { k } = await lockedProject(FAULTS);
    expect(await k.run(["exec", "segv"])).toEqual({ exitCode: 139, stdout: "", stderr: "error[E_EXEC_FAILED]: segv was killed by SIGSEGV (signal 11)\n  hint: the tool crashed or was killed; its stderr above may say why\n" });
  });

  test("a hanging tool whose children ignore SIGTERM is killed with its group at the timeout (exit 8)", async () => {
    const { k } = await lockedProject(FAULTS);
    const r = await k.run(["exec", "hangs"]);
    expect(r.exitCode).toBe(8);
    expect(r.stderr).toStartWith("error[E_EXEC_FAILED]: hangs timed out after 500 ms; its process group got SIGTERM, then SIGKILL after 2000 ms\n");
  });

  test("a magray tool's timeout hint names the field it wrote, runtime_config.max_execution_time_ms, the long way and replayed", async () => {
    const { k } = await settledProject({
      ".ai/tools/slow/tool.json": JSON.stringify({
        name: "slow",
        version: "1.0.0",
        description: "Sleeps past its timeout.",
        type: "native",
        capabilities: [],
        entry_point: "bin/slow",
        runtime_config: { max_execution_time_ms: 300 },
        metadata: { author: "kiwi tests", license: "MIT", repository: "https://example.com/kiwi", documentation: "https://example.com/kiwi/docs" },
      }),
      ".ai/tools/slow/bin/slow": { content: "#!/bin/sh\nexec sleep 30\n", mode: 0o755 },
    });
    for (let call = 0; call < 2; call++) {
      expect(await k.run(["exec", "slow"])).toEqual({
        exitCode: 8,
        stdout: "",
        stderr: "error[E_EXEC_FAILED]: slow timed out after 300 ms; its process group got SIGTERM\n  hint: raise runtime_config.max_execution_time_ms in the tool's manifest if it needs longer\n",
      });
      expect(launchMemos(k.cache)).toBe(1);
    }
  });

  test("a tool flooding stdout is stopped at its output cap (exit 8)", async () => {
    const { k } = await lockedProject(FAULTS);
    const r = await k.run(["exec", "floods"]);
    expect(r.exitCode).toBe(8);
    expect(r.stdout.length).toBe(65536);
    expect(r.stderr).toContain("floods wrote more than 65536 bytes to stdout and stderr; kiwi stopped it");
  });
});

describe("kiwi exec of what tools run on (a runtime, a primitive, an MCP server)", () => {
  const SERVER = { ".ai/tools/srv.yaml": "tool_id: srv\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  command: python3\n  args: [\"-c\", \"print('the server ran')\"]\n" };

  test.each([
    ["python_runtime", "python_runtime is a runtime (<builtin>/python_runtime.yaml)", 'run a tool whose executor is python_runtime instead ("kiwi list" shows the project\'s tools)'],
    ["subprocess", "subprocess is a primitive (<builtin>/subprocess.yaml)", 'run a tool whose chain ends in subprocess instead ("kiwi list" shows the project\'s tools)'],
    ["srv", "srv is an MCP server (.ai/tools/srv.yaml)", 'call one of its tools: kiwi exec <an mcp_tool whose executor is srv> ("kiwi list" shows them)'],
  ])("%s is refused with E_CHAIN naming what it is, and nothing runs (also after kiwi lock and kiwi mcp started the server)", async (id, what, hint) => {
    const { k } = await settledProject({ ...SUM, ...SERVER });
    // kiwi mcp plans the server's launch as exec does; it must leave nothing a `kiwi exec srv` could replay.
    expect((await k.run(["mcp", "hash", "srv"])).exitCode).toBe(9);
    expect(launchMemos(k.cache)).toBe(0);
    const refusal = { exitCode: 6, stdout: "", stderr: `error[E_CHAIN]: ${what}: it is not called on its own\n  hint: ${hint}\n` };
    for (let call = 0; call < 2; call++) expect(await k.run(["exec", id], {}, '{"numbers":[1]}')).toEqual(refusal);
    expect(await k.run(["exec", id, "--dry-run"])).toEqual(refusal);
  });
});

describe("kiwi exec into a pipeline whose reader goes away (`| head -2`)", () => {
  const ENDLESS = { ".ai/tools/endless.sh": "#!/bin/bash\n# ---\n# tool_id: endless\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# limits:\n#   timeout_ms: 100000\n# ---\nyes\n" };

  test("the endless tool ends at once as `yes | head -2` does: kiwi exits 141 and reports nothing, the long way and replayed", async () => {
    const { root, k } = await settledProject(ENDLESS);
    // The first call goes the long way and remembers its launch; the second replays it.
    for (let call = 0; call < 2; call++) {
      expect(await execIntoHead(k.env, root, ["endless"])).toEqual({ stdout: "y\ny\n", kiwi: 141, stderr: "" });
      expect(launchMemos(k.cache)).toBe(1);
    }
  });
});

describe("kiwi's message after a tool's output that did not end its line", () => {
  const OPEN = {
    ".ai/tools/open_out.sh": "#!/bin/bash\n# ---\n# tool_id: open_out\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\nprintf 'no newline'; kill -SEGV $$\n",
    ".ai/tools/open_err.sh": "#!/bin/bash\n# ---\n# tool_id: open_err\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\nprintf 'oops' >&2; kill -SEGV $$\n",
  };
  const ERROR = (id: string) => `error[E_EXEC_FAILED]: ${id} was killed by SIGSEGV (signal 11)\n  hint: the tool crashed or was killed; its stderr above may say why\n`;

  test("starts on a new line when stdout and stderr are one file (a terminal, 2>&1), the long way and replayed", async () => {
    const { root, k } = await settledProject(OPEN);
    for (let call = 0; call < 2; call++) {
      const proc = Bun.spawn(["bash", "-c", '"$0" exec open_out 2>&1', KIWI_BIN], { cwd: root, env: k.env, stdout: "pipe" });
      expect([await new Response(proc.stdout).text(), await proc.exited]).toEqual([`no newline\n${ERROR("open_out")}`, 139]);
      expect(launchMemos(k.cache)).toBe(1);
    }
  });

  test("starts on a new line after the tool's stderr, and adds nothing to stderr for a stdout that goes elsewhere", async () => {
    const { k } = await settledProject(OPEN);
    for (let call = 0; call < 2; call++) {
      expect(await k.run(["exec", "open_err"])).toEqual({ exitCode: 139, stdout: "", stderr: `oops\n${ERROR("open_err")}` });
      expect(await k.run(["exec", "open_out"])).toEqual({ exitCode: 139, stdout: "no newline", stderr: ERROR("open_out") });
      expect(launchMemos(k.cache)).toBe(2);
    }
  });
});

describe("kiwi exec --json: exactly one document", () => {
  const BOTH = { ".ai/tools/both.sh": "#!/bin/bash\n# ---\n# tool_id: both\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\necho out; echo err >&2; exit 3\n" };

  test("the tool's stdout, stderr and exit code are fields of it, and kiwi exits with the tool's code", async () => {
    const { k } = await lockedProject(BOTH);
    const r = await k.run(["exec", "both", "--json"]);
    expect([r.exitCode, r.stderr]).toEqual([3, ""]);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ ok: false, tool: "both", exitCode: 3, stdout: "out\n", stderr: "err\n" });
    expect(doc.durationMs).toBeGreaterThanOrEqual(0);
  });

  test("a success is ok: true", async () => {
    const { k } = await lockedProject(ECHO);
    const doc = JSON.parse((await k.run(["exec", "echo_args", "--param", "text=hi", "--json"])).stdout);
    expect(doc).toMatchObject({ ok: true, exitCode: 0, stdout: "1\nhi\n", stderr: "" });
  });

  test("a failure of kiwi's own (a timeout) is the error document alone, with nothing before it", async () => {
    const { k } = await lockedProject(FAULTS);
    const r = await k.run(["exec", "hangs", "--json"]);
    expect(r.exitCode).toBe(8);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: "E_EXEC_FAILED" } });
  });
});

describe("kiwi exec: arguments it would otherwise drop", () => {
  test.each([
    [["exec", "echo_args", "text=hi"], 'error[E_USAGE]: unexpected argument "text=hi" after the tool id echo_args\n  hint: did you mean --param text=hi?\n'],
    [["exec", "echo_args", "hi"], 'error[E_USAGE]: unexpected argument "hi" after the tool id echo_args\n  hint: pass parameters with --param name=value, --params \'{...}\' or --params-file FILE\n'],
    [["exec", "echo_args", "--param", "text=hi", "--", "extra", "words"], 'error[E_USAGE]: kiwi exec passes no arguments after "--" to echo_args (got "extra" "words")\n  hint: a tool takes its declared parameters: --param name=value, --params \'{...}\' or --params-file FILE\n'],
  ])("%p is refused, and nothing runs", async (argv, stderr) => {
    const { k } = await lockedProject(ECHO);
    expect(await k.run(argv)).toEqual({ exitCode: 2, stdout: "", stderr });
  });

  test("a parameter too large for a command-line argument is E2BIG said plainly, with where it belongs", async () => {
    const { root, k } = await lockedProject(ECHO);
    writeFileSync(join(root, "big.json"), JSON.stringify({ text: "x".repeat(300_000) }));
    const r = await k.run(["exec", "echo_args", "--params-file", "big.json"]);
    expect([r.exitCode, r.stdout]).toEqual([8, ""]);
    expect(r.stderr).toContain("error[E_EXEC_FAILED]: could not start echo_args: argument 4 is 300000 bytes (the OS limit for one argument is 131072), which exceeds the OS limit (E2BIG)");
    expect(r.stderr).toContain("hint: pass large values on stdin");
  });

  test("a flag's value is not mistaken for a stray argument", async () => {
    const { k } = await lockedProject(ECHO);
    expect(await k.run(["exec", "echo_args", "--sandbox", "off", "--param", "text=a b"])).toEqual({ exitCode: 0, stdout: "1\na b\n", stderr: "" });
  });
});

describe("kiwi exec: untrusted patterns", () => {
  test("a polynomial pattern against a 20,001-character value is refused at once (it took 4 s at 3,001 on RegExp)", async () => {
    const { root, k } = await lockedProject({
      ".ai/tools/slug/tool.yaml": "tool_id: slug\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\nparameters:\n  - { name: s, type: string, required: true, pattern: '^[a-z]+[a-z0-9]+[a-z]+$' }\n",
      ".ai/tools/slug/main.sh": "echo ok\n",
    });
    writeFileSync(join(root, "long.json"), JSON.stringify({ s: `${"a".repeat(20_000)}!` }));
    const r = await k.run(["exec", "slug", "--dry-run", "--params-file", "long.json"]);
    expect(r.exitCode).toBe(7);
    expect(r.stderr).toContain('params/s: must match the pattern "^[a-z]+[a-z0-9]+[a-z]+$"');
  });

  test("^a*a*a*$ against 20,001 characters gives its verdict, and a value that matches runs (30 s or more on 5,001 with RegExp)", async () => {
    const { root, k } = await lockedProject({
      ".ai/tools/aaa/tool.yaml": "tool_id: aaa\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\nparameters:\n  - { name: s, type: string, required: true, pattern: '^a*a*a*$' }\n",
      ".ai/tools/aaa/main.sh": "echo ok\n",
    });
    writeFileSync(join(root, "bad.json"), JSON.stringify({ s: `${"a".repeat(20_000)}b` }));
    writeFileSync(join(root, "good.json"), JSON.stringify({ s: "a".repeat(20_000) }));
    const bad = await k.run(["exec", "aaa", "--params-file", "bad.json"]);
    expect([bad.exitCode, bad.stdout]).toEqual([7, ""]);
    expect(bad.stderr).toContain('params/s: must match the pattern "^a*a*a*$"');
    const good = await k.run(["exec", "aaa", "--sandbox=off", "--params-file", "good.json"]);
    expect([good.exitCode, good.stdout, good.stderr]).toEqual([0, "ok\n", ""]);
  }, 60_000);
});

describe("kiwi exec: injection", () => {
  test.each([["; rm -rf ~"], ["$(touch pwned)"], ["`touch pwned`"], ["a && touch pwned"], ["'\"; touch pwned; \""], ["line1\nline2"]])(
    "the value %p reaches the tool as exactly one argument, uninterpreted",
    async (text) => {
      const { root, k } = await lockedProject(ECHO);
      const home = k.env.HOME!;
      writeFileSync(join(home, "sentinel"), "still here");
      const r = await k.run(["exec", "echo_args", "--param", `text=${text}`]);
      expect(r).toEqual({ exitCode: 0, stdout: `1\n${text}\n`, stderr: "" });
      expect(existsSync(join(home, "sentinel"))).toBe(true);
      expect(existsSync(join(root, "pwned"))).toBe(false);
    },
  );
});

describe("kiwi exec: an api tool against a real server", () => {
  function api(port: number, extra = "") {
    return {
      ".ai/tools/weather.yaml": [
        "tool_id: weather",
        "tool_type: api",
        "version: 1.0.0",
        "executor: http_client",
        "requires:",
        '  - net.outbound: ["127.0.0.1"]',
        "config:",
        "  method: GET",
        `  url_template: "http://127.0.0.1:${port}/v1/{city}/forecast"`,
        "  query: { units: \"{units}\" }",
        '  response_transform: "$.forecast.daily[0:2]"',
        "  retries: 0",
        "parameters:",
        "  - { name: city, type: string, required: true }",
        "  - { name: units, type: string, enum: [metric, imperial], default: metric }",
        extra,
      ].join("\n"),
    };
  }

  test("a JSON body, query and headers are sent as the manifest wrote them: integers past 2^53 and 1.0 stay exact (what runs is what was hashed)", async () => {
    const seen: { body: string; url: string; id: string | null; ratio: string | null }[] = [];
    const s = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (req) => {
        const body = new TextDecoder().decode(await req.arrayBuffer());
        seen.push({ body, url: req.url.slice(req.url.indexOf("/orders")), id: req.headers.get("x-id"), ratio: req.headers.get("x-ratio") });
        return Response.json({ ok: true });
      },
    });
    servers.push(s);
    const { k } = await lockedProject({
      ".ai/tools/order.yaml": [
        "tool_id: order",
        "tool_type: api",
        "version: 1.0.0",
        "executor: http_client",
        "requires:",
        '  - net.outbound: ["127.0.0.1"]',
        "config:",
        "  method: POST",
        `  url_template: "http://127.0.0.1:${s.port}/orders"`,
        "  query: { id: 12345678901234567890, ratio: 1.0 }",
        "  headers: { x-id: 12345678901234567890, x-ratio: 1.0 }",
        '  body: { id: 12345678901234567890, ratio: 1.0, who: "{name}", tags: [a, 2.5] }',
        "  retries: 0",
        "parameters:",
        "  - { name: name, type: string, required: true }",
        "",
      ].join("\n"),
    });
    const expected = '{"id":12345678901234567890,"ratio":1.0,"who":"Ada","tags":["a",2.5]}';
    const dry = await k.run(["exec", "order", "--param", "name=Ada", "--dry-run"]);
    expect(dry.exitCode).toBe(0);
    expect(JSON.parse(dry.stdout).http.body).toBe(expected);
    expect(JSON.parse(dry.stdout).http.url).toEndWith("/orders?id=12345678901234567890&ratio=1.0");
    // The shown config is the one written, not its nearest doubles.
    expect(dry.stdout).toContain('"id": 12345678901234567890,\n      "ratio": 1.0,');
    expect(dry.stdout).not.toContain("12345678901234567000");
    const run = await k.run(["exec", "order", "--param", "name=Ada"]);
    expect([run.exitCode, run.stderr]).toEqual([0, ""]);
    expect(seen).toEqual([{ body: expected, url: "/orders?id=12345678901234567890&ratio=1.0", id: "12345678901234567890", ratio: "1.0" }]);
  });

  test("calls the URL with encoded parameters and prints the transformed response", async () => {
    const seen: string[] = [];
    const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => (seen.push(req.url.slice(req.url.indexOf("/v1"))), Response.json({ forecast: { daily: [1, 2, 3] } })) });
    servers.push(s);
    const { k } = await lockedProject(api(s.port!));
    const r = await k.run(["exec", "weather", "--param", "city=../admin?x=1#frag\r\nHost: evil"]);
    expect(r).toEqual({ exitCode: 0, stdout: "[\n  1,\n  2\n]\n", stderr: "" });
    expect(seen).toEqual(["/v1/..%2Fadmin%3Fx%3D1%23frag%0D%0AHost%3A%20evil/forecast?units=metric"]);
  });

  test("--json reads a body printed as received in the charset it declared, and the header a parameter fills reaches the API byte for byte", async () => {
    let header: number[] = [];
    const s = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) => {
        header = [...(req.headers.get("x-who") ?? "")].map((c) => c.charCodeAt(0));
        return new Response(Uint8Array.from([...'{"a":"\u00e9"}'].map((c) => c.charCodeAt(0))), { headers: { "content-type": "application/json; charset=iso-8859-1" } });
      },
    });
    servers.push(s);
    const { k } = await lockedProject({
      ".ai/tools/latin.yaml": [
        "tool_id: latin",
        "tool_type: api",
        "version: 1.0.0",
        "executor: http_client",
        "requires:",
        '  - net.outbound: ["127.0.0.1"]',
        "config:",
        "  method: GET",
        `  url: "http://127.0.0.1:${s.port}/"`,
        '  headers: { x-who: "{who}" }',
        "parameters:",
        "  - { name: who, type: string, required: true }",
        "",
      ].join("\n"),
    });
    const r = await k.run(["exec", "latin", "--param", "who=Ren\u00e9e", "--json"]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).stdout).toBe('{"a":"\u00e9"}');
    // Sent through kiwi's proxy (the hosts are enforced), é is still the one byte fetch sends.
    expect(header).toEqual([...("Ren\u00e9e")].map((c) => c.charCodeAt(0)));
  });

  test("HTTP 500 exits 8 with the status and a body excerpt", async () => {
    const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("upstream is down", { status: 500 }) });
    servers.push(s);
    const { k } = await lockedProject(api(s.port!));
    const r = await k.run(["exec", "weather", "--param", "city=Oslo"]);
    expect(r.exitCode).toBe(8);
    expect(r.stdout).toBe("");
    expect(r.stderr).toStartWith(`error[E_EXEC_FAILED]: weather: HTTP 500 Internal Server Error from GET http://127.0.0.1:${s.port}/v1/Oslo/forecast?units=metric: upstream is down\n`);
  });

  test("a redirect to another host is refused (exit 8)", async () => {
    const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.redirect("http://example.invalid/steal", 302) });
    servers.push(s);
    const { k } = await lockedProject(api(s.port!));
    const r = await k.run(["exec", "weather", "--param", "city=Oslo"]);
    expect(r.exitCode).toBe(8);
    expect(r.stderr).toContain(`the redirect from http://127.0.0.1:${s.port} to another host (example.invalid) is refused`);
  });

  test.each([["SIGINT", 130], ["SIGTERM", 143]] as const)("%s while the request is in flight is E_INTERRUPTED (exit %d, one --json document), not a silent death", async (signal, exit) => {
    let arrived!: () => void;
    const request = new Promise<void>((resolve) => (arrived = resolve));
    // Answers nothing: only the interruption ends the call.
    const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (arrived(), new Promise<Response>(() => {})) });
    servers.push(s);
    const { root, k } = await lockedProject(api(s.port!));
    const proc = Bun.spawn([KIWI_BIN, "exec", "weather", "--param", "city=Oslo", "--json"], { cwd: root, env: k.env, stdout: "pipe", stderr: "pipe" });
    await request;
    proc.kill(signal);
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(exit);
    expect(JSON.parse(stdout).error).toMatchObject({ code: "E_INTERRUPTED", exitCode: exit, details: { tool: "weather", signal } });
    expect(stderr).toBe(`error[E_INTERRUPTED]: weather was interrupted: kiwi received ${signal} and abandoned its GET request\n  hint: nothing to fix; run it again when you want it\n`);
  });

  test("a dot-segment parameter is refused before any request (exit 7)", async () => {
    let hits = 0;
    const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (hits++, new Response("x")) });
    servers.push(s);
    const { k } = await lockedProject(api(s.port!));
    const r = await k.run(["exec", "weather", "--param", "city=.."]);
    expect(r.exitCode).toBe(7);
    expect(r.stderr).toContain('params/city: must not make a URL path segment "." or ".." (got "..")');
    expect(hits).toBe(0);
  });
});

describe("kiwi exec: a call made before runs from its launch memo", () => {
  const COUNT = {
    ".ai/tools/count/tool.yaml": "tool_id: count\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\nparameters:\n  - { name: n, type: integer, required: true }\n",
    ".ai/tools/count/main.sh": 'read -r line\necho "got $line"\n',
  };

  test("the compiled binary replays it, with the long way's errors, and never past a changed file", async () => {
    const { root, k } = await lockedProject(COUNT);
    // A call in an environment kiwi has not seen takes the long way (the memo's key holds the environment).
    let calls = 0;
    const unseenEnv = () => ({ KIWI_UNSEEN: String(++calls) });
    // Inputs written within the racy margin (2 s) are never remembered, and ctime cannot be backdated.
    await Bun.sleep(2_100);
    expect(await k.run(["exec", "count", "--param", "n=1"])).toEqual({ exitCode: 0, stdout: 'got {"n":1}\n', stderr: "" });
    const launches = join(k.cache, "exec", "launches");
    const memos = readdirSync(launches, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    expect(memos.length).toBe(1);

    // The next call runs what the memo says: a memo whose plan was edited (bash -x) shows it.
    const original = readFileSync(memos[0]!, "utf8");
    const body = original.slice(original.indexOf("\n") + 1).replaceAll('"--norc"', '"--norc","-x"');
    chmodSync(memos[0]!, 0o644);
    writeFileSync(memos[0]!, `${new Bun.CryptoHasher("sha256").update(body).digest("hex")}\n${body}`);
    const traced = await k.run(["exec", "count", "--param", "n=2"]);
    expect([traced.exitCode, traced.stdout, traced.stderr.includes("+ read -r line")]).toEqual([0, 'got {"n":2}\n', true]);
    const tracedJson = await k.run(["exec", "count", "--json", "--param", "n=2"]);
    expect(JSON.parse(tracedJson.stdout)).toMatchObject({ ok: true, tool: "count", exitCode: 0, stdout: 'got {"n":2}\n', stderr: expect.stringContaining("+ read -r line") });
    // Every plain form of the call replays: a parameters file, '-' for stdin, --cwd naming the same folder.
    writeFileSync(join(root, "p.json"), '{"n":5}');
    const forms: [string[], string?][] = [[["--params-file", "p.json"]], [["--params", "-"], '{"n":5}'], [["--params-file=-"], '{"n":5}'], [["--cwd", root, "--param", "n=5"]]];
    for (const [args, stdin] of forms) {
      const r = await k.run(["exec", "count", ...args], {}, stdin);
      expect([args, r.exitCode, r.stdout, r.stderr.includes("+ read -r line")]).toEqual([args, 0, 'got {"n":5}\n', true]);
    }
    writeFileSync(memos[0]!, original);
    // A parameters file that cannot be read: the long way's refusal.
    const missing = await k.run(["exec", "count", "--params-file", "nope.json"]);
    expect(missing.stderr).toContain("cannot read --params-file nope.json: ENOENT");
    expect(missing).toEqual(await k.run(["exec", "count", "--params-file", "nope.json"], unseenEnv()));
    // Text on stdin that is not JSON: the message names stdin and the flag that asked for it, on both ways.
    for (const flag of ["--params-file", "--params"]) {
      const notJson = await k.run(["exec", "count", flag, "-"], {}, "{n:");
      expect([notJson.exitCode, notJson.stderr.split("\n")[0]]).toEqual([2, `error[E_INPUT_INVALID]: the JSON on stdin (${flag} -) is not valid JSON: JSON Parse error: Expected '}'`]);
      expect(notJson).toEqual(await k.run(["exec", "count", flag, "-"], unseenEnv(), "{n:"));
    }

    // --json gives the long way's one document (how long the tool ran aside).
    const asJson = async (more: Record<string, string> = {}) => ({ ...JSON.parse((await k.run(["exec", "count", "--json", "--param", "n=4"], more)).stdout), durationMs: 0 });
    expect(await asJson()).toEqual(await asJson(unseenEnv()));
    expect(await k.run(["exec", "count", "--sandbox=off", "--params", '{"n":3}'])).toEqual({ exitCode: 0, stdout: 'got {"n":3}\n', stderr: "" });

    // Bad parameters: the same refusal as the long way.
    const replayed = await k.run(["exec", "count", "--param", "n=x"]);
    const longWay = await k.run(["exec", "count", "--param", "n=x"], unseenEnv());
    expect(replayed.exitCode).not.toBe(0);
    expect(replayed.stderr).toContain("error[E_PARAMS_INVALID]");
    expect(replayed).toEqual(longWay);
    const replayedJson = await k.run(["exec", "count", "--json", "--param", "n=x"]);
    expect(JSON.parse(replayedJson.stdout).error.code).toBe("E_PARAMS_INVALID");
    expect(replayedJson).toEqual(await k.run(["exec", "count", "--json", "--param", "n=x"], unseenEnv()));

    // A changed script (same size) is refused, as it always was.
    writeFileSync(join(root, ".ai/tools/count/main.sh"), 'read -r line\necho "PWN $line"\n');
    const refused = await k.run(["exec", "count", "--param", "n=1"]);
    expect([refused.stdout, refused.stderr.split("\n")[0]]).toEqual(["", "error[E_INTEGRITY_MISMATCH]: count -> bash_runtime -> subprocess does not match tool.lock.json; nothing was run"]);
    expect(refused.exitCode).not.toBe(0);
  });

  test("a secret's value reaches the tool on every call and kiwi's cache never, the launch memo included", async () => {
    const { k } = await lockedProject({
      ".ai/tools/count/tool.yaml": COUNT[".ai/tools/count/tool.yaml"].replace("entrypoint: main.sh\n", "entrypoint: main.sh\n  env:\n    GH_TOKEN: '${GH_TOKEN}'\n"),
      ".ai/tools/count/main.sh": 'read -r line\necho "got $line ${#GH_TOKEN}"\n',
    });
    await Bun.sleep(2_100);
    const secret = { GH_TOKEN: "ghp_e2eSecretValue0123456789" };
    for (let i = 0; i < 2; i++) expect(await k.run(["exec", "count", "--param", "n=1"], secret)).toEqual({ exitCode: 0, stdout: 'got {"n":1} 28\n', stderr: "" });
    const cached = readdirSync(k.cache, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    const launchMemos = cached.filter((f) => f.includes(`${join("exec", "launches")}/`));
    expect(launchMemos.length).toBe(1);
    expect(cached.filter((f) => readFileSync(f).includes(secret.GH_TOKEN))).toEqual([]);
    // The environment's other values (a DSN under a plain name, say) are in it: its owner alone reads it.
    expect(statSync(launchMemos[0]!).mode & 0o777).toBe(0o400);
    expect(cached.filter((f) => f.includes(`${join("exec", "chains")}/`)).map((f) => statSync(f).mode & 0o777)).toEqual([0o444]);
  });
});
