// Untrusted patterns (a manifest's `pattern`, a child schema's, an MCP server's outputSchema) run
// on RE2, a linear-time engine (re2js), never on the backtracking RegExp: `^a*a*a*$` on 5,001
// characters took 30 s there, and no static screen catches every polynomial case. Patterns RE2
// cannot run (lookaround, backreferences) are refused where they are compiled. Pure; re2js is
// loaded on first use so a run that matches no pattern never pays for it.
import type { RE2JS as RE2JSClass } from "re2js";

export class UnsupportedPattern extends Error {}

const compiled = new Map<string, RE2JSClass>();

/**
 * A `test` over `pattern` with JSON Schema's semantics (a match anywhere, Unicode), in linear time.
 * Shaped like a RegExp where ajv looks: it keys compiled patterns by `String(regExp)`, so each
 * pattern must print as itself. Throws UnsupportedPattern.
 */
export function linearRegExp(pattern: string): { test: (input: string) => boolean; source: string; toString: () => string } {
  let re = compiled.get(pattern);
  if (!re) {
    const { RE2JS } = require("re2js") as typeof import("re2js");
    try {
      re = RE2JS.compile(pattern);
    } catch (error) {
      throw new UnsupportedPattern(`${(error as Error).message}; kiwi runs patterns on a linear-time engine, which has no lookaround or backreferences`);
    }
    compiled.set(pattern, re);
  }
  const engine = re;
  return { test: (input: string) => engine.matcher(input).find(), source: pattern, toString: () => `/${pattern}/u` };
}
