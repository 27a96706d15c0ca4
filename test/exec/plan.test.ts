import { describe, expect, test } from "bun:test";
import { type HttpPlan, type LinkInput, type PlanHost, type PlanTool, type SubprocessPlan, buildPlan, buildPlans } from "../../src/exec/plan.ts";
import { builtinTools } from "../../src/manifest/builtins.ts";
import { withConfig } from "../../src/manifest/model.ts";
import { mergeConfigs } from "../../src/exec/merge.ts";
import { type CanonicalValue, Float, toPlain } from "../../src/integrity/value.ts";
import { renderJson } from "../../src/ui/output.ts";

const builtin = (id: string): PlanTool => builtinTools().find((t) => t.id === id)!;
const host: PlanHost = { which: (cmd) => `/usr/bin/${cmd}`, userAgent: "kiwi/test" };
const env = { PATH: "/usr/bin:/bin", HOME: "/home/u", LANG: "C.UTF-8", API_TOKEN: "tok-123", OTHER: "x", BASE: "https://api.example.com" };

function script(config: Record<string, unknown>, limits: PlanTool["limits"] = {}): PlanTool {
  return { id: "dp", version: "1.0.0", type: "script", config, limits, entrypoint: config.entrypoint as string | undefined, manifestFile: ".ai/tools/dp/tool.yaml" };
}

function subprocessPlan(leaf: PlanTool, params: Record<string, unknown> = {}, options: { redact?: boolean; host?: PlanHost } = {}): SubprocessPlan {
  const chain: LinkInput[] = [
    { tool: leaf, integrity: "sha256:aa", runDir: "/cache/runs/aa/files" },
    { tool: builtin("python_runtime"), integrity: "sha256:bb", runDir: null },
    { tool: builtin("subprocess"), integrity: "sha256:cc", runDir: null },
  ];
  return buildPlan({ chain, params, env, host: options.host ?? host, mode: "locked", redact: options.redact }) as SubprocessPlan;
}

function api(config: Record<string, unknown>): PlanTool {
  return { id: "weather", version: "1.0.0", type: "api", config, limits: {}, manifestFile: ".ai/tools/weather.yaml" };
}

function httpPlan(config: Record<string, unknown>, params: Record<string, unknown> = {}, redact = false): HttpPlan {
  const chain: LinkInput[] = [
    { tool: api(config), integrity: "sha256:aa", runDir: null },
    { tool: builtin("http_client"), integrity: "sha256:cc", runDir: null },
  ];
  return buildPlan({ chain, params, env, host, mode: "locked", redact }) as HttpPlan;
}

