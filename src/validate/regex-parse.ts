// Reads JavaScript `u`-mode regular expressions into the small tree regex-safety.ts screens.
// Pure. Only patterns `new RegExp(p, "u")` already accepted reach it, so it can be lenient.

/** A parsed pattern node; only what the screening needs. */
export type Node =
  | { kind: "char"; src: string } // one character or a class: `a`, `\d`, `[a-z]`, `.`
  | { kind: "empty" } // anchors, \b, lookaround bodies are screened but match nothing
  | { kind: "backref" }
  | { kind: "group"; alts: Node[][]; lookaround: boolean }
  | { kind: "repeat"; body: Node; min: number; max: number };

/** A small recursive-descent reader of JavaScript `u`-mode patterns (already known to be valid). */
export class PatternParser {
  private i = 0;
  private depth = 0;

  constructor(private readonly s: string) {}

  parse(): Node[][] {
    const alts = this.alternatives();
    if (this.i < this.s.length) throw new Error(`unexpected "${this.s[this.i]}" at ${this.i}`);
    return alts;
  }

  private alternatives(): Node[][] {
    if (++this.depth > 64) throw new Error("groups nested deeper than 64 levels");
    const alts: Node[][] = [this.sequence()];
    while (this.s[this.i] === "|") {
      this.i++;
      alts.push(this.sequence());
    }
    this.depth--;
    return alts;
  }

  private sequence(): Node[] {
    const seq: Node[] = [];
    while (this.i < this.s.length && this.s[this.i] !== "|" && this.s[this.i] !== ")") {
      const atom = this.atom();
      seq.push(this.quantified(atom));
    }
    return seq;
  }

  private quantified(atom: Node): Node {
    let node = atom;
    for (;;) {
      const c = this.s[this.i];
      let min: number;
      let max: number;
      if (c === "*") [min, max] = [0, Infinity];
      else if (c === "+") [min, max] = [1, Infinity];
      else if (c === "?") [min, max] = [0, 1];
      else if (c === "{") {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i));
        if (!m) return node;
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
        this.i += m[0].length - 1;
      } else return node;
      this.i++;
      if (this.s[this.i] === "?") this.i++; // lazy quantifiers backtrack just the same
      node = { kind: "repeat", body: node, min, max };
    }
  }

  private atom(): Node {
    const c = this.s[this.i]!;
    if (c === "(") return this.group();
    if (c === "[") return { kind: "char", src: this.charClass() };
    if (c === "\\") return this.escape();
    if (c === "^" || c === "$") {
      this.i++;
      return { kind: "empty" };
    }
    const cp = this.s.codePointAt(this.i)!;
    const ch = String.fromCodePoint(cp);
    this.i += ch.length;
    if (ch === ".") return { kind: "char", src: "." };
    return { kind: "char", src: escapeLiteral(ch) };
  }

  private group(): Node {
    this.i++; // (
    let lookaround = false;
    if (this.s.startsWith("?:", this.i)) this.i += 2;
    else if (this.s.startsWith("?=", this.i) || this.s.startsWith("?!", this.i)) {
      this.i += 2;
      lookaround = true;
    } else if (this.s.startsWith("?<=", this.i) || this.s.startsWith("?<!", this.i)) {
      this.i += 3;
      lookaround = true;
    } else if (this.s.startsWith("?<", this.i)) {
      const end = this.s.indexOf(">", this.i);
      this.i = end + 1;
    }
    const alts = this.alternatives();
    if (this.s[this.i] !== ")") throw new Error("unclosed group");
    this.i++;
    return { kind: "group", alts, lookaround };
  }

  private charClass(): string {
    const start = this.i;
    this.i++; // [
    if (this.s[this.i] === "^") this.i++;
    if (this.s[this.i] === "]") this.i++;
    while (this.i < this.s.length && this.s[this.i] !== "]") {
      if (this.s[this.i] === "\\") this.i++;
      this.i++;
    }
    this.i++; // ]
    return this.s.slice(start, this.i);
  }

  private escape(): Node {
    const start = this.i;
    this.i++; // backslash
    const c = this.s[this.i]!;
    if (c === "b" || c === "B") {
      this.i++;
      return { kind: "empty" };
    }
    if (/[1-9]/.test(c)) {
      while (/\d/.test(this.s[this.i] ?? "")) this.i++;
      return { kind: "backref" };
    }
    if (c === "k" && this.s[this.i + 1] === "<") {
      this.i = this.s.indexOf(">", this.i) + 1;
      return { kind: "backref" };
    }
    if ((c === "p" || c === "P") && this.s[this.i + 1] === "{") {
      this.i = this.s.indexOf("}", this.i) + 1;
    } else if (c === "u" && this.s[this.i + 1] === "{") {
      this.i = this.s.indexOf("}", this.i) + 1;
    } else if (c === "u") this.i += 5;
    else if (c === "x") this.i += 3;
    else if (c === "c") this.i += 2;
    else this.i += String.fromCodePoint(this.s.codePointAt(this.i)!).length;
    return { kind: "char", src: this.s.slice(start, this.i) };
  }
}

function escapeLiteral(ch: string): string {
  return /[\\^$.*+?()[\]{}|]/.test(ch) ? `\\${ch}` : ch;
}
