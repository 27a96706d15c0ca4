// Which packages a tool declares, read from its manifest.
import { describe, expect, test } from "bun:test";
import type { CanonicalValue } from "../../src/integrity/value.ts";
import { allowedScripts, declaredPackages, declaresPackages, isExactVersion, npmDependencies, parseRequirement, pypiRequirements, requirementChanges } from "../../src/deps/requirements.ts";
import { normalizeManifest } from "../../src/manifest/normalize.ts";

const tool = (doc: Record<string, unknown>) => normalizeManifest({ tool_id: "t", version: "1.0.0", ...doc } as CanonicalValue, "t");

describe("a requirement", () => {
  test.each([
    ["npm:left-pad@1.3.0", undefined, { ecosystem: "npm", name: "left-pad", range: "1.3.0" }],
    ["npm:@scope/pkg@^2.1", undefined, { ecosystem: "npm", name: "@scope/pkg", range: "^2.1" }],
    ["npm:left-pad", undefined, { ecosystem: "npm", name: "left-pad", range: "" }],
    ["npm:JSONStream@^1.3.5", undefined, { ecosystem: "npm", name: "JSONStream", range: "^1.3.5" }],
    ["npm:left-pad@>= 1.2.0 < 2 || 3.x", undefined, { ecosystem: "npm", name: "left-pad", range: ">= 1.2.0 < 2 || 3.x" }],
    ["npm:left-pad@1.0.0 - 1.3.0", undefined, { ecosystem: "npm", name: "left-pad", range: "1.0.0 - 1.3.0" }],
    ["left-pad@~1.3", "npm", { ecosystem: "npm", name: "left-pad", range: "~1.3" }],
    // An alias installs another package under this name, pinned by version like any.
    ["npm:pad@npm:left-pad@^1.3.0", undefined, { ecosystem: "npm", name: "pad", range: "npm:left-pad@^1.3.0" }],
    ["string-width-cjs@npm:string-width@^4.2.0", "npm", { ecosystem: "npm", name: "string-width-cjs", range: "npm:string-width@^4.2.0" }],
    ["npm:@acme/ui@npm:@other/ui@2.0.0", undefined, { ecosystem: "npm", name: "@acme/ui", range: "npm:@other/ui@2.0.0" }],
    ["npm:pad@npm:left-pad", undefined, { ecosystem: "npm", name: "pad", range: "npm:left-pad" }],
    ["pypi:httpx>=0.24.0", undefined, { ecosystem: "pypi", name: "httpx", range: ">=0.24.0" }],
    ["pydantic>=2.0", "pypi", { ecosystem: "pypi", name: "pydantic", range: ">=2.0" }],
    ["pypi:httpx[http2]>=0.24; python_version >= '3.8' and platform_machine != 'x86@64'", undefined, { ecosystem: "pypi", name: "httpx", range: "[http2]>=0.24; python_version >= '3.8' and platform_machine != 'x86@64'" }],
  ] as const)("%s reads as %o", (raw, fallback, expected) => {
    expect(parseRequirement(raw, "/requires/0", fallback)).toMatchObject(expected);
  });

  test.each([
    ["left-pad@1", undefined, "names no ecosystem"],
    ["npm:Left Pad@1", undefined, "is not an npm package name"],
    ["npm:left-pad@latest", undefined, "is not a version range"],
    ["npm:left-pad@next", undefined, "is not a version range"],
    ["npm:@scope/pkg@beta", undefined, "is not a version range"],
    ["npm:left-pad@npm:right-pad@latest", undefined, "is not a version range"],
    ["npm:left-pad@npm:Right Pad@1", undefined, "is not an npm package name"],
    ["npm:left-pad@npm:@scope@1", undefined, "is not an npm package name"],
    ["npm:left-pad@https://x.test/a.tgz", undefined, "is not a version range"],
    ["npm:left-pad@file:../x", undefined, "is not a version range"],
    ["pypi:>=1", undefined, "is not a PEP 508 requirement"],
    ["pypi:kiwi-words @ https://x.test/kiwi_words-2.0.0-py3-none-any.whl", undefined, "is a direct reference (a URL or path)"],
    ["pypi:httpx[http2]@file:///wheels/httpx-0.27.0-py3-none-any.whl ; python_version >= '3.8'", undefined, "is a direct reference"],
    ["httpx @ git+https://github.com/encode/httpx", "pypi", "is a direct reference"],
  ] as const)("%s is refused: %s", (raw, fallback, message) => {
    const read = parseRequirement(raw, "/requires/0", fallback);
    expect("message" in read && read.message).toContain(message);
  });

  test("an exact version is MAJOR.MINOR.PATCH with an optional pre-release", () => {
    expect([isExactVersion("1.2.3"), isExactVersion("2026.8.31"), isExactVersion("1.0.0-rc.1"), isExactVersion("^1.2.3"), isExactVersion("1.2")]).toEqual([true, true, true, false, false]);
  });
});

