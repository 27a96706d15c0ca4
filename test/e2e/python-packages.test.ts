// Python packages a tool needs, through the compiled binary and the real pip (in a venv made by
// python3 -m venv): resolved at lock with their sha256, installed with --require-hashes at install,
// imported at exec from the verified copy with no network. PyPI is not reachable here: a PEP 503
// index on 127.0.0.1 serves wheels the test builds.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { probeSandbox } from "../../src/exec/sandbox-io.ts";
import { type PypiIndex, startPypiIndex } from "../helpers/pypi-index.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";
import { kiwiIn } from "./lock-helpers.ts";

// pip makes a venv and resolves for real: seconds, not milliseconds.
setDefaultTimeout(90_000);

const index: PypiIndex = startPypiIndex();
index.publish({ name: "kiwi-greeting", version: "1.0.0", dependencies: ["kiwi-words>=2"], files: { "kiwi_greeting/__init__.py": "from kiwi_words import hello\ndef greet(name):\n    return hello() + ', ' + name\n" } });
index.publish({ name: "kiwi-words", version: "2.0.0", files: { "kiwi_words/__init__.py": "def hello():\n    return 'hello'\n" } });
index.publish({ name: "kiwi-legacy", version: "1.0.0", files: { "kiwi_legacy/__init__.py": "from .built import BUILT\n" } }, { sdist: true });
afterAll(() => {
  index.stop();
  cleanupTemps();
});

const greetTool = (requirement: string) => ({
  ".ai/tools/greet/tool.yaml": `tool_id: greet\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\nrequires: [${JSON.stringify(requirement)}]\n`,
  ".ai/tools/greet/main.py": "from kiwi_greeting import greet\nprint(greet('Ada'))\n",
});

describe("a Python tool with requirements", () => {
  const root = makeProject(greetTool("pypi:kiwi-greeting==1.0.0"));
  const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });

  test("kiwi lock records every distribution with its exact version and sha256, and says which index it used", async () => {
    const r = await kiwi.run(["lock", "--json"]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).resolutions).toEqual([{ tools: ["greet"], ecosystem: "pypi", packages: 2, sources: [new URL(index.url).origin], setting: "PIP_INDEX_URL" }]);
    const pypi = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.greet.pypi;
    expect(pypi.requires).toEqual(["kiwi-greeting==1.0.0"]);
    expect(Object.keys(pypi.packages)).toEqual(["kiwi-greeting", "kiwi-words"]);
    expect(pypi.packages["kiwi-words"]).toMatchObject({ version: "2.0.0", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  test("after kiwi install the tool imports them with the index unreachable, in the sandbox too", async () => {
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const r = await kiwi.run(["exec", "greet"], { PIP_INDEX_URL: "http://127.0.0.1:9/simple/" });
    expect([r.exitCode, r.stdout]).toEqual([0, "hello, Ada\n"]);
    if (probeSandbox(process.env).usable) {
      const boxed = await kiwi.run(["exec", "greet", "--sandbox=require"]);
      expect([boxed.exitCode, boxed.stdout]).toEqual([0, "hello, Ada\n"]);
    }
    expect((await kiwi.run(["verify"])).exitCode).toBe(0);
  });

  test("a frozen install with a changed requirement is refused", async () => {
    writeFileSync(join(root, ".ai/tools/greet/tool.yaml"), readFileSync(join(root, ".ai/tools/greet/tool.yaml"), "utf8").replace("==1.0.0", ">=1.0"));
    const r = await kiwi.run(["install", "--frozen-lockfile"]);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain("E_LOCK_STALE");
    expect(r.stderr).toContain("~ requires (pypi): + kiwi-greeting>=1.0, - kiwi-greeting==1.0.0");
  });
});

test("the user's pip settings about what to install (no-deps, a user or prefix install) do not reach kiwi's pip; their index does", async () => {
  const root = makeProject(greetTool("pypi:kiwi-greeting==1.0.0"));
  const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url, PIP_NO_DEPS: "1", PIP_USER: "1", PIP_PREFIX: "/nonexistent", PIP_REQUIRE_HASHES: "1" });
  const install = await kiwi.run(["install"]);
  expect([install.exitCode, install.stderr]).toEqual([0, expect.not.stringContaining("error")]);
  // kiwi-words is kiwi-greeting's dependency: a no-deps resolution would have left it out.
  expect(Object.keys(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.greet.pypi.packages)).toEqual(["kiwi-greeting", "kiwi-words"]);
  const r = await kiwi.run(["exec", "greet"]);
  expect([r.exitCode, r.stdout]).toEqual([0, "hello, Ada\n"]);
});

