// server.json inputs (arguments, environment variables, headers, URL variables) -> kiwi config
// strings. A value the user supplies becomes `${VAR}` (read from kiwi's environment at exec); a
// secret is never written as a value, only referenced and listed in config.secrets. Pure.
import { isRecord } from "../integrity/value.ts";
import { envNameOf } from "../schema/placeholders.ts";
import { child, importError } from "./import-errors.ts";

export interface InputScope {
  /** Environment variables referenced for secret inputs (config.secrets). */
  secrets: Set<string>;
  notes: string[];
  file: string;
}

/** Literal text as a kiwi config string: `{name}` would be a call parameter, so it is doubled. */
export function escapeLiteral(text: string): string {
  return text.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, "{{$1}}");
}

/** What one input becomes: a literal, a reference to an environment variable, or nothing. */
function inputValue(input: Record<string, unknown>, envName: string, pointer: string, scope: InputScope, what: string): string | undefined {
  const secret = input.isSecret === true;
  if (typeof input.value === "string") {
    const refs = [...input.value.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)];
    if (secret && refs.length === 0) {
      // A secret written into a public server.json: kiwi still never copies it into a manifest.
      scope.notes.push(`${pointer}: ${what} is secret, so its value in the server.json is not copied; kiwi reads \${${envName}} from the environment`);
      scope.secrets.add(envName);
      return `\${${envName}}`;
    }
    return resolveTemplate(input.value, isRecord(input.variables) ? input.variables : undefined, child(pointer, "value"), scope, what);
  }
  if (typeof input.default === "string" && !secret) return escapeLiteral(input.default);
  if (input.isRequired === true || (secret && typeof input.default === "string")) {
    if (secret) scope.secrets.add(envName);
    return `\${${envName}}`;
  }
  scope.notes.push(`${pointer}: optional ${what} has no value or default and is not passed; add it to the manifest to set it`);
  return undefined;
}

/**
 * Expands a server.json value template: `{var}` takes the variable's value or default when it is
 * not secret, else `${VAR}`; a brace name the variables do not define stays literal, as the schema says.
 */
export function resolveTemplate(template: string, variables: Record<string, unknown> | undefined, pointer: string, scope: InputScope, what: string): string {
  let out = "";
  let last = 0;
  for (const m of template.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
    out += escapeLiteral(template.slice(last, m.index));
    last = m.index + m[0].length;
    const variable = variables?.[m[1]!];
    if (!isRecord(variable)) {
      out += `{{${m[1]}}}`;
      continue;
    }
    const envName = envNameOf(m[1]!);
    const value = inputValue({ ...variable, isRequired: true, variables: undefined }, envName, child(child(pointer.replace(/\/(value|url)$/, ""), "variables"), m[1]!), scope, `${what} variable ${m[1]}`);
    out += value ?? "";
  }
  return out + escapeLiteral(template.slice(last));
}

/** environmentVariables or headers -> a name -> value map (omitting optional inputs nobody set). */
export function mapKeyValues(items: unknown[], pointer: string, scope: InputScope, envName: (name: string) => string): Record<string, string> {
  const out: Record<string, string> = {};
  items.forEach((item, i) => {
    const at = child(pointer, i);
    if (!isRecord(item) || typeof item.name !== "string" || item.name === "") throw importError(scope.file, at, "the entry has no name", 'write { "name": "API_KEY", … }');
    if (Object.hasOwn(out, item.name)) throw importError(scope.file, child(at, "name"), `${item.name} is declared twice`, "declare each variable or header once");
    const value = inputValue(item, envName(item.name), at, scope, item.name);
    if (value !== undefined) out[item.name] = value;
  });
  return out;
}

/** packageArguments -> argv items: a positional is one item, a named argument is `--name value`. */
export function mapArguments(items: unknown[], pointer: string, scope: InputScope): string[] {
  const out: string[] = [];
  items.forEach((item, i) => {
    const at = child(pointer, i);
    if (!isRecord(item)) throw importError(scope.file, at, "an argument is an object", 'write { "type": "positional", "value": "…" } or { "type": "named", "name": "--flag", … }');
    if (item.type === "positional") {
      const label = typeof item.valueHint === "string" ? item.valueHint : undefined;
      if (item.value === undefined && label === undefined) throw importError(scope.file, at, "a positional argument has neither value nor valueHint", "add the value, or a valueHint naming what the user supplies");
      const value = inputValue(item, envNameOf(label ?? `arg_${i}`), at, scope, `argument ${label ?? i}`);
      if (value !== undefined) out.push(value);
    } else if (item.type === "named") {
      if (typeof item.name !== "string" || item.name === "") throw importError(scope.file, at, "a named argument has no name", 'add "name": "--flag"');
      if (item.value === undefined && item.default === undefined && item.format === "boolean") {
        // A bare flag: present when the publisher requires it.
        if (item.isRequired === true) out.push(item.name);
        else scope.notes.push(`${at}: optional flag ${item.name} is not passed; add it to config.args to set it`);
        return;
      }
      const value = inputValue(item, envNameOf(item.name), at, scope, `argument ${item.name}`);
      if (value !== undefined) out.push(item.name, value);
    } else {
      throw importError(scope.file, child(at, "type"), item.type === undefined ? "an argument has no type" : `argument type ${JSON.stringify(item.type)} is not positional or named`, 'write "type": "positional" or "named"');
    }
    if (item.isRepeated === true) scope.notes.push(`${at}: the argument may be repeated; kiwi passes it once (repeat it in config.args to pass more)`);
  });
  return out;
}