describe("subprocess plans", () => {
  test("runtime base args come before the entry point, the tool's own args after it", () => {
    const plan = subprocessPlan(script({ entrypoint: "main.py", args: ["--city", "{city}"] }), { city: "Paris" });
    expect(plan.subprocess.argv).toEqual(["/usr/bin/python3", "-B", "-u", "/cache/runs/aa/files/main.py", "--city", "Paris"]);
    expect(plan.subprocess.cwd).toBe("/cache/runs/aa/files");
    expect(plan.subprocess.stdin).toBe("json");
    expect(plan.chain.map((l) => `${l.id}:${l.integrity}`)).toEqual(["dp:sha256:aa", "python_runtime:sha256:bb", "subprocess:sha256:cc"]);
  });

  test("a runtime's own entry point (a wrapper it ships) runs from its run directory, before the tool's: each link's entry point, then its args", () => {
    const wrapper: PlanTool = { id: "wrap_rt", version: "1.0.0", type: "runtime", config: { command: "python3", entrypoint: "boot.py", args: ["-q"] }, limits: {}, entrypoint: "boot.py", manifestFile: ".ai/tools/wrap_rt/tool.yaml" };
    const chain: LinkInput[] = [
      { tool: script({ entrypoint: "main.py", args: ["--n", "1"] }), integrity: "sha256:aa", runDir: "/cache/runs/aa/files" },
      { tool: wrapper, integrity: "sha256:bb", runDir: "/cache/runs/bb/files" },
      { tool: builtin("subprocess"), integrity: "sha256:cc", runDir: null },
    ];
    const plan = buildPlan({ chain, params: {}, env, host, mode: "locked" }) as SubprocessPlan;
    expect(plan.subprocess.argv).toEqual(["/usr/bin/python3", "/cache/runs/bb/files/boot.py", "-q", "/cache/runs/aa/files/main.py", "--n", "1"]);
  });

  test.each([
    ["; rm -rf ~"],
    ["$(touch /tmp/pwned)"],
    ["`id`"],
    ["a b\tc\nd"],
    ["' \" \\"],
    ["--help"],
  ])("the value %p stays exactly one argv element", (value) => {
    const plan = subprocessPlan(script({ entrypoint: "main.py", args: ["{q}", "--q={q}"] }), { q: value });
    expect(plan.subprocess.argv.slice(4)).toEqual([value, `--q=${value}`]);
  });

  test("an argument naming an absent optional parameter is left out whole", () => {
    const plan = subprocessPlan(script({ entrypoint: "main.py", args: ["--limit={limit}", "--fixed"] }));
    expect(plan.subprocess.argv.slice(4)).toEqual(["--fixed"]);
  });

  test("a NUL byte in an argument is a parameter violation", () => {
    expect(() => subprocessPlan(script({ entrypoint: "main.py", args: ["{q}"] }), { q: "a\0b" })).toThrow(
      expect.objectContaining({ code: "E_PARAMS_INVALID", message: expect.stringContaining("params/q: must not contain NUL bytes") }),
    );
  });

  test("the environment is the allowlist plus what the chain declares", () => {
    const plan = subprocessPlan(script({ entrypoint: "main.py", env: { TOKEN: "${API_TOKEN}", CITY: "{city}", MISSING_PARAM: "{nope}" } }), { city: "Oslo" });
    expect(plan.subprocess.env).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/home/u",
      LANG: "C.UTF-8",
      PYTHONDONTWRITEBYTECODE: "1",
      PYTHONUNBUFFERED: "1",
      TOKEN: "tok-123",
      CITY: "Oslo",
    });
    expect(plan.secrets).toEqual(["API_TOKEN"]);
  });

  test("the shown plan has *** for secret values and nothing else differs", () => {
    const leaf = script({ entrypoint: "main.py", args: ["--token=${MY_KEY}"], env: { K: "${MY_KEY}" }, secrets: ["MY_KEY"] });
    const withKey = { ...host };
    const real = buildPlan({ chain: [{ tool: leaf, integrity: "sha256:aa", runDir: "/r" }, { tool: builtin("python_runtime"), integrity: null, runDir: null }, { tool: builtin("subprocess"), integrity: null, runDir: null }], params: {}, env: { ...env, MY_KEY: "hunter2" }, host: withKey, mode: "locked" }) as SubprocessPlan;
    const shown = buildPlan({ chain: [{ tool: leaf, integrity: "sha256:aa", runDir: "/r" }, { tool: builtin("python_runtime"), integrity: null, runDir: null }, { tool: builtin("subprocess"), integrity: null, runDir: null }], params: {}, env: { ...env, MY_KEY: "hunter2" }, host: withKey, mode: "locked", redact: true }) as SubprocessPlan;
    expect(real.subprocess.argv).toContain("--token=hunter2");
    expect(real.subprocess.env.K).toBe("hunter2");
    expect(JSON.stringify(shown)).not.toContain("hunter2");
    expect(shown.subprocess.argv).toContain("--token=***");
    expect(shown.subprocess.env.K).toBe("***");
  });

  test("buildPlans redacts a plan naming a secret into a twin; a plan naming none is shown as it is", () => {
    const chainOf = (leaf: PlanTool): LinkInput[] => [{ tool: leaf, integrity: "sha256:aa", runDir: "/r" }, { tool: builtin("python_runtime"), integrity: null, runDir: null }, { tool: builtin("subprocess"), integrity: null, runDir: null }];
    const input = (leaf: PlanTool) => ({ chain: chainOf(leaf), params: {}, env: { ...env, MY_KEY: "hunter2" }, host, mode: "locked" as const });
    const secret = buildPlans(input(script({ entrypoint: "main.py", env: { K: "${MY_KEY}" }, secrets: ["MY_KEY"] })));
    expect([(secret.plan as SubprocessPlan).subprocess.env.K, (secret.shown as SubprocessPlan).subprocess.env.K]).toEqual(["hunter2", "***"]);
    // MY_KEY is not declared secret here (nor named like one), so nothing would be redacted.
    const plain = buildPlans(input(script({ entrypoint: "main.py", env: { K: "${MY_KEY}" } })));
    expect(plain.shown).toBe(plain.plan);
    expect(JSON.stringify(plain.shown)).toBe(JSON.stringify(buildPlan({ ...input(script({ entrypoint: "main.py", env: { K: "${MY_KEY}" } })), redact: true })));
  });

  test("plans completed from their bare twins equal plans built with the launch from the start", () => {
    const chain: LinkInput[] = [{ tool: script({ entrypoint: "main.py", env: { K: "${MY_KEY}" }, secrets: ["MY_KEY"] }), integrity: "sha256:aa", runDir: "/r" }, { tool: builtin("python_runtime"), integrity: null, runDir: null }, { tool: builtin("subprocess"), integrity: null, runDir: null }];
    const input = { chain, params: {}, env: { ...env, MY_KEY: "hunter2" }, host, mode: "locked" as const };
    const probe = { bwrap: null, usable: false, prlimit: "/usr/bin/prlimit", setpriv: null, uid: 1000, pid: 1, reason: "off" };
    const launch = { mode: "off" as const, probe, home: "/home/u", projectRoot: "/p", capabilities: [], limits: {}, runDirs: ["/r"], programs: { "/usr/bin/python3": { resolved: "/usr/bin/python3" } } };
    const bare = { plan: buildPlan(input), shown: buildPlan({ ...input, redact: true }) };
    const completed = buildPlans({ ...input, launch }, bare);
    const fresh = buildPlans({ ...input, launch });
    expect(JSON.stringify(completed.plan)).toBe(JSON.stringify(fresh.plan));
    expect(JSON.stringify(completed.shown)).toBe(JSON.stringify(fresh.shown));
    expect(completed.notes).toEqual(fresh.notes);
    expect((completed.plan as SubprocessPlan).subprocess.launch.slice(0, 2)).toEqual(["/usr/bin/prlimit", "--data=2147483648"]);
    expect(JSON.stringify(completed.shown)).not.toContain("hunter2");
  });

  test("an unset ${VAR} refuses the plan, naming it", () => {
    expect(() => subprocessPlan(script({ entrypoint: "main.py", env: { X: "${NOT_SET_ANYWHERE}" } }))).toThrow(expect.objectContaining({ code: "E_EXEC_FAILED", message: expect.stringContaining("${NOT_SET_ANYWHERE}") }));
  });

  test.each([["${INTERP}"], ["${PREFIX}/bin/python3"], ["bin/${INTERP}"]])("a command %p built from an unset ${VAR} refuses the plan naming every unset variable, not as a program missing from PATH", (command) => {
    const rt: PlanTool = { ...builtin("python_runtime"), config: { command } };
    const chain: LinkInput[] = [{ tool: script({ entrypoint: "m.py", env: { X: "${ALSO_UNSET}" } }), integrity: null, runDir: "/r" }, { tool: rt, integrity: null, runDir: null }, { tool: builtin("subprocess"), integrity: null, runDir: null }];
    const none: PlanHost = { ...host, which: () => null };
    const name = command.includes("PREFIX") ? "PREFIX" : "INTERP";
    expect(() => buildPlan({ chain, params: {}, env, host: none, mode: "locked" })).toThrow(
      expect.objectContaining({ code: "E_EXEC_FAILED", message: `dp references \${ALSO_UNSET}, \${${name}}, which are not set in the environment`, details: { missingEnv: ["ALSO_UNSET", name] } }),
    );
  });

  test("a command missing from PATH is named with the link that declares it", () => {
    const none: PlanHost = { ...host, which: () => null };
    expect(() => subprocessPlan(script({ entrypoint: "main.py" }), {}, { host: none })).toThrow(expect.objectContaining({ code: "E_EXEC_FAILED", message: "python3 (the command of python_runtime) was not found on PATH" }));
  });

  test.each([["../outside.py"], ["/etc/passwd"]])("refuses the entry point %s outside the run directory", (entry) => {
    expect(() => subprocessPlan(script({ entrypoint: entry }))).toThrow(expect.objectContaining({ code: "E_EXEC_FAILED", message: expect.stringContaining("leaves the tool directory") }));
  });

  // One rule with kiwi check (integrity/tool-path.ts): exec used to accept a `..` that normalises
  // back inside, and a home-relative path, which check refuses as security/path.
  test.each([["lib/../main.py", "contains '..'"], ["~/main.py", "is relative to a home directory"], ["main.py\0", "contains a NUL byte"]])("refuses the entry point %p as kiwi check does (it %s)", (entry, reason) => {
    expect(() => subprocessPlan(script({ entrypoint: entry }))).toThrow(expect.objectContaining({ code: "E_EXEC_FAILED", message: expect.stringContaining(`leaves the tool directory (it ${reason})`) }));
  });

  test("a native tool straight on subprocess runs its entry point as the program", () => {
    const native: PlanTool = { id: "nat", version: "1.0.0", type: "native", config: { args: ["-v"] }, limits: {}, entrypoint: "bin/run", manifestFile: ".ai/tools/nat/tool.json" };
    const plan = buildPlan({ chain: [{ tool: native, integrity: "sha256:aa", runDir: "/r" }, { tool: builtin("subprocess"), integrity: "sha256:cc", runDir: null }], params: {}, env, host, mode: "locked" }) as SubprocessPlan;
    expect(plan.subprocess.argv).toEqual(["/r/bin/run", "-v"]);
  });

  test("parameters never choose the program", () => {
    const rt: PlanTool = { ...builtin("python_runtime"), config: { command: "{interp}" } };
    expect(() => buildPlan({ chain: [{ tool: script({ entrypoint: "m.py" }), integrity: null, runDir: "/r" }, { tool: rt, integrity: null, runDir: null }, { tool: builtin("subprocess"), integrity: null, runDir: null }], params: { interp: "sh" }, env, host, mode: "locked" })).toThrow(
      expect.objectContaining({ code: "E_EXEC_FAILED", message: expect.stringContaining("parameters cannot choose the program") }),
    );
  });

  test("limits: declared ones override along the chain, the rest are kiwi's defaults", () => {
    const plan = subprocessPlan(script({ entrypoint: "main.py" }, { memoryMb: 256, cpuSeconds: 2.5, timeoutMs: 1000 }));
    expect(plan.limits).toEqual({ timeoutMs: 1000, killGraceMs: 2000, outputBytes: 16 * 1024 * 1024, memoryMb: 256, cpuSeconds: 2.5, openFiles: 1024, processes: 128, declared: ["memoryMb", "cpuSeconds", "timeoutMs"] });
    expect(plan.subprocess.launch).toEqual(plan.subprocess.argv);
  });

  test("an http plan carries only the limits that apply to it", () => {
    expect(httpPlan({ method: "GET", url: "https://h.example/" }).limits).toEqual({ timeoutMs: 60_000, killGraceMs: 0, outputBytes: 16 * 1024 * 1024, declared: [] });
  });

  test("a knowledge document is refused as one, with a hint to read it, not as a chain missing its primitive", () => {
    const doc: PlanTool = { id: "notes", version: "1.0.0", type: "knowledge", config: {}, limits: {}, manifestFile: ".ai/tools/notes.md" };
    expect(() => buildPlan({ chain: [{ tool: doc, integrity: null, runDir: null }], params: {}, env, host, mode: "locked" })).toThrow(
      expect.objectContaining({ code: "E_CHAIN", message: "notes is a knowledge document (.ai/tools/notes.md): there is nothing to run", hint: expect.stringContaining("kiwi show notes") }),
    );
  });

  test("a chain that does not end in a primitive is refused", () => {
    expect(() => buildPlan({ chain: [{ tool: script({ entrypoint: "m.py" }), integrity: null, runDir: "/r" }, { tool: builtin("python_runtime"), integrity: null, runDir: null }], params: {}, env, host, mode: "locked" })).toThrow(
      expect.objectContaining({ code: "E_CHAIN" }),
    );
  });
});

