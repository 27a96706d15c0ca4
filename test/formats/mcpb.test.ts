// The pure halves of MCPB: the signature block's framing, manifest.json mapped to a kiwi manifest,
// zip entry names judged. (Signing and verifying with real certificates: test/e2e/import-mcpb.test.ts.)
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { KiwiError } from "../../src/errors.ts";
import { zipSync } from "fflate";
import { importMcpbManifest, splitSignature, unsafeEntryName, zipUnixModes } from "../../src/formats/mcpb.ts";

const REAL = JSON.parse(readFileSync(join(import.meta.dir, "..", "fixtures", "real", "mcpb", "hello-world-node", "manifest.json"), "utf8"));
const enc = (s: string) => new TextEncoder().encode(s);

describe("the signature block", () => {
  test("a bundle without one is unsigned; one with one splits into zip and DER", () => {
    expect(splitSignature(enc("PKzip"), "b.mcpb")).toEqual({ zip: enc("PKzip") });
    const block = new Uint8Array([...enc("PKzip"), ...enc("MCPB_SIG_V1"), 3, 0, 0, 0, 1, 2, 3, ...enc("MCPB_SIG_END")]);
    const split = splitSignature(block, "b.mcpb");
    expect([Buffer.from(split.zip).toString(), [...split.signature!]]).toEqual(["PKzip", [1, 2, 3]]);
  });

  test("a footer without a matching header and length is refused", () => {
    expect(() => splitSignature(new Uint8Array([...enc("PKzip"), ...enc("MCPB_SIG_V1"), 9, 0, 0, 0, 1, ...enc("MCPB_SIG_END")]), "b.mcpb")).toThrow("signature block is malformed");
  });
});

