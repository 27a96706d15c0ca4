// The placeholder grammar of manifest strings: `{name}` takes a call parameter, `${VAR}` reads the
// environment, `{{name}}` is a literal `{name}`; anything else is literal text. The validator
// checks it and exec expands it, both from this one definition. Pure.

/** One placeholder; groups: 1 = env var, 2 = literal name, 3 = parameter. Global: use with matchAll/replace. */
export const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const WHOLE_PARAM = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** The parameter a string consists of entirely (`"{tags}"`), or undefined. */
export function wholeParam(text: string): string | undefined {
  return WHOLE_PARAM.exec(text)?.[1];
}

/**
 * A URL template's scheme and host (`https://api.example.com:8443`), where no parameter may go:
 * exec refuses such a URL on every call, and kiwi check reports it (api/url).
 */
export const URL_AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/** An HTTP header name (RFC 9110 token): exec sends no other, and kiwi check reports one (api/header-name). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The parameter names a template references. */
export function referencedParams(template: string): string[] {
  const out: string[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) if (m[3] !== undefined) out.push(m[3]);
  return out;
}

/**
 * Environment names treated as secret even when `config.secrets` does not list them: exec keeps
 * their values out of logs, errors and its caches, export marks them secret, and check warns when
 * one reaches a command line.
 */
export const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|PRIVATE_?KEY|CREDENTIAL)/i;

/**
 * Whether a parameter's name says it carries a secret: its last word (split at `_`, `-`, `.` and
 * camelCase humps), the thing it names, is token, secret, password, passwd, passphrase or
 * credential(s), or apikey, or key after api or private (`github_token`, `apiKey`, `db_password`).
 * Word by word, unlike SECRET_NAME: parameters are named for models, and `max_tokens`,
 * `token_count` or `password_file` name a count and a path, not a secret.
 */
export function isSecretParam(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const last = words.at(-1) ?? "";
  return SECRET_WORDS.has(last) || (last === "key" && (words.at(-2) === "api" || words.at(-2) === "private"));
}

const SECRET_WORDS = new Set(["token", "secret", "password", "passwd", "passphrase", "credential", "credentials", "apikey"]);

/** A name as an environment variable's: `X-API-Key` -> `X_API_KEY`, `--port` -> `PORT`, `db.password` -> `DB_PASSWORD`. */
export function envNameOf(name: string): string {
  const upper = name.replace(/^-+/, "").toUpperCase().replace(/[^A-Z0-9_]+/g, "_");
  return /^[A-Z_]/.test(upper) ? upper : `_${upper}`;
}

/** The names a config's `secrets` list declares (anything but strings ignored). */
export function declaredSecrets(config: Record<string, unknown>): ReadonlySet<string> {
  return new Set(Array.isArray(config.secrets) ? config.secrets.filter((s): s is string => typeof s === "string") : []);
}

/** Whether an environment name is a secret: declared (config.secrets) or looking secret (SECRET_NAME). */
export function isSecretName(name: string, declared: ReadonlySet<string>): boolean {
  return declared.has(name) || SECRET_NAME.test(name);
}

/** The secret names a template references (isSecretName). */
export function referencedSecrets(template: string, declared: ReadonlySet<string>): string[] {
  return referencedEnv(template).filter((name) => isSecretName(name, declared));
}

/** The environment variable names a template references. */
export function referencedEnv(template: string): string[] {
  const out: string[] = [];
  // Without "${" there is none (and the regular expression, compiled on first use, is not needed).
  if (!template.includes("${")) return out;
  for (const m of template.matchAll(PLACEHOLDER)) if (m[1] !== undefined) out.push(m[1]);
  return out;
}
