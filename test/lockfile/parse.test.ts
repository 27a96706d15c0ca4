import { describe, expect, test } from "bun:test";
import { Float } from "../../src/integrity/value.ts";
import { parseLockfile } from "../../src/lockfile/parse.ts";
import { toolPathProblem } from "../../src/integrity/tool-path.ts";
import { renderLockfile } from "../../src/lockfile/render.ts";
import { entry, file, lockOf } from "./helpers.ts";

const good = lockOf({
  dp: entry("dp", { tool_id: "dp" }, [file("main.py", "x", true)], { executor: "subprocess@1.0.0" }),
  subprocess: entry("subprocess", { tool_id: "subprocess" }, [], { type: "primitive" }),
});
const text = renderLockfile(good);

/** Edits the rendered lockfile as JSON (the way a person or a bad merge would). */
function edited(fn: (doc: any) => void): string {
  const doc = JSON.parse(text);
  fn(doc);
  return JSON.stringify(doc, null, 2);
}

const HEX = "a".repeat(64);

/** The lockfile as git leaves it when both sides changed dp's integrity: `open` (may be empty), the other side, `middle`, `close`. */
function conflicted(open: string, ...rest: string[]): string {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l.includes('"integrity"'));
  const ours = lines[at]!;
  const theirs = ours.replace(/[0-9a-f]{64}/, "b".repeat(64));
  const close = rest.pop()!;
  const between = rest.flatMap((r) => (r === "=======" ? [r, theirs] : [r.replace(/\n$/, "")]));
  return [...lines.slice(0, at), ...(open ? [open] : []), ours, ...between, close, ...lines.slice(at + 1)].join("\n");
}

