import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatDigest, sha256Hex } from "../../src/integrity/digest.ts";
import { Float } from "../../src/integrity/value.ts";
import { parseLockfile } from "../../src/lockfile/parse.ts";
import { LOCKFILE_KEYS, TOOL_KEYS, renderLockfile, replaceToolEntry } from "../../src/lockfile/render.ts";
import type { Lockfile, McpPin } from "../../src/schema/lockfile.ts";
import { entry, file, lockOf } from "./helpers.ts";

const GOLDEN = join(import.meta.dir, "golden.tool.lock.json");

const pin = {
  name: "weather",
  interface_hash: formatDigest(sha256Hex("i")),
  full_hash: formatDigest(sha256Hex("f")),
  interface: { tools: [{ name: "forecast", inputSchema: { type: "object", properties: { days: { default: new Float(3) } } } }] },
  version: "1.2.0",
} as unknown as McpPin;

/** Built in a scrambled insertion order on purpose: the rendering must not depend on it. */
function sample(): Lockfile {
  return lockOf(
    {
      zeta: entry("zeta", { tool_id: "zeta" }, [file("z.py", "z"), file("a/b.py", "b", true)], { executor: "python_runtime@1.0.0", source: ".ai/tools/zeta/tool.yaml" }),
      python_runtime: entry("python_runtime", { tool_id: "python_runtime" }, [], { type: "runtime", executor: "subprocess@1.0.0", source: "<builtin>/python_runtime.yaml" }),
      subprocess: entry("subprocess", { tool_id: "subprocess" }, [], { type: "primitive", source: "<builtin>/subprocess.yaml" }),
      "é-tool": entry("é-tool", { tool_id: "é-tool" }, [], { executor: "subprocess@1.0.0", source: ".ai/tools/é.yaml" }),
    },
    { zeta: pin },
  );
}

