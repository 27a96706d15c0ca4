// Placeholder expansion for plans: `{name}` takes a call parameter, `${VAR}` reads the environment.
// One pass, never re-scanned, never shell-interpreted: a substituted value cannot introduce another
// placeholder, split an argument or escape its URL component. Pure.
import { KiwiError } from "../errors.ts";
import { PLACEHOLDER, wholeParam } from "../schema/placeholders.ts";
import { Float } from "../integrity/value.ts";
import { renderLosslessJson } from "../integrity/canonical.ts";

/** What expansion reads: the validated parameters, the environment and which variables are secret. */
export interface TemplateScope {
  params: Readonly<Record<string, unknown>>;
  env: Readonly<Record<string, string | undefined>>;
  /** Environment variable names whose values are never shown. */
  secrets: ReadonlySet<string>;
  /** When true, secret values expand to `***` (the plan as shown); false gives the plan as run. */
  redact: boolean;
  /** Environment variables referenced but unset, collected so one error names them all. */
  missingEnv: Set<string>;
}

/** The shown stand-in for a secret value. */
export const REDACTED = "***";


/** A string expanded, or `absent` when it references a parameter that has no value. */
export type Expansion = { absent: false; value: string; params: string[] } | { absent: true; param: string };

/**
 * Expands `${VAR}` and `{name}` in one string. `encode` applies to substituted parameter values only
 * (URL components); environment values come from the operator and are inserted as they are.
 */
export function expandString(template: string, scope: TemplateScope, encode: (value: string, param: string) => string = (v) => v): Expansion {
  // Every placeholder has a "{": text without one is its own expansion, and most of a chain's
  // strings are such text (a runtime's flags, its command). Skipping the regular expression for
  // them means a call of a tool without placeholders compiles none (~0.1 ms of a warm exec).
  if (!template.includes("{")) return { absent: false, value: template, params: [] };
  let absent: string | undefined;
  const used: string[] = [];
  const value = template.replace(PLACEHOLDER, (_m, envName?: string, literal?: string, param?: string) => {
    if (envName !== undefined) return envValue(envName, scope);
    if (literal !== undefined) return `{${literal}}`;
    if (!Object.hasOwn(scope.params, param!) || scope.params[param!] === undefined) {
      absent ??= param;
      return "";
    }
    used.push(param!);
    return encode(stringifyParam(scope.params[param!]), param!);
  });
  return absent !== undefined ? { absent: true, param: absent } : { absent: false, value, params: used };
}

/**
 * Expands a JSON body: a string that is exactly `{name}` becomes the parameter's typed value; other
 * strings expand as text. Members and items that reference an absent parameter are dropped.
 */
export function expandValue(value: unknown, scope: TemplateScope): { present: boolean; value: unknown } {
  if (typeof value === "string") {
    const name = wholeParam(value);
    if (name !== undefined) {
      const v = scope.params[name];
      return Object.hasOwn(scope.params, name) && v !== undefined ? { present: true, value: v } : { present: false, value: undefined };
    }
    const e = expandString(value, scope);
    return e.absent ? { present: false, value: undefined } : { present: true, value: e.value };
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const e = expandValue(item, scope);
      if (e.present) out.push(e.value);
    }
    return { present: true, value: out };
  }
  // A lossless Float (1.0) is a number, not a mapping to walk.
  if (value !== null && typeof value === "object" && !(value instanceof Float)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const e = expandValue(v, scope);
      if (e.present) Object.defineProperty(out, k, { value: e.value, enumerable: true, writable: true, configurable: true });
    }
    return { present: true, value: out };
  }
  return { present: true, value };
}


/** A config value as one string: a string as it is, anything else as lossless JSON (`1.0` stays `1.0`). */
export function renderConfigText(value: unknown): string {
  return typeof value === "string" ? value : renderLosslessJson(value);
}

/** How a parameter value becomes text: strings as they are, everything else as JSON. */
export function stringifyParam(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "bigint") return value.toString();
  return JSON.stringify(value) ?? "";
}