describe("manifest.json", () => {
  test("the real hello-world-node manifest: ${__dirname} is the run directory, user_config becomes defaults or ${VAR}", () => {
    const r = importMcpbManifest(REAL, "h.mcpb", { platform: "linux" });
    expect(r.manifest).toEqual({
      tool_id: "hello-world-node",
      tool_type: "mcp_server",
      version: "0.1.0",
      description: "A reference MCP extension demonstrating best practices and all available features",
      executor: "subprocess",
      config: {
        transport: "stdio",
        command: "node",
        args: ["./server/index.js", "--verbose=false", "--max-results=10", "--config=", "--workspace=${HOME}/Documents"],
        env: { API_KEY: "${API_KEY}", DEBUG: "info" },
        secrets: ["API_KEY"],
      },
    });
    expect(r.entryPoint).toBe("server/index.js");
  });

  test("platform_overrides for the host platform apply", () => {
    const doc = { ...REAL, server: { ...REAL.server, mcp_config: { ...REAL.server.mcp_config, platform_overrides: { linux: { command: "nodejs" } } } } };
    const r = importMcpbManifest(doc, "h.mcpb", { platform: "linux" });
    expect((r.manifest.config as { command: string }).command).toBe("nodejs");
    expect(r.notes[0]).toContain("platform_overrides.linux");
  });

  test("platform_overrides' env adds to the base env, as the mcpb host merges it; command and args replace", () => {
    const base = { command: "node", args: ["server/index.js"], env: { BASE: "1", SHARED: "base" } };
    const doc = { ...REAL, user_config: {}, server: { ...REAL.server, mcp_config: { ...base, platform_overrides: { linux: { env: { SHARED: "linux", EXTRA: "2" } }, darwin: { command: "other" } } } } };
    const r = importMcpbManifest(doc, "h.mcpb", { platform: "linux" });
    expect(r.manifest.config).toEqual({ transport: "stdio", command: "node", args: ["server/index.js"], env: { BASE: "1", SHARED: "linux", EXTRA: "2" } });
  });

  test("an argument that is exactly a multiple-valued option becomes one argument per value", () => {
    const user_config = { dirs: { type: "directory", title: "Dirs", description: "d", multiple: true, required: true, default: ["${HOME}/Desktop", "/srv/{x}"] } };
    const doc = { ...REAL, user_config, server: { ...REAL.server, mcp_config: { command: "node", args: ["server/index.js", "${user_config.dirs}", "--dirs=${user_config.dirs}"] } } };
    const r = importMcpbManifest(doc, "h.mcpb", { platform: "linux" });
    expect((r.manifest.config as { args: string[] }).args).toEqual(["server/index.js", "${HOME}/Desktop", "/srv/{{x}}", "--dirs=${HOME}/Desktop,/srv/{{x}}"]);
  });

  test.each([
    ["itself", { a: { type: "string", title: "A", description: "a", default: "x${user_config.a}" } }, "the default of user_config.a refers to itself (a -> a)"],
    ["itself through another option", { a: { type: "string", title: "A", description: "a", default: "${user_config.b}" }, b: { type: "string", title: "B", description: "b", default: ["${user_config.a}"] } }, "the default of user_config.a refers to itself (a -> b -> a)"],
  ])("a default that refers to %s is refused naming the field, not followed forever", (_what, user_config, message) => {
    const doc = { ...REAL, user_config, server: { ...REAL.server, mcp_config: { command: "node", args: ["--a=${user_config.a}"] } } };
    try {
      importMcpbManifest(doc, "h.mcpb", { platform: "linux" });
      throw new Error("not refused");
    } catch (error) {
      expect(error).toBeInstanceOf(KiwiError);
      expect((error as KiwiError).code).toBe("E_INPUT_INVALID");
      expect((error as KiwiError).message).toContain(message);
    }
  });

  test("a bundle that lists the platform kiwi runs on, or none, is imported", () => {
    expect(importMcpbManifest({ ...REAL, compatibility: { platforms: ["darwin", "linux"] } }, "h.mcpb", { platform: "linux" }).id).toBe("hello-world-node");
    expect(importMcpbManifest({ ...REAL, compatibility: { platforms: [] } }, "h.mcpb", { platform: "linux" }).id).toBe("hello-world-node");
  });

  test("an entry point written ./server/index.js is the zip's server/index.js", () => {
    expect(importMcpbManifest({ ...REAL, server: { ...REAL.server, entry_point: "./server/index.js" } }, "h.mcpb", { platform: "linux" }).entryPoint).toBe("server/index.js");
  });

  test("a bad --id is named as the flag, not as a name no id can be made from", () => {
    expect(() => importMcpbManifest(REAL, "h.mcpb", { platform: "linux", id: "Bad Id" })).toThrow('h.mcpb!manifest.json at /name: --id "Bad Id" is not a tool id');
  });

  test("a server without a type says it is missing", () => {
    expect(() => importMcpbManifest({ ...REAL, server: { ...REAL.server, type: undefined } }, "h.mcpb", { platform: "linux" })).toThrow("server.type is missing");
  });

  test.each([
    ["manifest_version 1.0", { ...REAL, manifest_version: "1.0" }, "/manifest_version"],
    ["no version at all", { ...REAL, manifest_version: undefined }, "/manifest_version"],
    ["a uv server without mcp_config", { ...REAL, server: { type: "uv", entry_point: "main.py" } }, "/server/mcp_config"],
    ["an entry point leaving the bundle", { ...REAL, server: { ...REAL.server, entry_point: "../x.js" } }, "/server/entry_point"],
    ["an unknown server type", { ...REAL, server: { ...REAL.server, type: "deno" } }, "/server/type"],
    ["a non-semver version", { ...REAL, version: "1.0" }, "/version"],
    ["a bundle for other platforms only", { ...REAL, compatibility: { platforms: ["darwin", "win32"] } }, "/compatibility/platforms"],
  ])("%s is refused naming the field", (_what, doc, field) => {
    try {
      importMcpbManifest(doc, "h.mcpb", { platform: "linux" });
      throw new Error("not refused");
    } catch (error) {
      expect(error).toBeInstanceOf(KiwiError);
      expect((error as KiwiError).details).toEqual({ file: "h.mcpb!manifest.json", field });
    }
  });
});

test.each([
  ["server/index.js", false],
  ["../x", true],
  ["a/../../x", true],
  ["/etc/passwd", true],
  ["C:/x", true],
  ["a\\..\\x", true],
])("zip entry %p unsafe: %p", (name, unsafe) => {
  expect(unsafeEntryName(name)).toBe(unsafe);
});

test("the central directory's Unix modes are read: executables and symbolic links", () => {
  const zip = zipSync({
    "run.sh": [enc("#!/bin/sh\n"), { os: 3, attrs: (0o100755 << 16) >>> 0 }],
    "link": [enc("/etc/passwd"), { os: 3, attrs: (0o120777 << 16) >>> 0 }],
    "plain.txt": [enc("x"), { os: 3, attrs: (0o100644 << 16) >>> 0 }],
    "dos.txt": [enc("x"), { os: 0 }],
  });
  const modes = zipUnixModes(zip);
  expect([modes.get("run.sh"), modes.get("link"), modes.get("plain.txt"), modes.has("dos.txt")]).toEqual([0o100755, 0o120777, 0o100644, false]);
});