describe("a tool's packages", () => {
  test("capabilities are not packages; bare requirements take the runtime's ecosystem", () => {
    const declared = declaredPackages(tool({ tool_type: "script", executor: "node_runtime", requires: ["fs.read", { "net.outbound": ["x.test"] }, "npm:a@1.0.0", "b@^2"] }));
    expect(declared.requirements.map((r) => `${r.ecosystem}:${r.name}@${r.range}`)).toEqual(["npm:a@1.0.0", "npm:b@^2"]);
    expect(npmDependencies(declared)).toEqual({ dependencies: { a: "1.0.0", b: "^2" }, conflicts: [] });
  });

  test("a Python tool's bare requirements are PyPI's, and bring no npm packages", () => {
    const declared = declaredPackages(tool({ tool_type: "script", executor: "python_runtime", requires: ["httpx>=0.24"] }));
    expect(declared.requirements.map((r) => r.ecosystem)).toEqual(["pypi"]);
    expect(npmDependencies(declared)).toBeUndefined();
  });

  test("an mcp_server's config.package is its server, pinned to an exact version, with an optional bin", () => {
    const declared = declaredPackages(tool({ tool_type: "mcp_server", executor: "subprocess", config: { transport: "stdio", package: "npm:@modelcontextprotocol/server-everything@2026.8.31", bin: "mcp-server-everything" } }));
    expect(declared.server).toMatchObject({ requirement: { name: "@modelcontextprotocol/server-everything", range: "2026.8.31" }, bin: "mcp-server-everything" });
    expect(npmDependencies(declared)?.dependencies).toEqual({ "@modelcontextprotocol/server-everything": "2026.8.31" });
  });

  test.each([
    [{ package: "npm:srv@^1.0.0" }, "names no exact version"],
    [{ package: "npm:srv@latest" }, "is not a version range"],
    [{ package: "npm:srv@npm:@acme/server@^1.0.0" }, "names no exact version"],
    [{ package: "pypi:srv>=1.0" }, "names no exact version"],
    [{ package: "pypi:srv[cli]>=1.0" }, "names no exact version"],
    [{ package: 42 }, "config.package must be a string"],
    [{ package: "npm:srv@1.0.0", bin: "" }, "config.bin must be the name of one of the package's bins"],
    [{ package: "npm:srv@1.0.0", command: "npx" }, "config.command and config.package both say how to start the server"],
  ])("config %o is a problem: %s", (config, message) => {
    const declared = declaredPackages(tool({ tool_type: "mcp_server", executor: "subprocess", config: { transport: "stdio", ...config } }));
    expect(declared.problems.map((p) => p.message).join("; ")).toContain(message);
  });

  test("a Python server package is a pinned PyPI requirement", () => {
    const declared = declaredPackages(tool({ tool_type: "mcp_server", executor: "subprocess", config: { transport: "stdio", package: "pypi:mcp-server-fetch==2025.4.7" } }));
    expect(declared.problems).toEqual([]);
    expect(pypiRequirements(declared)).toEqual(["mcp-server-fetch==2025.4.7"]);
    expect(npmDependencies(declared)).toBeUndefined();
    // Pinned with extras (what `uvx 'srv[cli]==1.0'` runs): the extras' distributions come with it.
    const extras = declaredPackages(tool({ tool_type: "mcp_server", executor: "subprocess", config: { transport: "stdio", package: "pypi:mcp-server-x[cli, http] == 1.2.0" } }));
    expect([extras.problems, extras.server?.requirement.name, pypiRequirements(extras)]).toEqual([[], "mcp-server-x", ["mcp-server-x[cli, http] == 1.2.0"]]);
  });

  test("one package with two ranges is a conflict", () => {
    expect(npmDependencies(declaredPackages(tool({ tool_type: "script", executor: "node_runtime", requires: ["npm:a@^1", "npm:a@^2"] })))?.conflicts).toEqual(["a is required as ^1 and as ^2"]);
  });
});