function envValue(name: string, scope: TemplateScope): string {
  const value = scope.env[name];
  if (value === undefined) {
    scope.missingEnv.add(name);
    return "";
  }
  return scope.redact && scope.secrets.has(name) ? REDACTED : value;
}

/** Throws one error naming every unset environment variable a plan referenced. */
export function assertEnvPresent(scope: TemplateScope, toolId: string): void {
  if (scope.missingEnv.size === 0) return;
  const names = [...scope.missingEnv].sort();
  throw new KiwiError("E_EXEC_FAILED", `${toolId} references ${names.map((n) => `\${${n}}`).join(", ")}, which ${names.length === 1 ? "is" : "are"} not set in the environment`, {
    hint: `export ${names.map((n) => `${n}=…`).join(" ")} before running kiwi`,
    details: { missingEnv: names },
  });
}

/** Builds the redactor for a call: every non-empty secret value becomes `***`. */
export function makeRedactor(values: readonly string[]): (text: string) => string {
  const secrets = [...new Set(values.filter((v) => v.length > 0))].sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return (text) => text;
  // A secret sent in a JSON body comes back escaped when a server echoes the body: `pa"ss` as
  // `pa\"ss`, `wörd` as `w\u00f6rd` (Python's json.dumps), `a/b` as `a\/b` (PHP's json_encode).
  // Built on first use: most calls redact nothing (a warm exec builds the redactor and never calls it).
  let jsonSpellings: RegExp[] | undefined;
  return (text) => {
    // The JSON spellings first: each also matches the secret as it is, and a raw match inside an
    // escaped one (`pw\` in `pw\\`) would leave half an escape behind.
    let out = text;
    for (const spelling of (jsonSpellings ??= secrets.map(jsonSpelling))) out = out.replace(spelling, REDACTED);
    for (const s of secrets) out = out.split(s).join(REDACTED);
    // The same secret percent-encoded in a URL is still the secret, in each form a URL takes it:
    // as one component, as a query value (form encoding: a space is "+"), as the URL parser
    // leaves it in a path or a query string it was written into whole, and as a URL's userinfo.
    for (const s of secrets) {
      for (const enc of urlForms(s)) if (enc !== s && enc !== "") out = out.split(enc).join(REDACTED);
    }
    return out;
  };
}

/** The spellings a URL gives `secret`, longest first (so none is left half replaced by a shorter one). */
function urlForms(secret: string): string[] {
  const forms = new Set([encodeURIComponent(secret), new URLSearchParams([["k", secret]]).toString().slice(2)]);
  try {
    // ? and # would end a path (written encoded, as a URL carries them); a \ in an http path is a /.
    forms.add(new URL(`http://h/${secret.replace(/\?/g, "%3F").replace(/#/g, "%23")}`).pathname.slice(1));
    forms.add(new URL(`http://h/?${secret.replace(/#/g, "%23")}`).search.slice(1));
    // https://user:${PASSWORD}@host/: userinfo encodes another set (";" but not "$").
    const userinfo = new URL("http://h/");
    userinfo.password = secret;
    forms.add(userinfo.password);
  } catch {
    // Not parseable as part of a URL: the component forms above are all it can take.
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * Every way a JSON string can spell `secret`: each character as itself, as its `\u` escape (hex in
 * either case; a surrogate pair past U+FFFF) or as JSON.stringify escapes it (`\"`, `\\`, `\n`…),
 * and `/` as `\/` too.
 */
function jsonSpelling(secret: string): RegExp {
  const pattern = [...secret].map((ch) => {
    const unicode = Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`).join("");
    const spellings = new Set([ch, JSON.stringify(ch).slice(1, -1), unicode, unicode.toUpperCase().replaceAll("\\U", "\\u"), ...(ch === "/" ? ["\\/"] : [])]);
    // Longest first: in `pw\\` (JSON for `pw\`) the escape, not the bare `\`, is the secret's.
    return `(?:${[...spellings].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|")})`;
  });
  return new RegExp(pattern.join(""), "g");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
