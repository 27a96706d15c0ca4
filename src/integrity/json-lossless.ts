// A strict, lossless JSON parser: integer/float identity, big integers, duplicate-key and depth
// checks, and source offsets per JSON pointer. JSON.parse cannot do the first three (spec:
// shared/specs/canonical-json.md), and no maintained library does all of them, hence this file.
import { escapePointer } from "./canonical.ts";
import { ParseProblem, type Position } from "./parse-problem.ts";
import { type CanonicalValue, Float, numberFromLexeme, setOwn } from "./value.ts";

/** Deepest nesting accepted; deeper documents are rejected rather than risking the stack. */
export const MAX_DEPTH = 256;

/** A problem that does not stop the parse (a duplicate key: the last one wins, as in JSON.parse). */
export interface JsonWarning {
  message: string;
  offset: number;
  /** JSON pointer of the member the problem is about, when there is one. */
  pointer?: string;
}

export interface JsonParseResult {
  value: CanonicalValue;
  /** Offset of each member's key (objects) or element (arrays), by JSON pointer. */
  offsets: Map<string, number>;
  /** Non-fatal problems such as duplicate keys (the last one wins, as in JSON.parse). */
  warnings: JsonWarning[];
}

/** Parses JSON text losslessly; throws ParseProblem (parse/syntax, parse/too-deep) with an offset on malformed input. */
export function parseJsonLossless(text: string, options: { positions?: boolean } = {}): JsonParseResult {
  return new Parser(text, options.positions ?? true).parseDocument();
}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

class Parser {
  private i = 0;
  readonly offsets = new Map<string, number>();
  readonly warnings: JsonWarning[] = [];

  constructor(
    private readonly s: string,
    private readonly positions: boolean,
  ) {}

  parseDocument(): JsonParseResult {
    if (this.s.charCodeAt(0) === 0xfeff) this.i = 1;
    this.ws();
    if (this.i >= this.s.length) this.fail("the document is empty");
    this.offsets.set("", this.i);
    const value = this.value("", 0);
    this.ws();
    if (this.i < this.s.length) this.fail(`unexpected ${this.describe()} after the end of the document`);
    return { value, offsets: this.offsets, warnings: this.warnings };
  }

  private fail(message: string, offset = this.i): never {
    throw new ParseProblem("parse/syntax", message, undefined, undefined, offset);
  }