describe("a tool's requirements against its lock entry", () => {
  const node = tool({ tool_type: "script", executor: "node_runtime", requires: ["npm:a@^1.0.0", "npm:b@2.0.0", "fs.read"] });
  const python = tool({ tool_type: "script", executor: "python_runtime", requires: ["httpx>=0.24", "pydantic>=2.0"] });

  test("capabilities are not packages; runtimes and servers decide what is", () => {
    expect(declaresPackages(node)).toBe(true);
    expect(declaresPackages(tool({ tool_type: "script", executor: "subprocess", requires: ["fs.read", "net.outbound"] }))).toBe(false);
    expect(declaresPackages(tool({ tool_type: "mcp_server", executor: "subprocess", config: { transport: "stdio", package: "npm:@scope/server@1.2.3" } }))).toBe(true);
  });

  test("an unchanged set has no changes, in any order", () => {
    expect(requirementChanges(node, { npm: { requires: { b: "2.0.0", a: "^1.0.0" }, packages: {} } })).toEqual([]);
    expect(requirementChanges(python, { pypi: { requires: ["pydantic>=2.0", "httpx>=0.24"], packages: {} } })).toEqual([]);
  });

  test("an added, removed or changed requirement is named", () => {
    expect(requirementChanges(node, { npm: { requires: { a: "^0.9.0", c: "1.0.0" }, packages: {} } })).toEqual([{ ecosystem: "npm", changes: ["~ a ^0.9.0 -> ^1.0.0", "+ b@2.0.0", "- c@1.0.0"] }]);
    expect(requirementChanges(python, { pypi: { requires: ["httpx>=0.23"], packages: {} } })).toEqual([{ ecosystem: "pypi", changes: ["+ httpx>=0.24", "+ pydantic>=2.0", "- httpx>=0.23"] }]);
  });

  test("package.json's overrides are part of what the lock resolves: added, changed or dropped, they are a change; reordered, not", () => {
    const withOverrides = (overrides: unknown) => ({ ...tool({ tool_type: "script", executor: "node_runtime" }), fileRequirements: { pypi: [], problems: [], npm: { dependencies: { a: "^1.0.0" }, ...(overrides ? { overrides } : {}), source: "t/package.json" } } }) as never;
    const locked = { npm: { requires: { a: "^1.0.0" }, overrides: { b: "1.0.0", c: "2.0.0" }, packages: {} } };
    expect(requirementChanges(withOverrides({ c: "2.0.0", b: "1.0.0" }), locked)).toEqual([]);
    expect(requirementChanges(withOverrides({ b: "1.0.1", c: "2.0.0" }), locked)).toEqual([{ ecosystem: "npm", changes: ['~ overrides {"b":"1.0.0","c":"2.0.0"} -> {"b":"1.0.1","c":"2.0.0"}'] }]);
    expect(requirementChanges(withOverrides(undefined), locked)).toEqual([{ ecosystem: "npm", changes: ['~ overrides {"b":"1.0.0","c":"2.0.0"} -> (none)'] }]);
  });

  test("a lock entry for an ecosystem the tool no longer uses is a change; no entry at all, every requirement is one", () => {
    expect(requirementChanges(python, { npm: { requires: { a: "1.0.0" }, packages: {} }, pypi: { requires: ["httpx>=0.24", "pydantic>=2.0"], packages: {} } })).toEqual([{ ecosystem: "npm", changes: ["- a@1.0.0"] }]);
    expect(requirementChanges(node, undefined)).toEqual([{ ecosystem: "npm", changes: ["+ a@^1.0.0", "+ b@2.0.0"] }]);
  });
});

describe("who may run code at install (allow_scripts)", () => {
  test("names in the runtime's ecosystem or prefixed, PyPI names normalised, once each", () => {
    const declared = declaredPackages(tool({ tool_type: "script", executor: "python_runtime", requires: ["a>=1"], allow_scripts: ["Legacy_Pkg", "npm:esbuild", "pypi:legacy-pkg"] }));
    expect(declared.problems).toEqual([]);
    expect(allowedScripts(declared, "pypi")).toEqual(["legacy-pkg"]);
    expect(allowedScripts(declared, "npm")).toEqual(["esbuild"]);
  });

  test("package.json's allowScripts allows the names set to true, with or without a version", () => {
    const t = { ...tool({ tool_type: "script", executor: "node_runtime" }), fileRequirements: { pypi: [], problems: [], npm: { dependencies: { esbuild: "^0.25.0" }, allowScripts: { "esbuild@0.25.1": true, telemetry: false }, source: "t/package.json" } } };
    expect(allowedScripts(declaredPackages(t), "npm")).toEqual(["esbuild"]);
  });

  test.each([
    [["Not A Name"], "names no ecosystem"],
    [["npm:Not A Name"], "is not an npm package name"],
    [[42], "must be a package name"],
    ["esbuild", "must be a list"],
  ] as const)("%o is refused: %s", (allow, message) => {
    const declared = declaredPackages(tool({ tool_type: "script", executor: "subprocess", allow_scripts: allow }));
    expect(declared.problems.map((p) => p.message).join("\n")).toContain(message);
  });

  test("a changed allowance is a change the lock must record", () => {
    const t = tool({ tool_type: "script", executor: "node_runtime", requires: ["npm:a@1.0.0"], allow_scripts: ["a"] });
    expect(requirementChanges(t, { npm: { requires: { a: "1.0.0" }, packages: {} } })).toEqual([{ ecosystem: "npm", changes: ["+ allow_scripts a"] }]);
    expect(requirementChanges(t, { npm: { requires: { a: "1.0.0" }, allow_scripts: ["a"], packages: {} } })).toEqual([]);
  });
});