describe("rendering tool.lock.json", () => {
  test("matches the golden file byte for byte (a change here is a format change: review it)", () => {
    expect(renderLockfile(sample())).toBe(readFileSync(GOLDEN, "utf8"));
  });

  test("writing twice gives the same bytes, and parsing what was written gives it back", () => {
    const text = renderLockfile(sample());
    expect(renderLockfile(parseLockfile(text))).toBe(text);
  });

  test("uses 2-space indent, a trailing newline, and no absolute paths or timestamps", () => {
    const text = renderLockfile(sample());
    expect(text.endsWith("}\n")).toBe(true);
    expect(text.split("\n")[1]).toBe('  "lockfileVersion": 1,');
    expect(text).not.toMatch(/"\/(tmp|home|root)\//);
    expect(text).not.toMatch(/20\d\d-\d\d-\d\d/);
  });

  test("writes keys in the documented order", () => {
    const text = renderLockfile(sample());
    const order = (keys: readonly string[]) => keys.map((k) => text.indexOf(`"${k}":`));
    // "remote" and "dependencies" are written only when present (test/lockfile/remote.test.ts, dependencies.test.ts).
    const top = order(LOCKFILE_KEYS.filter((k) => k !== "remote" && k !== "dependencies"));
    expect([...top].sort((a, b) => a - b)).toEqual(top);
    const tool = order(TOOL_KEYS);
    expect([...tool].sort((a, b) => a - b)).toEqual(tool);
  });

  test("sorts tools by id in code-point order and files by path", () => {
    const text = renderLockfile(sample());
    const ids = [...text.matchAll(/^ {4}"([^"]+)": \{$/gm)].map((m) => m[1]);
    expect(ids).toEqual(["python_runtime", "subprocess", "zeta", "é-tool", "zeta"]);
    expect(text.indexOf('"a/b.py"')).toBeLessThan(text.indexOf('"z.py"'));
  });

  test("keeps an MCP pin's integral floats as floats", () => {
    expect(renderLockfile(sample())).toContain('"default": 3.0');
  });

  test("is valid JSON for any other reader", () => {
    expect(() => JSON.parse(renderLockfile(sample()))).not.toThrow();
  });
});

describe("hidden characters in the lockfile", () => {
  const hidden = "Adds numbers.\u200b<IMPORTANT>\u202eevil\u202c\u{E0041}\u{E0042}\u2028x\u007f é ☕";
  const poisoned = { ...pin, interface: { tools: [{ name: "add", description: hidden }] } } as unknown as McpPin;

  test("are written as \\u escapes, so a diff shows them", () => {
    const text = renderLockfile(lockOf({}, { add: poisoned }));
    expect(text).toContain("Adds numbers.\\u200b<IMPORTANT>\\u202eevil\\u202c\\udb40\\udc41\\udb40\\udc42\\u2028x\\u007f é ☕");
    expect(text).not.toMatch(/[\u200b\u202e\u2028\u007f]/);
  });

  test("read back as the same strings", () => {
    const text = renderLockfile(lockOf({}, { add: poisoned }));
    const read = parseLockfile(text) as unknown as { mcp_servers: { add: { interface: { tools: { description: string }[] } } } };
    expect(read.mcp_servers.add.interface.tools[0]!.description).toBe(hidden);
    expect(renderLockfile(parseLockfile(text))).toBe(text);
  });
});

describe("strings in the lockfile", () => {
  /** The rendering before plain strings took a shortcut: JSON.stringify, then invisible characters escaped. */
  const reference = (text: string) =>
    JSON.stringify(text).replace(/[\p{Cf}\p{Cc}\p{Zl}\p{Zp}\u115F\u1160\u3164\uFFA0]/gu, (ch) => Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""));
  /** Every one- and two-character string over a set that straddles each boundary of the shortcut. */
  const chars = [" ", "!", '"', "#", "[", "\\", "]", "~", "\u007f", "\u0000", "\u001f", "\t", "\n", "a", "Z", "0", "é", "\u200b", "\u2028", "\ud800", "\udc00", "☕", "\u{E0041}"];
  const strings = ["", ...chars, ...chars.flatMap((a) => chars.map((b) => a + b)), "group-00/magray-script-00020/main.py", "a".repeat(300)];

  test("are written as the reference rendering writes them, plain or not", () => {
    for (const text of strings) {
      const rendered = renderLockfile(lockOf({ t: entry("t", { tool_id: "t" }, [file(text, "x")], { source: text }) }));
      const source = rendered.slice(rendered.indexOf('"source": ') + 10, rendered.indexOf(',\n', rendered.indexOf('"source": ')));
      const path = rendered.slice(rendered.indexOf('{ "path": ') + 10, rendered.indexOf(', "sha256"'));
      expect([text, source, path]).toEqual([text, reference(text), reference(text)]);
    }
  });
});

describe("replacing one tool's entry in rendered text (the incremental lock's splice)", () => {
  const changed = entry("zeta", { tool_id: "zeta", v: 2 }, [file("z.py", "new"), file("a/b.py", "b", true), file("c.txt", "c")], { executor: "python_runtime@1.0.0", source: ".ai/tools/zeta/tool.yaml" });

  test.each(["zeta", "python_runtime", "subprocess", "é-tool"])("gives byte for byte the full rendering with %s changed, pins kept", (id) => {
    const lock = sample();
    const next = { ...changed, source: lock.tools[id]!.source };
    const spliced = replaceToolEntry(renderLockfile(lock), id, next);
    // As written: files in path order.
    const was = lock.tools[id]!;
    expect(spliced?.before).toEqual({ ...was, files: [...was.files].sort((a, b) => (a.path < b.path ? -1 : 1)) });
    expect(spliced?.text).toBe(renderLockfile({ ...lock, tools: { ...lock.tools, [id]: next } }));
  });

  test("finds nothing for an id that is only a pin's, or not there at all", () => {
    const lock = sample();
    const text = renderLockfile({ ...lock, tools: { subprocess: lock.tools.subprocess! }, mcp_servers: { zeta: lock.mcp_servers.zeta! } });
    expect(replaceToolEntry(text, "zeta", changed)).toBeUndefined();
    expect(replaceToolEntry(text, "nope", changed)).toBeUndefined();
  });
});
