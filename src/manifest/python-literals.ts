// Python source read as data, never run: the module-level statements of a file (`NAME = <expr>`
// and bare expressions) and the literal values Python's ast.literal_eval would accept (strings
// with their prefixes and escapes, numbers, None/True/False, lists, tuples, dicts with string keys,
// unary minus), so kiwi_mcp's `__version__ = "1.0.0"` tools can be read without executing them.
// A value that is not such a literal (a call, a name, an f-string) is reported, not evaluated. Pure.
import { escapePointer } from "../integrity/canonical.ts";
import { type CanonicalValue, Float, numberFromLexeme, setOwn } from "../integrity/value.ts";

/** One module-level statement: where it starts, and its target name for an assignment. */
export interface ModuleStatement {
  /** Offset of the statement's first character (column 0 of its line). */
  offset: number;
  /** `NAME` of `NAME = ...` / `NAME: T = ...`; undefined for any other statement. */
  target?: string;
  /** Offset of the expression after `=` (assignments), or of the statement (others). */
  exprOffset: number;
}

/**
 * Where each value inside a literal sits, by its JSON pointer from the literal (`/env/TOKEN`,
 * `/args/0`): a dict entry at its key (as YAML's positions are), a list element at itself; `end` is
 * where the value ends (a string written over lines spans them).
 */
export type LiteralOffsets = Map<string, { start: number; end: number; text: boolean }>;

/** The result of reading one expression as a literal: its value, where it ends (the offset just past it) and where the values inside it sit. */
export type LiteralResult = { ok: true; value: CanonicalValue; end: number; offsets: LiteralOffsets } | { ok: false; reason: string };

/**
 * The module-level statements, in order: every logical line that starts at column 0 outside a
 * string, bracket or continuation. Decorators, compound statements and comments are included as
 * statements without a target (callers only look at assignments and bare strings). `onComment`
 * hears of every comment (from its `#` to the end of its line), a `#` inside a string being none.
 */