describe("http_client plans", () => {
  test("parameters fill the URL path and query as encoded components", () => {
    const plan = httpPlan({ method: "get", url_template: "https://api.example.com/v1/{city}/forecast?days={days}&lang={lang}", query: { units: "{units}", fixed: "1" } }, { city: "São Paulo", days: 3, units: "metric" });
    expect(plan.http.method).toBe("GET");
    expect(plan.http.url).toBe("https://api.example.com/v1/S%C3%A3o%20Paulo/forecast?days=3&units=metric&fixed=1");
    expect(plan.http.body).toBeUndefined();
    expect(plan.http.retries).toBe(2);
  });

  test.each([
    ["../../admin", "https://api.example.com/v1/..%2F..%2Fadmin/forecast"],
    ["x?admin=1", "https://api.example.com/v1/x%3Fadmin%3D1/forecast"],
    ["x#frag", "https://api.example.com/v1/x%23frag/forecast"],
    ["x\r\nHost: evil", "https://api.example.com/v1/x%0D%0AHost%3A%20evil/forecast"],
    ["a/b", "https://api.example.com/v1/a%2Fb/forecast"],
    ["%2e%2e", "https://api.example.com/v1/%252e%252e/forecast"],
  ])("the path value %p cannot change the URL's structure", (city, url) => {
    const plan = httpPlan({ method: "GET", url_template: "https://api.example.com/v1/{city}/forecast" }, { city });
    expect(plan.http.url).toBe(url);
    expect(new URL(plan.http.url).host).toBe("api.example.com");
  });

  test.each([[".."], ["."]])("a parameter that makes a whole path segment %p is refused", (city) => {
    expect(() => httpPlan({ method: "GET", url_template: "https://api.example.com/v1/{city}/forecast" }, { city })).toThrow(
      expect.objectContaining({ code: "E_PARAMS_INVALID", message: expect.stringContaining('params/city: must not make a URL path segment "." or ".."') }),
    );
  });

  test("query values from a map are encoded, and an array repeats the key", () => {
    const plan = httpPlan({ method: "GET", url: "https://h.example/s", query: { q: "{q}", tag: "{tags}" } }, { q: "a&b=c#d", tags: ["x", "y"] });
    expect(plan.http.url).toBe("https://h.example/s?q=a%26b%3Dc%23d&tag=x&tag=y");
  });

  test("a parameter in the host is refused", () => {
    expect(() => httpPlan({ method: "GET", url_template: "https://{tenant}.example.com/x" }, { tenant: "evil.com/" })).toThrow(
      expect.objectContaining({ code: "E_EXEC_FAILED", message: expect.stringContaining("scheme or host") }),
    );
  });

  test("a host from the environment is allowed", () => {
    const plan = httpPlan({ method: "GET", url_template: "${BASE}/v1/{id}" }, { id: "7" });
    expect(plan.http.url).toBe("https://api.example.com/v1/7");
  });

  test("a path parameter the call does not give is required", () => {
    expect(() => httpPlan({ method: "GET", url_template: "https://h.example/{id}" })).toThrow(expect.objectContaining({ code: "E_PARAMS_INVALID", message: expect.stringContaining("params/id: is required by the URL path") }));
  });

  test("line breaks in a header value are refused", () => {
    expect(() => httpPlan({ method: "GET", url: "https://h.example/", headers: { "X-Q": "{q}" } }, { q: "a\r\nInjected: 1" })).toThrow(
      expect.objectContaining({ code: "E_PARAMS_INVALID", message: expect.stringContaining("params/q: must not contain line breaks or NUL when sent in header X-Q") }),
    );
  });

  test("POST without a body template sends the parameters; never retried", () => {
    const plan = httpPlan({ method: "POST", url: "https://h.example/items", retries: 5 }, { name: "x", n: 2 });
    expect(plan.http.body).toBe('{"name":"x","n":2}');
    expect(plan.http.headers["content-type"]).toBe("application/json");
    expect(plan.http.retries).toBe(0);
  });

  test("a body template keeps types", () => {
    const plan = httpPlan({ method: "PUT", url: "https://h.example/items", body: { item: { name: "{name}", count: "{n}" }, tag: "t-{name}" }, retries: 1 }, { name: "x", n: 2 });
    expect(JSON.parse(plan.http.body!)).toEqual({ item: { name: "x", count: 2 }, tag: "t-x" });
    expect(plan.http.retries).toBe(1);
  });

  test("a secret header is *** in the shown plan only", () => {
    const config = { method: "GET", url: "https://h.example/", headers: { Authorization: "Bearer ${API_TOKEN}" } };
    expect(httpPlan(config).http.headers.authorization).toBe("Bearer tok-123");
    expect(httpPlan(config, {}, true).http.headers.authorization).toBe("Bearer ***");
  });

  test("an invalid response_transform is refused at plan time", () => {
    expect(() => httpPlan({ method: "GET", url: "https://h.example/", response_transform: "$..x" })).toThrow(expect.objectContaining({ code: "E_INPUT_INVALID" }));
  });

  test.each([["ftp://h.example/x"], ["relative/path"]])("refuses the URL %s", (url) => {
    expect(() => httpPlan({ method: "GET", url })).toThrow(expect.objectContaining({ code: "E_EXEC_FAILED" }));
  });
});