test("the same requirements in another order keep their resolution: no pip run, and exec still runs", async () => {
  const root = makeProject({ ...greetTool("kiwi-greeting==1.0.0"), ".ai/tools/greet/tool.yaml": "tool_id: greet\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\nrequires: [kiwi-greeting==1.0.0, kiwi-words>=2]\n" });
  const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  const manifest = join(root, ".ai/tools/greet/tool.yaml");
  writeFileSync(manifest, readFileSync(manifest, "utf8").replace("[kiwi-greeting==1.0.0, kiwi-words>=2]", "[kiwi-words>=2, kiwi-greeting==1.0.0]"));
  const down = { PIP_INDEX_URL: "http://127.0.0.1:9/simple/" };
  expect((await kiwi.run(["install"], down)).exitCode).toBe(0);
  const r = await kiwi.run(["exec", "greet"], down);
  expect([r.exitCode, r.stdout]).toEqual([0, "hello, Ada\n"]);
});

test("without the sandbox an undeclared import does not resolve from the user's site-packages", async () => {
  const root = makeProject({ ...greetTool("pypi:kiwi-greeting==1.0.0"), ".ai/tools/greet/main.py": "import kiwi_greeting\ntry:\n    import kiwi_undeclared\n    print('imported', kiwi_undeclared.__file__)\nexcept ImportError:\n    print('not found')\n" });
  const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  const version = Bun.spawnSync(["python3", "-c", "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"]).stdout.toString().trim();
  const userSite = join(kiwi.env.HOME!, ".local/lib", `python${version}`, "site-packages");
  mkdirSync(userSite, { recursive: true });
  writeFileSync(join(userSite, "kiwi_undeclared.py"), "");
  // The planted module is importable by the user's own python: the test would prove nothing otherwise.
  expect(Bun.spawnSync(["python3", "-c", "import kiwi_undeclared"], { env: kiwi.env }).exitCode).toBe(0);
  const r = await kiwi.run(["exec", "greet", "--sandbox=off"]);
  expect([r.exitCode, r.stdout]).toEqual([0, "not found\n"]);
});

test("a distribution with scripts installs as the same tree on every machine: its RECORD does not name kiwi's staging venv", async () => {
  index.publish({
    name: "kiwi-scripted-cli",
    version: "1.0.0",
    files: {
      "kiwi_scripted_cli/__init__.py": "def main():\n    print('cli')\n",
      "kiwi_scripted_cli-1.0.0.dist-info/entry_points.txt": "[console_scripts]\nkiwi-scripted-cli = kiwi_scripted_cli:main\n",
      "kiwi_scripted_cli-1.0.0.data/scripts/kiwi-scripted-tool": "#!python\nprint('tool')\n",
    },
  });
  const root = makeProject({
    ".ai/tools/cli/tool.yaml": "tool_id: cli\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\nrequires: [pypi:kiwi-scripted-cli==1.0.0]\n",
    ".ai/tools/cli/main.py": "from kiwi_scripted_cli import main\nmain()\n",
  });
  const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });
  expect((await kiwi.run(["install"])).exitCode).toBe(0);
  const lockText = readFileSync(join(root, "tool.lock.json"), "utf8");
  // A teammate's clone (another cache: pip installs again, from another staging venv) gets the locked tree.
  const other = { KIWI_CACHE_DIR: makeTemp("kiwi-other-cache-") };
  const again = await kiwi.run(["install", "--frozen-lockfile"], other);
  expect([again.exitCode, again.stderr]).toEqual([0, ""]);
  expect(readFileSync(join(root, "tool.lock.json"), "utf8")).toBe(lockText);
  const r = await kiwi.run(["exec", "cli"], { ...other, PIP_INDEX_URL: "http://127.0.0.1:9/simple/" });
  expect([r.exitCode, r.stdout]).toEqual([0, "cli\n"]);
});