describe("parsing tool.lock.json fails closed", () => {
  test("accepts what kiwi writes", () => {
    expect(parseLockfile(text)).toEqual(good);
  });

  test.each([
    ["an empty file", "", /is empty/],
    ["a whitespace-only file", "  \n", /is empty/],
    ["a truncated file", text.slice(0, text.length / 2), /truncated/],
    ["a file that is not JSON", "lockfileVersion = 1\n{}", /invalid JSON/],
    ["git's conflict markers (a merge left unresolved)", "<<<<<<< HEAD\n{}", /unresolved merge conflict \(line 1: "<<<<<<< HEAD"\)/],
    ["a top-level array", "[]", /not a JSON object/],
    ["a duplicate key (a bad merge)", text.replace('"lockfileVersion": 1,', '"lockfileVersion": 1,\n  "lockfileVersion": 1,'), /duplicate/i],
    ["a missing lockfileVersion", edited((d) => delete d.lockfileVersion), /lockfileVersion is missing/],
    ["a string lockfileVersion", edited((d) => (d.lockfileVersion = "1")), /lockfileVersion is "1"/],
    ["a lockfile from a newer kiwi", edited((d) => (d.lockfileVersion = 2)), /newer kiwi \(lockfileVersion 2; this kiwi reads 1\)/],
    ["a lockfile from a much newer kiwi", text.replace('"lockfileVersion": 1', '"lockfileVersion": 123456789012345678901234567890'), /newer kiwi/],
    ["an empty integrity", edited((d) => (d.tools.dp.integrity = "")), /tool "dp" integrity is not a sha256 digest \(got an empty string\)/],
    ["an unknown algorithm", edited((d) => (d.tools.dp.integrity = `md5:${HEX.slice(0, 32)}`)), /unsupported algorithm "md5"/],
    ["sha512 named as such", edited((d) => (d.tools.dp.integrity = `sha512:${HEX}${HEX}`)), /unsupported algorithm "sha512"/],
    ["a short digest", edited((d) => (d.tools.dp.integrity = "sha256:abc")), /not a sha256 digest/],
    ["an uppercase digest", edited((d) => (d.tools.dp.integrity = `sha256:${HEX.toUpperCase()}`)), /not a sha256 digest/],
    ["a missing integrity", edited((d) => delete d.tools.dp.integrity), /integrity is not a sha256 digest \(got undefined\)/],
    ["a bad manifest digest", edited((d) => (d.tools.dp.manifest_digest = "sha1:abc")), /manifest_digest uses the unsupported algorithm "sha1"/],
    ["a file digest that is not hex", edited((d) => (d.tools.dp.files[0].sha256 = "not-a-digest")), /file "main.py" sha256 is not 64 lowercase hex digits/],
    ["an empty file digest", edited((d) => (d.tools.dp.files[0].sha256 = "")), /got an empty string/],
    ["a file path leaving the tool", edited((d) => (d.tools.dp.files[0].path = "../../etc/passwd")), /has a \. or \.\. segment/],
    ["an absolute file path", edited((d) => (d.tools.dp.files[0].path = "/etc/passwd")), /is absolute/],
    ["a file path with an empty segment", edited((d) => (d.tools.dp.files[0].path = "a//b")), /empty segment/],
    ["a file listed twice", edited((d) => d.tools.dp.files.push({ ...d.tools.dp.files[0] })), /lists the file "main.py" twice/],
    ["an executor the lockfile does not lock", edited((d) => (d.tools.dp.executor = "python_runtime@1.0.0")), /executor python_runtime@1.0.0, which the lockfile does not lock/],
    ["an executor at another version", edited((d) => (d.tools.dp.executor = "subprocess@2.0.0")), /does not lock/],
    ["an unknown field in an entry", edited((d) => (d.tools.dp.trusted = true)), /\/tools\/dp/],
    ["a missing files list", edited((d) => delete d.tools.dp.files), /\/tools\/dp/],
    ["a missing mcp_servers section", edited((d) => delete d.mcp_servers), /mcp_servers|\//],
    ["a pin with a bad digest", edited((d) => (d.mcp_servers.dp = { name: "x", interface_hash: "sha256:", full_hash: "", interface: {} })), /MCP server "dp" interface_hash/],
  ])("rejects %s", (_what, input, message) => {
    let error: any;
    try {
      parseLockfile(input);
    } catch (e) {
      error = e;
    }
    expect(error?.code).toBe("E_LOCK_INVALID");
    expect(error.message).toMatch(message);
    expect(error.message).toStartWith("tool.lock.json");
    expect(error.hint).toBeString();
  });

  test.each([
    ["both sides of one entry", conflicted("<<<<<<< HEAD", "=======", ">>>>>>> feature"), 9, "<<<<<<< HEAD"],
    ["diff3 style, with the base between", conflicted("<<<<<<< ours", "||||||| base\n      \"executor\": \"subprocess@1.0.0\",\n", "=======", ">>>>>>> theirs"), 9, "<<<<<<< ours"],
    ["CRLF line ends", conflicted("<<<<<<< HEAD", "=======", ">>>>>>> b").replaceAll("\n", "\r\n"), 9, "<<<<<<< HEAD"],
    ["markers left after a hand resolution removed the first one", conflicted("", "=======", ">>>>>>> b"), 10, "======="],
  ])("names a merge conflict and how to leave it, not a JSON error: %s", (_what, input, line, marker) => {
    expect(() => parseLockfile(input)).toThrow(
      expect.objectContaining({
        code: "E_LOCK_INVALID",
        message: `tool.lock.json: unresolved merge conflict (line ${line}: "${marker}")`,
        hint: 'take one side of the merge whole ("git checkout HEAD -- tool.lock.json", or MERGE_HEAD for the other; kiwi lock rewrites every tool entry from the tree), then run "kiwi lock"',
        details: { file: "tool.lock.json", conflict: true },
      }),
    );
  });

  test("an executor version the lockfile does not lock (a clean but bad merge): refused with the hint to relock; kiwi lock's parse collects it instead", () => {
    const merged = edited((d) => (d.tools.dp.executor = "subprocess@0.9.0"));
    expect(() => parseLockfile(merged)).toThrow(
      expect.objectContaining({
        message: "tool.lock.json: tool \"dp\" names the executor subprocess@0.9.0, which the lockfile does not lock",
        hint: 'tool.lock.json was merged or edited badly: run "kiwi lock", which rewrites every tool entry from the tree',
        details: { file: "tool.lock.json", rewritable: true },
      }),
    );
    const rewrite = { danglingExecutors: [] as string[] };
    expect(parseLockfile(merged, undefined, undefined, rewrite).tools.dp!.executor).toBe("subprocess@0.9.0");
    expect(rewrite.danglingExecutors).toEqual(['tool "dp" names the executor subprocess@0.9.0, which the lockfile does not lock']);
    // Nothing else is read past: a lockfile kiwi lock cannot rewrite stays refused.
    expect(() => parseLockfile(edited((d) => (d.tools.dp.files[0].sha256 = "x")), undefined, undefined, rewrite)).toThrow(expect.objectContaining({ code: "E_LOCK_INVALID" }));
  });

  test("a newer lockfile's hint says to upgrade kiwi, not to delete it", () => {
    expect(() => parseLockfile(edited((d) => (d.lockfileVersion = 9)))).toThrow(expect.objectContaining({ hint: expect.stringContaining("upgrade kiwi") }));
  });

  test("keeps integer/float identity inside MCP pins", () => {
    const withPin = text.replace('"mcp_servers": {}', `"mcp_servers": {"dp": {"name": "s", "interface_hash": "sha256:${HEX}", "full_hash": "sha256:${HEX}", "interface": {"x": 1.0, "y": 1}}}`);
    const lock = parseLockfile(withPin);
    const iface = (lock.mcp_servers.dp as any).interface;
    expect(iface.x).toBeInstanceOf(Float);
    expect(iface.y).toBe(1);
  });
});

describe("locked file paths", () => {
  test.each([
    ["main.py", undefined],
    ["lib/helper.py", undefined],
    ["..", "has a . or .. segment"],
    ["a/./b", "has a . or .. segment"],
    ["C:/x", "is absolute"],
    ["a\\b", "contains a backslash"],
    ["a/", "has an empty segment"],
  ])("%s -> %s", (path, problem) => {
    expect(toolPathProblem(path, "locked")).toBe(problem);
  });
});
