// Static screening of untrusted regular expressions (JSON Schema `pattern`, `patternProperties`,
// parameter patterns) for catastrophic backtracking. Pure. Conservative on purpose: a rejected safe
// pattern costs the author a rewrite; an accepted exponential one can hang kiwi.
import { type Node, PatternParser } from "./regex-parse.ts";

/** Longest pattern accepted; longer ones are rejected before parsing. */
export const MAX_PATTERN_LENGTH = 4096;

export type RegexVerdict = { ok: true } | { ok: false; reason: string };

/** Screens a pattern (with the `u` flag, as ajv uses it): invalid syntax or backtracking risk is a verdict. */
export function checkRegexSafety(pattern: string): RegexVerdict {
  if (pattern.length > MAX_PATTERN_LENGTH) return { ok: false, reason: `the pattern is longer than ${MAX_PATTERN_LENGTH} characters` };
  try {
    new RegExp(pattern, "u");
  } catch (error) {
    return { ok: false, reason: `the pattern is not a valid regular expression: ${(error as Error).message}` };
  }
  let tree: Node[][];
  try {
    tree = new PatternParser(pattern).parse();
  } catch (error) {
    return { ok: false, reason: `the pattern could not be analysed: ${(error as Error).message}` };
  }
  const problem = screenAlternatives(tree, false);
  return problem ? { ok: false, reason: problem } : { ok: true };
}

/** True when the pattern passes `checkRegexSafety`. */
export function isSafeRegex(pattern: string): boolean {
  return checkRegexSafety(pattern).ok;
}

/**
 * Walks the tree. `underStar` is true inside the body of an unbounded repetition: a second
 * unbounded repetition there is star height 2 (`(a+)+`), and an alternation there whose branches
 * can begin with the same character (`(a|ab)*`) can be split two ways per iteration.
 */
function screenAlternatives(alts: Node[][], underStar: boolean): string | undefined {
  for (const seq of alts) {
    for (const node of seq) {
      const problem = screenNode(node, underStar);
      if (problem) return problem;
    }
  }
  return undefined;
}

function screenNode(node: Node, underStar: boolean): string | undefined {
  if (node.kind === "repeat") {
    const unbounded = node.max === Infinity || node.max > 100;
    if (unbounded && underStar && canMatchNonEmpty(node.body)) {
      return "nested unbounded repetition (like `(a+)+`) can backtrack catastrophically";
    }
    if (unbounded) {
      const overlap = overlappingAlternation(node.body);
      if (overlap) return overlap;
      if (isDelimitedBody(node.body)) return undefined;
    }
    return screenNode(node.body, underStar || unbounded);
  }
  if (node.kind === "group") return screenAlternatives(node.alts, underStar);
  return undefined;
}

/**
 * The common safe shape of a repeated group with inner repetition, e.g. `(-[a-z]+)*` or
 * `(\s*,\s*\w+)*`: only simple items (characters and repeated characters), one mandatory
 * delimiter character no other item can match (so each iteration is pinned to one delimiter), and
 * no two repetitions between delimiters (cyclically) that can match the same character.
 */
function isDelimitedBody(body: Node): boolean {
  const items = body.kind === "group" && !body.lookaround && body.alts.length === 1 ? body.alts[0]!.filter((n) => n.kind !== "empty") : [body];
  const sets: string[][] = [];
  for (const item of items) {
    if (item.kind === "char") sets.push([item.src]);
    else if (item.kind === "repeat" && item.body.kind === "char") sets.push([item.body.src]);
    else return false;
  }
  const delimiter = items.findIndex(
    (item, i) => item.kind === "char" && sets.every((set, j) => j === i || !setsOverlap(sets[i]!, set)),
  );
  if (delimiter === -1) return false;
  // Runs of repetitions between mandatory characters, read cyclically from the delimiter.
  const rotated = [...items.slice(delimiter), ...items.slice(0, delimiter)];
  const rotatedSets = [...sets.slice(delimiter), ...sets.slice(0, delimiter)];
  // Two repetitions conflict when they overlap and only optional items separate them.
  let run: { set: string[]; min: number }[] = [];
  for (let i = 0; i <= rotated.length; i++) {
    const item = rotated[i % rotated.length]!;
    if (i === rotated.length || item.kind === "char") {
      for (let a = 0; a < run.length; a++) {
        for (let b = a + 1; b < run.length; b++) {
          if (setsOverlap(run[a]!.set, run[b]!.set)) return false;
          if (run[b]!.min > 0) break;
        }
      }
      run = [];
    } else if (item.kind === "repeat") run.push({ set: rotatedSets[i]!, min: item.min });
  }
  return true;
}

