// Python literals read without running Python, checked against python3's own ast.literal_eval on
// the same text, and the statements that are not literals.
import { describe, expect, test } from "bun:test";
import { Float, toPlain } from "../../src/integrity/value.ts";
import { moduleStatements, readLiteral } from "../../src/manifest/python-literals.ts";

/** What python3 makes of the literal, as JSON (floats keep a ".0"). */
function python(literal: string): unknown {
  const r = Bun.spawnSync(["python3", "-c", "import ast, json, sys; print(json.dumps(ast.literal_eval(sys.stdin.read())))"], { stdin: new TextEncoder().encode(literal) });
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  return JSON.parse(r.stdout.toString());
}

describe("a literal reads as python3's ast.literal_eval reads it", () => {
  test.each([
    ['"1.0.0"'],
    ["'single'"],
    ['"""triple\nline"""'],
    ["'''it''s'''"],
    ['r"raw\\n\\d"'],
    ['"esc\\t\\x41\\u00e9\\\\ \\q"'],
    ['"implicit" \'concat\''],
    ["None"],
    ["True"],
    ["[1, -2, 3.5, 1_000, 0x1F, 0o17, 0b101, 1e3, .5]"],
    ["(1, 'two')"],
    ['{"type": "object", "properties": {"q": {"type": "string", "default": None}}, "required": ["q"],}'],
    ['{\n    # a comment\n    "a": [\n        1,  # one\n        2,\n    ],\n}'],
    ["-7"],
    ["12345678901234567890"],
    // Parentheses without a comma hold one value (the usual way to wrap a long string), not a tuple.
    ['("Counts the words of a text "\n "and lists the most frequent ones.")'],
    ["(1)"],
    ["((1, 2))"],
    ["(1,)"],
    ["()"],
    ['{"args": ("--flag"), "pair": ("a", "b")}'],
  ])("%s", (literal) => {
    const read = readLiteral(literal, 0);
    expect(read.ok).toBe(true);
    if (read.ok) expect(toPlain(read.value)).toEqual(python(literal) as never);
  });

  test("integral floats stay floats (1.0 is not 1), big integers stay exact", () => {
    const read = readLiteral("[1.0, 12345678901234567890]", 0);
    expect(read).toMatchObject({ ok: true, value: [new Float(1), 12345678901234567890n], end: 27 });
  });

  test("says where each value inside sits: a dict entry at its key, a list element at itself, a string over lines to its end", () => {
    const text = '{\n  "env": {"A/B": "x",\n    "TOKEN": "ghp"},\n  "args": ["--a", """one\ntwo"""],\n}';
    const read = readLiteral(text, 0);
    if (!read.ok) throw new Error(read.reason);
    const at = (pointer: string) => {
      const o = read.offsets.get(pointer)!;
      return [text.slice(o.start, o.start + 7), o.end - o.start, o.text];
    };
    expect(at("/env")).toEqual(['"env": ', 39, false]);
    expect(at("/env/A~1B")).toEqual(['"A/B": ', 10, true]);
    expect(at("/env/TOKEN")).toEqual(['"TOKEN"', 14, true]);
    expect(at("/args/0")).toEqual(['"--a", ', 5, true]);
    expect(at("/args/1")).toEqual(['"""one\n', 13, true]);
    expect(read.offsets.has("")).toBe(false);
  });

  test("a value in parentheses is located as itself, not as a tuple's first element", () => {
    const text = '{"d": ("one "\n  "two"), "t": ("x",)}';
    const read = readLiteral(text, 0);
    if (!read.ok) throw new Error(read.reason);
    expect([...read.offsets.keys()].sort()).toEqual(["/d", "/t", "/t/0"]);
  });
});

describe("a comment after a literal, on its line", () => {
  test.each([['"1.0.0"  # bumped by the release script'], ["[1, 2]  # kiwi-ignore: security/secret-literal -- sample"], ['("a" "b")  # wrapped'], ["None# tight"]])("ends the literal, as in Python: %s", (source) => {
    const read = readLiteral(`${source}\nNEXT = 1\n`, 0);
    expect(read.ok).toBe(true);
    if (read.ok) expect(toPlain(read.value)).toEqual(python(source) as never);
  });
});

describe("what is not a literal is said, never run", () => {
  test.each([
    ["get_version()", "get_version(...) is not a literal"],
    ['f"py_{x}"', "an f-string is not a literal"],
    ['"a" + b', 'it continues with "+ b" after the literal'],
    ["os.environ", "os.environ is not a literal"],
    ["{1, 2}", "a set has no JSON value"],
    ["{1: 'a'}", "a dict key that is not a string has no JSON value"],
    ['b"bytes"', "a bytes literal has no JSON value"],
    ["1j", "a complex number has no JSON value"],
    ['"never closed', "the string is never closed"],
    ["[1, 2", "expected , or ]"],
  ])("%s", (source, reason) => {
    const read = readLiteral(source, 0);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.reason).toContain(reason);
  });
});

describe("module-level statements", () => {
  test("assignments at column 0 only: not inside functions, strings, brackets or continuations", () => {
    const text = [
      '__version__ = "1.0.0"',
      "def f():",
      '    __tool_type__ = "inner"',
      '"""',
      '__category__ = "in a docstring"',
      '"""',
      "X = [",
      "__executor_id__ = 1,",
      "]",
      "Y = 1 + \\",
      "Z",
      "CONFIG: dict = {}",
      "a == b",
    ].join("\n");
    expect(moduleStatements(text).map((s) => s.target ?? "-")).toEqual(["__version__", "-", "-", "X", "Y", "CONFIG", "-"]);
  });

  test("statements after a semicolon, as Python reads them; one inside a string or brackets is text", () => {
    const text = '__version__ = "1.0.0"; __tool_type__ = "python";  __executor_id__ = "python_runtime"\nX = "a; B = 1"; Y = [1, 2]; Z = {"k": "v;w"}\nprint(1);\n';
    expect(moduleStatements(text).map((s) => s.target ?? "-")).toEqual(["__version__", "__tool_type__", "__executor_id__", "X", "Y", "Z", "-"]);
  });
});