describe("a distribution published only as source (its build runs code)", () => {
  const legacyTool = (allow: string) => ({
    ".ai/tools/legacy/tool.yaml": `tool_id: legacy\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\nrequires: [kiwi-legacy==1.0.0]\n${allow}`,
    ".ai/tools/legacy/main.py": "from kiwi_legacy import BUILT\nprint(BUILT)\n",
  });

  test("is refused by default, naming it and how to allow the build", async () => {
    const root = makeProject(legacyTool(""));
    const r = await kiwiIn(root, { PIP_INDEX_URL: index.url }).run(["lock"]);
    expect(r.exitCode).toBe(15);
    expect(r.stderr).toContain("error[E_DEPS]: legacy: cannot get kiwi-legacy==1.0.0: no version of kiwi-legacy==1.0.0 matches");
    expect(r.stderr).toContain("allow_scripts: [pypi:<name>]");
    expect(existsSync(join(root, "tool.lock.json"))).toBe(false);
  });

  test("with allow_scripts it is built from source at install, pinned by its sdist's sha256, and imported", async () => {
    const root = makeProject(legacyTool("allow_scripts: [pypi:kiwi-legacy]\n"));
    const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    const pypi = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.legacy.pypi;
    expect(pypi.allow_scripts).toEqual(["kiwi-legacy"]);
    expect(pypi.packages["kiwi-legacy"].url).toEndWith("kiwi_legacy-1.0.0.tar.gz");
    const r = await kiwi.run(["exec", "legacy"], { PIP_INDEX_URL: "http://127.0.0.1:9/simple/" });
    expect([r.exitCode, r.stdout]).toEqual([0, "by the backend\n"]);
  });

  test("allowing a distribution that comes as a wheel is a warning: nothing is built", async () => {
    const root = makeProject({ ...greetTool("kiwi-greeting==1.0.0"), ".ai/tools/greet/tool.yaml": "tool_id: greet\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\nrequires: [kiwi-greeting==1.0.0]\nallow_scripts: [kiwi-greeting]\n" });
    const r = await kiwiIn(root, { PIP_INDEX_URL: index.url }).run(["lock"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain("warning: greet: allow_scripts names kiwi-greeting, which pip installs from a wheel (nothing is built)");
  });
});

describe("what pip gets wrong is a coded error naming the tool and requirement", () => {
  test("a version that does not exist", async () => {
    const r = await kiwiIn(makeProject(greetTool("pypi:kiwi-greeting==9.0.0")), { PIP_INDEX_URL: index.url }).run(["lock"]);
    expect(r.exitCode).toBe(15);
    expect(r.stderr).toContain("error[E_DEPS]: greet: cannot get kiwi-greeting==9.0.0: no version of kiwi-greeting==9.0.0 matches");
  });

  test("an index that is down, at lock and at install: the index is blamed, not the requirement", async () => {
    const root = makeProject(greetTool("pypi:kiwi-greeting==1.0.0"));
    const down = { PIP_INDEX_URL: "http://127.0.0.1:9/simple/", PIP_FIND_LINKS: "", PIP_CONFIG_FILE: "/dev/null" };
    const r = await kiwiIn(root, down).run(["lock"]);
    expect(r.exitCode).toBe(15);
    expect(r.stderr).toContain("error[E_DEPS]: greet: cannot get kiwi-greeting==1.0.0: the index cannot be reached");
    const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    const install = await kiwi.run(["install"], down);
    expect(install.exitCode).toBe(15);
    expect(install.stderr).toContain("the index cannot be reached");
    // An index that is up but does not serve what the lock pins (another index, a mirror behind): the pin is named.
    const empty = await kiwi.run(["install"], { ...down, PIP_INDEX_URL: `${new URL(index.url).origin}/elsewhere/` });
    expect(empty.exitCode).toBe(15);
    expect(empty.stderr).toMatch(/error\[E_DEPS\]: greet: cannot get kiwi-[a-z]+==[0-9.]+, which tool\.lock\.json pins: the index does not have it/);
  });

  test("an index that serves other bytes than it locked: nothing is installed", async () => {
    index.publish({ name: "kiwi-liar", version: "1.0.0", files: { "kiwi_liar/__init__.py": "WHO = 'honest'\n" } });
    const root = makeProject({
      ".ai/tools/liar/tool.yaml": "tool_id: liar\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\nrequires: [pypi:kiwi-liar==1.0.0]\n",
      ".ai/tools/liar/main.py": "import kiwi_liar\nprint(kiwi_liar.WHO)\n",
    });
    const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    index.lie("kiwi-liar", "1.0.0", { "kiwi_liar/__init__.py": "WHO = 'evil'\n" });
    const r = await kiwi.run(["install"]);
    expect(r.exitCode).toBe(6);
    expect(r.stderr).toContain("error[E_INTEGRITY_MISMATCH]: liar: cannot get kiwi-liar==1.0.0: a distribution does not match the sha256 in the lock");
    const run = await kiwi.run(["exec", "liar"]);
    expect([run.exitCode, run.stdout]).toEqual([15, ""]);
  });

  test("a requirement that is not PEP 508 is a check error at the field", async () => {
    const r = await kiwiIn(makeProject(greetTool("pypi:>=1"))).run(["check", "--json"]);
    const finding = (JSON.parse(r.stdout).findings as { rule: string; pointer: string; message: string }[]).find((f) => f.rule === "deps/requirement");
    expect(finding).toMatchObject({ pointer: "/requires/0", message: expect.stringContaining("is not a PEP 508 requirement") });
  });

  test("a direct reference (name @ URL) is a check error: kiwi install takes the locked version from the index, not that archive", async () => {
    const wheel = `${new URL(index.url).origin}/files/kiwi_words-2.0.0-py3-none-any.whl`;
    const root = makeProject(greetTool(`pypi:kiwi-words @ ${wheel}`));
    const r = await kiwiIn(root, { PIP_INDEX_URL: index.url }).run(["lock"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`deps/requirement  requirement "pypi:kiwi-words @ ${wheel}" is a direct reference (a URL or path), not a version from an index`);
    expect(r.stderr).toContain("hint: require kiwi-words by version (pypi:kiwi-words==<version>) from an index");
    expect(existsSync(join(root, "tool.lock.json"))).toBe(false);
  });
});

describe("requirements in the tool's own files", () => {
  test("a requirements.txt in a directory tool is locked, installed and imported", async () => {
    const root = makeProject({
      ".ai/tools/greet_txt/tool.yaml": "tool_id: greet_txt\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\n",
      ".ai/tools/greet_txt/requirements.txt": "# what main.py imports\nkiwi-greeting==1.0.0  # pinned\n",
      ".ai/tools/greet_txt/main.py": "from kiwi_greeting import greet\nprint(greet('txt'))\n",
    });
    const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    expect(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.greet_txt.pypi.requires).toEqual(["kiwi-greeting==1.0.0"]);
    expect((await kiwi.run(["exec", "greet_txt"])).stdout).toBe("hello, txt\n");
  });

  test("PEP 723 inline metadata in a script is read as uv reads it", async () => {
    const root = makeProject({
      ".ai/tools/greet_inline.py": "#!/usr/bin/env python3\n# ---\n# /// script\n# dependencies = [\n#   \"kiwi-greeting==1.0.0\",\n# ]\n# ///\n\"\"\"\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\n\"\"\"\nfrom kiwi_greeting import greet\nprint(greet('inline'))\n",
    });
    const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });
    const install = await kiwi.run(["install"]);
    expect([install.exitCode, install.stderr]).toEqual([0, expect.any(String)]);
    expect((await kiwi.run(["exec", "greet_inline"])).stdout).toBe("hello, inline\n");
  });

  test("a requirements.txt with pip-compile's --hash options: pip checks them at lock, and says which requirement lacks one", async () => {
    const files = (requirements: string) => ({
      ".ai/tools/hashed/tool.yaml": "tool_id: hashed\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\n",
      ".ai/tools/hashed/requirements.txt": requirements,
      ".ai/tools/hashed/main.py": "from kiwi_greeting import greet\nprint(greet('hashed'))\n",
    });
    const root = makeProject(files("kiwi-greeting==1.0.0\nkiwi-words==2.0.0\n"));
    const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    const sha = (name: string) => JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.hashed.pypi.packages[name].sha256 as string;
    const [greeting, words] = [sha("kiwi-greeting"), sha("kiwi-words")];
    const txt = join(root, ".ai/tools/hashed/requirements.txt");
    writeFileSync(txt, `kiwi-greeting==1.0.0 \\\n    --hash=sha256:${greeting}\n    # via -r requirements.in\nkiwi-words==2.0.0 \\\n    --hash=sha256:${words}\n    # via kiwi-greeting\n`);
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    expect((await kiwi.run(["exec", "hashed"])).stdout).toBe("hello, hashed\n");
    // A dependency left out (pip-compile lists each with its pin and hash): pip refuses, and kiwi says which and why.
    writeFileSync(txt, `kiwi-greeting==1.0.0 --hash=sha256:${greeting}\n`);
    const unhashed = await kiwi.run(["lock"]);
    expect(unhashed.exitCode).toBe(15);
    expect(unhashed.stderr).toContain("error[E_DEPS]: hashed: kiwi-words>=2 has no == pin, which pip requires of every distribution once one requirement has a --hash");
    expect(unhashed.stderr).toContain("hint: give every requirement, its dependencies included, an == pin and a --hash");
    // A wrong hash at lock is the requirement's or the index's, not a lock's: nothing is locked yet.
    writeFileSync(txt, `kiwi-greeting==1.0.0 --hash=sha256:${"0".repeat(64)}\nkiwi-words==2.0.0 --hash=sha256:${words}\n`);
    const wrong = await kiwi.run(["lock"]);
    expect(wrong.exitCode).toBe(6);
    expect(wrong.stderr).toContain("error[E_INTEGRITY_MISMATCH]: hashed: cannot get kiwi-greeting==1.0.0: a distribution does not match the sha256 its index lists or its --hash names");
    expect(wrong.stderr).toContain("nothing was locked");
  });

  test("a pip option in requirements.txt is a check error naming the file and line", async () => {
    const root = makeProject({
      ".ai/tools/opt/tool.yaml": "tool_id: opt\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig: { entrypoint: main.py }\n",
      ".ai/tools/opt/requirements.txt": "kiwi-greeting==1.0.0\n-e ./local\n",
      ".ai/tools/opt/main.py": "print(1)\n",
    });
    const r = await kiwiIn(root).run(["check", "--json"]);
    expect(r.exitCode).not.toBe(0);
    const finding = (JSON.parse(r.stdout).findings as { rule: string; message: string }[]).find((f) => f.rule === "deps/requirement");
    expect(finding?.message).toContain(".ai/tools/opt/requirements.txt:2: \"-e ./local\" is a pip option, URL or path");
  });
});

/** A stdio MCP server in plain Python (newline-delimited JSON-RPC), published as a wheel with a console script. */
const ECHO_SERVER = `import json, sys

def main():
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method = msg.get("method")
        if method == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "kiwi-echo-server", "version": "1.0.0"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "echo", "description": "Echoes the message.", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "Echo: " + msg["params"]["arguments"]["message"]}]}
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "unknown method"}}) + "\\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\\n")
        sys.stdout.flush()
`;

test("a Python MCP server runs from its installed package (config.package: pypi:…), in the sandbox with no network", async () => {
  index.publish({
    name: "kiwi-echo-server",
    version: "1.0.0",
    files: { "kiwi_echo_server/__init__.py": ECHO_SERVER, "kiwi_echo_server-1.0.0.dist-info/entry_points.txt": "[console_scripts]\nkiwi-echo-server = kiwi_echo_server:main\n" },
  });
  const root = makeProject({
    ".ai/tools/echo_py.yaml":
      "tool_id: echo_py\ntool_type: mcp_server\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  package: pypi:kiwi-echo-server==1.0.0\nvalidation:\n  child_schemas:\n    - match: { tool_type: mcp_tool }\n      schema: { type: object }\n",
    ".ai/tools/say.yaml": "tool_id: say\ntool_type: mcp_tool\nversion: 1.0.0\nexecutor: echo_py\nconfig: { tool_name: echo }\nparameters:\n  - { name: message, type: string, required: true }\n",
  });
  const kiwi = kiwiIn(root, { PIP_INDEX_URL: index.url });
  const install = await kiwi.run(["install"]);
  expect(install.exitCode).toBe(0);
  expect(Object.keys(JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).mcp_servers)).toEqual(["echo_py"]);
  const r = await kiwi.run(["exec", "say", "--param", "message=hi", ...(probeSandbox(process.env).usable ? ["--sandbox=require"] : [])], { PIP_INDEX_URL: "http://127.0.0.1:9/simple/" });
  expect([r.exitCode, r.stdout]).toEqual([0, "Echo: hi\n"]);
  // The console script kiwi starts is read from the cached entry_points.txt: a rewritten one is evicted, not run.
  const tree = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8")).dependencies.echo_py.pypi.tree.slice("sha256:".length) as string;
  const entry = (JSON.parse(readFileSync(join(kiwi.cache, "index", tree.slice(0, 2), `${tree.slice(2)}.json`), "utf8")).files as { path: string; sha256: string }[]).find((f) => f.path.endsWith("/entry_points.txt"))!;
  const blob = join(kiwi.cache, "blobs", entry.sha256.slice(0, 2), entry.sha256.slice(2));
  chmodSync(blob, 0o644);
  writeFileSync(blob, "[console_scripts]\nkiwi-echo-server = os:getcwd\n");
  const tampered = await kiwi.run(["exec", "say", "--param", "message=hi"]);
  expect([tampered.exitCode, tampered.stdout]).toEqual([4, ""]);
  expect(tampered.stderr).toContain("error[E_CACHE_CORRUPT]");
});