/** An alternation directly repeated whose branches can start alike: `(a|a)*`, `(a|ab)+`. */
function overlappingAlternation(body: Node): string | undefined {
  if (body.kind !== "group" || body.alts.length < 2) return undefined;
  const firsts = body.alts.map((seq) => firstChars(seq));
  for (let i = 0; i < firsts.length; i++) {
    for (let j = i + 1; j < firsts.length; j++) {
      if (setsOverlap(firsts[i]!, firsts[j]!)) {
        return "a repeated alternation whose branches can start with the same character (like `(a|ab)*`) can backtrack catastrophically";
      }
    }
  }
  return undefined;
}

/** The character classes a sequence can begin with; "any" when it cannot tell (a back-reference). */
function firstChars(seq: Node[]): string[] | "any" {
  const out: string[] = [];
  for (const node of seq) {
    const f = firstOf(node);
    if (f === "any") return "any";
    out.push(...f);
    if (!nullable(node)) break;
  }
  return out;
}

function firstOf(node: Node): string[] | "any" {
  switch (node.kind) {
    case "char":
      return [node.src];
    case "empty":
      return [];
    case "backref":
      return "any";
    case "repeat":
      return node.max === 0 ? [] : firstOf(node.body);
    case "group": {
      if (node.lookaround) return [];
      const out: string[] = [];
      for (const seq of node.alts) {
        const f = firstChars(seq);
        if (f === "any") return "any";
        out.push(...f);
      }
      return out;
    }
  }
}

function nullable(node: Node): boolean {
  switch (node.kind) {
    case "char":
      return false;
    case "empty":
      return true;
    case "backref":
      return true;
    case "repeat":
      return node.min === 0 || nullable(node.body);
    case "group":
      return node.lookaround || node.alts.some((seq) => seq.every(nullable));
  }
}

function canMatchNonEmpty(node: Node): boolean {
  switch (node.kind) {
    case "char":
    case "backref":
      return true;
    case "empty":
      return false;
    case "repeat":
      return node.max > 0 && canMatchNonEmpty(node.body);
    case "group":
      return !node.lookaround && node.alts.some((seq) => seq.some(canMatchNonEmpty));
  }
}

// Characters tried when deciding whether two classes share a member: ASCII, Latin-1, and a few
// representatives of other scripts, whitespace and astral planes.
const SAMPLES: string[] = (() => {
  const out: string[] = [];
  for (let c = 0; c < 0x300; c++) out.push(String.fromCodePoint(c));
  for (const c of [0x391, 0x430, 0x5d0, 0x627, 0x905, 0x3042, 0x4e00, 0xac00, 0x2028, 0x3000, 0xfeff, 0xfffd, 0x1f600, 0x10000]) out.push(String.fromCodePoint(c));
  return out;
})();

const classCache = new Map<string, RegExp>();

function classRegex(src: string): RegExp {
  let re = classCache.get(src);
  if (!re) {
    re = new RegExp(`^(?:${src})$`, "u");
    classCache.set(src, re);
  }
  return re;
}

function setsOverlap(a: string[] | "any", b: string[] | "any"): boolean {
  if (a === "any" || b === "any") return true;
  for (const x of a) {
    for (const y of b) {
      if (x === y) return true;
      const rx = classRegex(x);
      const ry = classRegex(y);
      if (SAMPLES.some((s) => rx.test(s) && ry.test(s))) return true;
    }
  }
  return false;
}