describe("plans render the config as written", () => {
  // What the manifest parser makes of `12345678901234567890` and `1.0`: the plain view loses both.
  const exact = { big: 12345678901234567890n, one: new Float(1) };
  const withExact = (tool: PlanTool, lossless: Record<string, CanonicalValue>): PlanTool => ({ ...tool, configLossless: lossless });

  test("args and env keep integers past 2^53 and the .0 of 1.0", () => {
    const lossless = { entrypoint: "main.py", args: [exact.big, exact.one, "{q}"], env: { BIG: exact.big, ONE: exact.one } };
    const plan = subprocessPlan(withExact(script(toPlain(lossless) as Record<string, unknown>), lossless), { q: "x" });
    expect(plan.subprocess.argv.slice(4)).toEqual(["12345678901234567890", "1.0", "x"]);
    expect([plan.subprocess.env.BIG, plan.subprocess.env.ONE]).toEqual(["12345678901234567890", "1.0"]);
    expect(renderJson(plan.config)).toContain('"BIG": 12345678901234567890');
  });

  test("query, headers and body keep them too, and the shown config is the one written", () => {
    const lossless = { method: "POST", url: "https://api.example.com/v1", query: { id: exact.big, r: exact.one }, headers: { "x-id": exact.big }, body: { id: exact.big, ratio: exact.one } };
    const chain: LinkInput[] = [
      { tool: withExact(api(toPlain(lossless) as Record<string, unknown>), lossless), integrity: "sha256:aa", runDir: null },
      { tool: builtin("http_client"), integrity: "sha256:cc", runDir: null },
    ];
    const plan = buildPlan({ chain, params: {}, env, host, mode: "locked" }) as HttpPlan;
    expect(plan.http.url).toBe("https://api.example.com/v1?id=12345678901234567890&r=1.0");
    expect(plan.http.headers["x-id"]).toBe("12345678901234567890");
    expect(plan.http.body).toBe('{"id":12345678901234567890,"ratio":1.0}');
    expect(renderJson(plan.config)).toContain('"ratio": 1.0');
  });

  test("a config kiwi adjusts before the run (withConfig) changes both views", () => {
    const lossless = { entrypoint: "main.py", args: [exact.one] };
    const tool = withConfig(withExact(script(toPlain(lossless) as Record<string, unknown>), lossless), (c) => ({ ...c, args: ["--first", ...(c.args as unknown[])] }));
    expect(subprocessPlan(tool).subprocess.argv.slice(4)).toEqual(["--first", "1.0"]);
  });

  test("a lossless 1.0 in a map is a value, not a map to merge into", () => {
    const parent = { env: { A: new Float(1) } };
    const child = { env: { A: new Float(2) } };
    expect(mergeConfigs([parent, child])).toEqual({ env: { A: new Float(2) } });
  });
});