export function moduleStatements(text: string, onComment?: (start: number, end: number) => void): ModuleStatement[] {
  const out: ModuleStatement[] = [];
  let depth = 0;
  let lineStart = true;
  let continued = false;
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (lineStart) {
      lineStart = false;
      if (depth === 0 && !continued && c !== " " && c !== "\t" && c !== "\n" && c !== "\r" && c !== "#") {
        const head = /^([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*/.exec(text.slice(i, i + 400));
        out.push(head ? { offset: i, target: head[1], exprOffset: i + head[0].length } : { offset: i, exprOffset: i });
      }
      continued = false;
    }
    if (c === "#") {
      const start = i;
      while (i < text.length && text[i] !== "\n") i++;
      onComment?.(start, i);
      continue;
    }
    if (c === "\n") {
      lineStart = true;
      i++;
      continue;
    }
    if (c === ";" && depth === 0) {
      // `__version__ = "1.0.0"; __tool_type__ = "python"`: a statement starts after it too.
      i++;
      while (text[i] === " " || text[i] === "\t") i++;
      lineStart = true;
      continue;
    }
    if (c === "\\" && text[i + 1] === "\n") {
      continued = true;
      i += 2;
      lineStart = true;
      continue;
    }
    const str = stringAt(text, i);
    if (str) {
      i = str.end;
      continue;
    }
    if (c === "(" || c === "[" || c === "{") depth++;
    else if ((c === ")" || c === "]" || c === "}") && depth > 0) depth--;
    i++;
  }
  return out;
}

/** A string token starting at `i` (prefix included), or undefined. */
function stringAt(text: string, i: number): { end: number; prefix: string; quote: string; bodyStart: number; bodyEnd: number } | undefined {
  const m = /^([rRuUbBfF]{0,2})('''|"""|'|")/.exec(text.slice(i, i + 5));
  if (!m) return undefined;
  // A prefix must not be the tail of an identifier (`xr"..."` is not a string start).
  if (m[1] && i > 0 && /[A-Za-z0-9_]/.test(text[i - 1]!)) return undefined;
  if (m[1] && !/^(r|u|b|f|br|rb|fr|rf)$/i.test(m[1])) return undefined;
  const prefix = m[1]!.toLowerCase();
  const quote = m[2]!;
  const bodyStart = i + m[0].length;
  for (let j = bodyStart; j < text.length; j++) {
    const c = text[j]!;
    if (c === "\\") {
      j++;
      continue;
    }
    if (quote.length === 1 && c === "\n") return { end: j, prefix, quote, bodyStart, bodyEnd: j }; // unterminated: stop at the line end
    if (text.startsWith(quote, j)) return { end: j + quote.length, prefix, quote, bodyStart, bodyEnd: j };
  }
  return { end: text.length, prefix, quote, bodyStart, bodyEnd: text.length };
}

/**
 * Reads the expression at `offset` as a Python literal, up to the end of its logical line. Anything
 * after the literal other than a comment (`"a" + x`, a call) makes it not a literal.
 */
export function readLiteral(text: string, offset: number): LiteralResult {
  const p = new LiteralParser(text, offset);
  try {
    const value = p.expression();
    const end = p.i;
    p.skipSpace(false);
    if (p.i < text.length && text[p.i] !== "\n" && text[p.i] !== ";" && text[p.i] !== "#") return { ok: false, reason: `it continues with ${JSON.stringify(p.snippet())} after the literal` };
    return { ok: true, value, end, offsets: p.offsets };
  } catch (error) {
    if (error instanceof NotLiteral) return { ok: false, reason: error.message };
    throw error;
  }
}

class NotLiteral extends Error {}

class LiteralParser {
  depth = 0;
  readonly offsets: LiteralOffsets = new Map();
  /** The pointer of the value being read, from the literal's root. */
  private pointer = "";
  constructor(
    readonly text: string,
    public i: number,
  ) {}

  snippet(): string {
    const rest = this.text.slice(this.i);
    const end = rest.search(/\n/);
    return (end === -1 ? rest : rest.slice(0, end)).slice(0, 40);
  }

  /** Skips blanks and comments; newlines only inside brackets (or when `newlines`). */
  skipSpace(newlines = this.depth > 0): void {
    for (;;) {
      const c = this.text[this.i];
      if (c === " " || c === "\t" || c === "\r" || (newlines && c === "\n")) this.i++;
      else if (c === "\\" && this.text[this.i + 1] === "\n") this.i += 2;
      else if (c === "#" && newlines) while (this.i < this.text.length && this.text[this.i] !== "\n") this.i++;
      else return;
    }
  }

  expression(): CanonicalValue {
    if (this.depth > 100) throw new NotLiteral("it is nested too deeply");
    this.skipSpace();
    const c = this.text[this.i];
    if (c === undefined) throw new NotLiteral("the value is missing");
    if (c === "-" || c === "+") {
      this.i++;
      this.skipSpace();
      const n = this.number();
      if (n === undefined) throw new NotLiteral(`${c} is applied to something that is not a number`);
      if (c === "+") return n;
      if (n instanceof Float) return new Float(-n.value);
      if (typeof n === "bigint") return numberFromLexeme(false, -n);
      return Number.isInteger(n) && n === 0 ? 0 : -n;
    }
    if (c === "[") return this.sequence("]");
    if (c === "(") return this.sequence(")");
    if (c === "{") return this.mapping();
    const str = this.strings();
    if (str !== undefined) return str;
    const n = this.number();
    if (n !== undefined) return n;
    const word = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(this.text.slice(this.i, this.i + 200))?.[0];
    if (word === "None" || word === "True" || word === "False") {
      this.i += word.length;
      return word === "None" ? null : word === "True";
    }
    if (word) throw new NotLiteral(`${word}${this.text[this.i + word.length] === "(" ? "(...)" : ""} is not a literal (kiwi reads the file, it never runs it)`);
    throw new NotLiteral(`${JSON.stringify(this.snippet())} is not a literal`);
  }

  /** One or more adjacent string literals, concatenated (Python's implicit concatenation). */
  strings(): string | undefined {
    let out: string | undefined;
    for (;;) {
      const s = stringAt(this.text, this.i);
      if (!s) return out;
      if (s.prefix.includes("f")) throw new NotLiteral("an f-string is not a literal");
      if (s.prefix.includes("b")) throw new NotLiteral("a bytes literal has no JSON value");
      if (s.end > this.text.length || (s.bodyEnd === s.end && !this.text.startsWith(s.quote, s.bodyEnd))) throw new NotLiteral("the string is never closed");
      const body = this.text.slice(s.bodyStart, s.bodyEnd);
      out = (out ?? "") + (s.prefix.includes("r") ? body : unescapePython(body));
      this.i = s.end;
      const save = this.i;
      this.skipSpace();
      if (!stringAt(this.text, this.i)) {
        this.i = save;
        return out;
      }
    }
  }

  number(): number | bigint | Float | undefined {
    const rest = this.text.slice(this.i, this.i + 400);
    const m = /^(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d[\d_]*)?\.?)[jJ]?/.exec(rest);
    if (!m || m[0] === "" || m[0] === ".") return undefined;
    const lexeme = m[0];
    if (/[jJ]$/.test(lexeme)) throw new NotLiteral("a complex number has no JSON value");
    this.i += lexeme.length;
    const clean = lexeme.replaceAll("_", "");
    if (/^0[xob]/i.test(clean)) return numberFromLexeme(false, BigInt(clean));
    if (/[.eE]/.test(clean)) return numberFromLexeme(true, Number(clean));
    return numberFromLexeme(false, BigInt(clean));
  }

  /** A list element or dict value, `segment` of the pointer, recorded as starting at `start`. */
  member(segment: string, start: number): CanonicalValue {
    const parent = this.pointer;
    this.pointer = `${parent}/${segment}`;
    const value = this.expression();
    this.offsets.set(this.pointer, { start, end: this.i, text: typeof value === "string" });
    this.pointer = parent;
    return value;
  }

  sequence(close: "]" | ")"): CanonicalValue {
    this.i++;
    this.depth++;
    const out: CanonicalValue[] = [];
    let comma = false;
    for (;;) {
      this.skipSpace();
      if (this.text[this.i] === close) break;
      out.push(this.member(String(out.length), this.i));
      this.skipSpace();
      if (this.text[this.i] === ",") {
        this.i++;
        comma = true;
      } else if (this.text[this.i] !== close) throw new NotLiteral(`expected , or ${close} at ${JSON.stringify(this.snippet())}`);
    }
    this.i++;
    this.depth--;
    // A comma makes a tuple: `("a long text "\n "continued")`, the usual way to wrap a long
    // string, is that one string in parentheses, and so is `(1)`.
    if (close === ")" && out.length === 1 && !comma) {
      this.unnest(`${this.pointer}/0`);
      return out[0]!;
    }
    return out;
  }

  /** The offsets recorded at `from` and below it, moved up to the pointer being read. */
  unnest(from: string): void {
    for (const [pointer, offset] of [...this.offsets]) {
      if (pointer !== from && !pointer.startsWith(`${from}/`)) continue;
      this.offsets.delete(pointer);
      this.offsets.set(this.pointer + pointer.slice(from.length), offset);
    }
  }

  mapping(): { [key: string]: CanonicalValue } {
    this.i++;
    this.depth++;
    const out: { [key: string]: CanonicalValue } = {};
    this.skipSpace();
    if (this.text[this.i] === "}") {
      this.i++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.i] === "}") break;
      const keyAt = this.i;
      const key = this.expression();
      this.skipSpace();
      if (this.text[this.i] !== ":") throw new NotLiteral(this.text[this.i] === "," || this.text[this.i] === "}" ? "a set has no JSON value" : `expected : at ${JSON.stringify(this.snippet())}`);
      if (typeof key !== "string") throw new NotLiteral("a dict key that is not a string has no JSON value");
      this.i++;
      setOwn(out, key, this.member(escapePointer(key), keyAt));
      this.skipSpace();
      if (this.text[this.i] === ",") this.i++;
      else if (this.text[this.i] !== "}") throw new NotLiteral(`expected , or } at ${JSON.stringify(this.snippet())}`);
    }
    this.i++;
    this.depth--;
    return out;
  }
}

const SIMPLE_ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", f: "\f", v: "\v", "\n": "" };

/** Python's escapes in a non-raw string; an unknown escape stays as written, as Python keeps it. */
function unescapePython(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|N\{[^}]*\}|[\s\S])/g, (whole, e: string) => {
    if (e in SIMPLE_ESCAPES) return SIMPLE_ESCAPES[e]!;
    if (/^[xuU]/.test(e)) return String.fromCodePoint(Number.parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCodePoint(Number.parseInt(e, 8));
    return whole;
  });
}