  private describe(): string {
    if (this.i >= this.s.length) return "end of input";
    const c = this.s[this.i]!;
    return /[\x21-\x7e]/.test(c) ? `"${c}"` : `character U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
  }

  private ws(): void {
    const s = this.s;
    let i = this.i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.i = i;
  }

  private value(pointer: string, depth: number): CanonicalValue {
    if (depth > MAX_DEPTH) throw new ParseProblem("parse/too-deep", `nesting deeper than ${MAX_DEPTH} levels`, undefined, undefined, this.i);
    const c = this.s[this.i];
    switch (c) {
      case "{":
        return this.object(pointer, depth);
      case "[":
        return this.array(pointer, depth);
      case '"':
        return this.string();
      case "t":
        return this.literal("true", true);
      case "f":
        return this.literal("false", false);
      case "n":
        return this.literal("null", null);
      default:
        if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.number();
        return this.fail(`expected a value but found ${this.describe()}`);
    }
  }

  private literal<T extends CanonicalValue>(word: string, value: T): T {
    if (!this.s.startsWith(word, this.i)) this.fail(`expected a value but found ${this.describe()}`);
    this.i += word.length;
    return value;
  }

  private number(): CanonicalValue {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) this.fail(`malformed number`);
    const lexeme = m[0];
    const isFloat = m[1] !== undefined || m[2] !== undefined;
    const start = this.i;
    this.i += lexeme.length;
    if (isFloat) {
      const n = Number(lexeme);
      if (!Number.isFinite(n)) this.fail(`number ${lexeme} is too large to represent`, start);
      return numberFromLexeme(true, n);
    }
    return numberFromLexeme(false, lexeme.length > 15 ? BigInt(lexeme) : Number(lexeme));
  }

  private string(): string {
    const s = this.s;
    const start = ++this.i;
    // Fast path: no escapes and no control characters.
    let j = start;
    for (;;) {
      const c = s.charCodeAt(j);
      if (c === 0x22) {
        this.i = j + 1;
        return s.slice(start, j);
      }
      if (c === 0x5c || c < 0x20 || Number.isNaN(c)) break;
      j++;
    }
    let out = s.slice(start, j);
    this.i = j;
    for (;;) {
      if (this.i >= s.length) this.fail("unterminated string", start - 1);
      const c = s.charCodeAt(this.i);
      if (c === 0x22) {
        this.i++;
        return out;
      }
      if (c < 0x20) this.fail("control character in string (escape it as \\u00XX)");
      if (c !== 0x5c) {
        out += s[this.i++];
        continue;
      }
      const e = s[this.i + 1];
      this.i += 2;
      switch (e) {
        case '"': out += '"'; break;
        case "\\": out += "\\"; break;
        case "/": out += "/"; break;
        case "b": out += "\b"; break;
        case "f": out += "\f"; break;
        case "n": out += "\n"; break;
        case "r": out += "\r"; break;
        case "t": out += "\t"; break;
        case "u": {
          const hex = s.slice(this.i, this.i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("malformed \\u escape", this.i - 2);
          out += String.fromCharCode(parseInt(hex, 16));
          this.i += 4;
          break;
        }
        default:
          this.fail(`invalid escape "\\${e ?? ""}"`, this.i - 2);
      }
    }
  }

  private array(pointer: string, depth: number): CanonicalValue[] {
    this.i++;
    const out: CanonicalValue[] = [];
    this.ws();
    if (this.s[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      const child = `${pointer}/${out.length}`;
      if (this.positions) this.offsets.set(child, this.i);
      out.push(this.value(child, depth + 1));
      this.ws();
      const c = this.s[this.i];
      if (c === ",") this.i++;
      else if (c === "]") {
        this.i++;
        return out;
      } else this.fail(`expected "," or "]" but found ${this.describe()}`);
    }
  }

  private object(pointer: string, depth: number): { [key: string]: CanonicalValue } {
    this.i++;
    const out: { [key: string]: CanonicalValue } = {};
    const seen = new Set<string>();
    this.ws();
    if (this.s[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail(`expected a quoted key but found ${this.describe()}`);
      const keyOffset = this.i;
      const key = this.string();
      const child = `${pointer}/${escapePointer(key)}`;
      if (seen.has(key)) this.warnings.push({ message: `duplicate key "${key}"`, offset: keyOffset, pointer: child });
      seen.add(key);
      if (this.positions) this.offsets.set(child, keyOffset);
      this.ws();
      if (this.s[this.i] !== ":") this.fail(`expected ":" after key "${key}" but found ${this.describe()}`);
      this.i++;
      this.ws();
      setOwn(out, key, this.value(child, depth + 1));
      this.ws();
      const c = this.s[this.i];
      if (c === ",") this.i++;
      else if (c === "}") {
        this.i++;
        return out;
      } else this.fail(`expected "," or "}" but found ${this.describe()}`);
    }
  }
}

/** 1-based line and column of an offset, via a precomputed table of line starts. */
export function lineColumn(lineStarts: readonly number[], offset: number): Position {
  const line = lastStartAtOrBefore(lineStarts, offset);
  return { line: line + 1, column: offset - lineStarts[line]! + 1 };
}

/** Of the first `count` of `starts` (ascending), the index of the last at or before `offset` (0 when none is). */
export function lastStartAtOrBefore(starts: ArrayLike<number>, offset: number, count = starts.length): number {
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Offsets at which each line of the text starts. */
export function computeLineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}
