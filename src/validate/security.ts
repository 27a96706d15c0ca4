// Layer 3, security and consistency, following magray's rules: capabilities need permissions,
// resource limits stay within documented bounds, shell+network+filesystem is a warning (an error
// with --strict), and entry points and file paths never leave the tool directory. Pure.
import type { Finding } from "../findings/verdict.ts";
import { type Limits, type Tool, manifestPathOf } from "../manifest/model.ts";
import { syntaxOf } from "../manifest/forms.ts";
import { CAPABILITY_NAMES } from "../manifest/normalize.ts";
import { expandDeclaredPath, ungrantablePath } from "../manifest/capability-path.ts";
import { MAGRAY_CAPABILITY_WORDS } from "../schema/vocabulary.ts";
import { toolFinding } from "../findings/finding.ts";
import { type LayerContext, isPublished, normalizeRel, seg, toolPath } from "./layer.ts";
import { toolPathProblem } from "../integrity/tool-path.ts";
import { isRecord } from "../integrity/value.ts";
import { ALIAS_GROUPS, chosenSpelling } from "../manifest/aliases.ts";
import { declaredSecrets, envNameOf, isSecretName, isSecretParam, referencedParams, referencedSecrets } from "../schema/placeholders.ts";
import { ANY_CREDENTIAL, PUBLISHED_WITH_IT, credentialIn, credentialNoun, publishedExampleHint, publishedSecretHint } from "./credentials.ts";

/** Documented bounds of each limit (magray's for memory, time and fuel), inclusive. */
export const LIMIT_BOUNDS: Record<keyof Limits, { min: number; max: number; unit: string }> = {
  memoryMb: { min: 1, max: 2048, unit: "MB" },
  timeoutMs: { min: 1, max: 300_000, unit: "ms" },
  cpuSeconds: { min: 1, max: 300, unit: "s" },
  openFiles: { min: 1, max: 65_536, unit: "files" },
  processes: { min: 1, max: 4096, unit: "processes" },
  outputBytes: { min: 1, max: 1024 * 1024 * 1024, unit: "bytes" },
  fuel: { min: 1, max: 100_000_000, unit: "units of fuel" },
};

/**
 * kiwi-dialect bounds that differ from magray's: kiwi_mcp's own data_processor example runs for 30
 * minutes (config.timeout: 1800), which magray's 5-minute cap would refuse. Long limits still warn
 * (STRICT_LIMITS), and magray manifests keep magray's bounds.
 */
const KIWI_BOUNDS: Partial<typeof LIMIT_BOUNDS> = {
  timeoutMs: { min: 1, max: 86_400_000, unit: "ms" },
  cpuSeconds: { min: 1, max: 86_400, unit: "s" },
};

/** The documented bounds of one limit in a dialect. */
export function limitBound(key: keyof Limits, dialect: Tool["dialect"]): { min: number; max: number; unit: string } {
  return (dialect === "kiwi" ? KIWI_BOUNDS[key] : undefined) ?? LIMIT_BOUNDS[key];
}

/** Above these, a limit is a warning (an error with --strict), as magray's strict mode has it. */
export const STRICT_LIMITS: Partial<Record<keyof Limits, number>> = { memoryMb: 512, timeoutMs: 120_000 };

/** Where each limit is written, per dialect. */
const LIMIT_FIELDS: Record<"kiwi" | "magray", Partial<Record<keyof Limits, string>>> = {
  kiwi: {
    memoryMb: "/limits/memory_mb",
    timeoutMs: "/limits/timeout_ms",
    cpuSeconds: "/limits/cpu_seconds",
    openFiles: "/limits/open_files",
    processes: "/limits/processes",
    outputBytes: "/limits/output_bytes",
    fuel: "/limits/fuel",
  },
  magray: { memoryMb: "/runtime_config/max_memory_mb", timeoutMs: "/runtime_config/max_execution_time_ms", fuel: "/runtime_config/fuel_limit" },
};

/** magray capabilities that need a permissions entry of the same name (magray's consistency rule). */
const NEEDS_PERMISSION = new Set(["filesystem", "network", "shell"]);

/** Security findings for one tool. */
export function checkSecurity(tool: Tool, ctx: LayerContext): Finding[] {
  const out: Finding[] = [];
  capabilities(tool, out);
  fsPaths(tool, out);
  hosts(tool, ctx, out);
  limits(tool, ctx, out);
  risky(tool, ctx, out);
  secretArgs(tool, ctx, out);
  credentials(tool, isPublished(tool, ctx.remoteRecords), tool.doc, [], out, 0);
  secretValues(tool, ctx, out);
  paths(tool, ctx, out);
  return out;
}

function capabilities(tool: Tool, out: Finding[]): void {
  const doc = tool.doc;
  if (tool.dialect === "magray") {
    if (!Array.isArray(doc.capabilities)) return;
    const perms = isRecord(doc.permissions) ? doc.permissions : {};
    doc.capabilities.forEach((cap, i) => {
      const at = `/capabilities/${i}`;
      if (typeof cap !== "string" || !(MAGRAY_CAPABILITY_WORDS as readonly string[]).includes(cap)) {
        out.push(toolFinding(tool, "security/capability-unknown", at, `capability ${JSON.stringify(cap)} is not known`, `use one of ${MAGRAY_CAPABILITY_WORDS.join(", ")}`));
      } else if (NEEDS_PERMISSION.has(cap) && (perms[cap] === undefined || perms[cap] === null)) {
        // magray's validate_consistency: a declared capability needs its permission group; null is none.
        out.push(toolFinding(tool, "security/capability-permission", at, `Tool declares ${cap} capability but has no ${cap} permissions`, `add "permissions": { "${cap}": [...] } naming what it may do, or drop the capability`));
      }
    });
    return;
  }
  if (!Array.isArray(doc.requires)) return;
  doc.requires.forEach((item, i) => {
    const at = `/requires/${i}`;
    if (typeof item === "string") {
      if ((CAPABILITY_NAMES as readonly string[]).includes(item)) {
        if (item.startsWith("fs.") || item === "net.outbound") {
          out.push(toolFinding(tool, "security/capability-unscoped", at, `${item} names no ${item === "net.outbound" ? "hosts" : "paths"}, so it grants all of them`, `write { ${item}: [${item === "net.outbound" ? "api.example.com" : "./data"}] }`));
        }
      } else if (/^(fs|net|shell|env|proc)\./.test(item)) {
        out.push(toolFinding(tool, "security/capability-unknown", at, `capability "${item}" is not known`, `use one of ${CAPABILITY_NAMES.join(", ")}`));
      }
      return;
    }
    if (!isRecord(item) || Object.keys(item).length !== 1) return; // the shape check reports it
    const [name, targets] = Object.entries(item)[0]!;
    if (!(CAPABILITY_NAMES as readonly string[]).includes(name)) {
      out.push(toolFinding(tool, "security/capability-unknown", `${at}/${seg(name)}`, `capability "${name}" is not known`, `use one of ${CAPABILITY_NAMES.join(", ")}`));
    } else if ((name.startsWith("fs.") || name === "net.outbound") && (targets === "" || (Array.isArray(targets) && targets.length === 0))) {
      out.push(toolFinding(tool, "security/capability-unscoped", `${at}/${seg(name)}`, `${name} lists no ${name === "net.outbound" ? "hosts" : "paths"}, so it grants all of them`));
    }
  });
}

/**
 * Declared fs paths the sandbox can never grant (manifest/capability-path.ts), judged as exec's
 * mounts judge them: exec refuses every call of such a tool. Absolute paths only: a relative or
 * home path depends on where the project and the home folder are.
 */
function fsPaths(tool: Tool, out: Finding[]): void {
  for (const cap of tool.capabilities) {
    if (cap.name !== "fs.read" && cap.name !== "fs.write") continue;
    for (const raw of cap.paths ?? []) {
      const path = raw.trim();
      if (!path.startsWith("/")) continue;
      const refused = ungrantablePath(expandDeclaredPath(path, "/", "/"));
      if (refused) out.push(toolFinding(tool, "security/capability-path", cap.pointer, `${cap.name} path "${raw}" cannot be granted: ${refused.why}, so kiwi exec refuses the tool`, refused.hint));
    }
  }
}

/** Declared hosts, judged as exec's host policy will judge them (manifest/host-rule.ts). */
function hosts(tool: Tool, ctx: LayerContext, out: Finding[]): void {
  for (const cap of tool.capabilities) {
    if (cap.name !== "net.outbound" || !cap.hosts?.length) continue;
    // host-rule (with ipaddr.js) loads only for a tool that declares hosts: ~0.4 ms of start-up.
    const { coversEverything, hostEntryProblem, parseHostRule } = require("../manifest/host-rule.ts") as typeof import("../manifest/host-rule.ts");
    for (const raw of cap.hosts) {
      const rule = parseHostRule(raw);
      // hostEntryProblem is null exactly when the entry parses: only a failed entry is asked why.
      const problem = rule ? null : hostEntryProblem(raw);
      if (problem) out.push(toolFinding(tool, "security/host-invalid", cap.pointer, `net.outbound host ${JSON.stringify(raw)}: ${problem}`, "declare a host name (api.example.com), a wildcard (*.example.com), an IP or a CIDR range, with an optional :port"));
      else if (rule && coversEverything(rule)) {
        out.push(toolFinding(tool, "security/host-any", cap.pointer, `net.outbound ${JSON.stringify(raw)} admits every host`, "name the hosts the tool needs; kiwi exec runs it only with --allow-any-host", ctx.strict ? "error" : undefined));
      }
    }
  }
}

function limits(tool: Tool, ctx: LayerContext, out: Finding[]): void {
  const fields = LIMIT_FIELDS[tool.dialect];
  for (const key of Object.keys(LIMIT_BOUNDS) as (keyof Limits)[]) {
    const value = tool.limits[key];
    if (value === undefined) continue;
    // kiwi's config.timeout (seconds) counts when limits.timeout_ms is absent.
    const pointer = key === "timeoutMs" && tool.dialect === "kiwi" && !(isRecord(tool.doc.limits) && "timeout_ms" in tool.doc.limits) ? "/config/timeout" : (fields[key] ?? "");
    const bound = limitBound(key, tool.dialect);
    const written = pointer === "/config/timeout" ? value / 1000 : value;
    // Past 2^53 the number read is not the one written (9007199254740993 reads as …992): name no
    // rounded value the manifest does not contain.
    const shown = Number.isInteger(written) && !Number.isSafeInteger(written)
      ? `${written > 0 ? "larger than" : "smaller than"} ${written > 0 ? "" : "-"}${Number.MAX_SAFE_INTEGER}${pointer === "/config/timeout" ? " s" : ""}, past what kiwi reads exactly`
      : pointer === "/config/timeout" ? `${written} s` : String(written);
    if (!(value >= bound.min && value <= bound.max)) {
      out.push(toolFinding(tool, "security/limits", pointer, `${fieldName(pointer)} is ${shown}; it must be between ${bound.min} and ${bound.max} ${bound.unit}`, `set it within that range, or leave it out for kiwi's default`));
      continue;
    }
    const high = STRICT_LIMITS[key];
    if (high !== undefined && value > high) {
      out.push(toolFinding(tool, "security/limits-high", pointer, `${fieldName(pointer)} is ${shown}, above the strict threshold of ${pointer === "/config/timeout" ? `${high / 1000} s` : `${high} ${bound.unit}`}`, "lower it unless the tool really needs it", ctx.strict ? "error" : undefined));
    }
  }
}

function fieldName(pointer: string): string {
  return pointer.slice(1).replace(/\//g, ".");
}

function risky(tool: Tool, ctx: LayerContext, out: Finding[]): void {
  const names = new Set(tool.capabilities.map((c) => c.name));
  const shell = names.has("shell.execute");
  const network = names.has("net.outbound");
  const filesystem = names.has("fs.read") || names.has("fs.write");
  if (shell && network && filesystem) {
    out.push(
      toolFinding(
        tool,
        "security/risky-combination",
        tool.pointers.capabilities ?? "/requires",
        "the tool asks for shell, network and filesystem access together, which is enough to exfiltrate anything",
        "drop one of them, or split the tool; --strict makes this an error",
        ctx.strict ? "error" : undefined,
      ),
    );
  }
}

/**
 * A secret's value in a command-line argument: any local user reads a process's arguments in
 * /proc/<pid>/cmdline, and bubblewrap's and prlimit's too, while the tool runs. In config.env it
 * reaches the tool unseen (exec keeps it out of the launch memo and redacts it from errors).
 */
function secretArgs(tool: Tool, ctx: LayerContext, out: Finding[]): void {
  const config = isRecord(tool.doc.config) ? tool.doc.config : undefined;
  if (!config) return;
  const declared = declaredSecrets(config);
  const written = chosenSpelling(tool.doc, ARGS_SPELLINGS);
  // [pointer, the field as the message names it, its value]
  const fields: [string, string, unknown][] = [["/config/command", "config.command", config.command]];
  if (written && Array.isArray(written.value)) written.value.forEach((arg, i) => fields.push([`${written.pointer}/${i}`, `${fieldName(written.pointer)}[${i}]`, arg]));
  const severity = ctx.strict ? "error" : undefined;
  for (const [pointer, field, value] of fields) {
    if (typeof value !== "string") continue;
    for (const name of new Set(referencedSecrets(value, declared))) {
      out.push(
        toolFinding(
          tool,
          "security/secret-in-args",
          pointer,
          `${field} passes \${${name}} on the command line, where any local user can read it while the tool runs`,
          `pass it in config.env instead (${name}: "\${${name}}") if the tool can read it from its environment; --strict makes this an error`,
          severity,
        ),
      );
    }
    // A parameter named as a secret is one too (config.command takes no parameter).
    if (pointer === "/config/command") continue;
    for (const name of new Set(referencedParams(value).filter(isSecretParam))) {
      const variable = envNameOf(name);
      out.push(
        toolFinding(
          tool,
          "security/secret-in-args",
          pointer,
          `${field} passes the parameter {${name}} on the command line, where any local user can read it while the tool runs`,
          `leave it to the parameters on stdin (the default), or pass it in config.env (${variable}: "{${name}}"); --strict makes this an error`,
          severity,
        ),
      );
    }
  }
}

/** Every string of the manifest that has a credential's form; the message shows only its first characters. */
function credentials(tool: Tool, published: boolean, value: unknown, path: (string | number)[], out: Finding[], depth: number): void {
  if (typeof value === "string") {
    const found = credentialIn(value);
    if (!found) return;
    const pointer = path.map((p) => `/${seg(p)}`).join("");
    const kind = `${fieldName(pointer) || "the manifest"} holds what looks like ${credentialNoun(found.kind)} (${found.shown}…)`;
    out.push(
      published
        ? toolFinding(tool, "security/secret-literal", pointer, `${kind}; ${PUBLISHED_WITH_IT}`, publishedSecretHint(tool.id), "warning")
        : toolFinding(
            tool,
            "security/secret-literal",
            pointer,
            `${kind}; the manifest is committed with the tool`,
            `remove it, revoke it if it was ever committed or pushed, and ${isPluginServer(tool) ? PLUGIN_SECRET_HINT : `pass it through the environment: ${envHint(tool, path)}`}${exampleHint(tool)}`,
          ),
    );
    return;
  }
  if (depth > 300 || typeof value !== "object" || value === null) return;
  // Only what may hold a credential is visited (mayHold): a check of a thousand tools walks every value.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!mayHold(value[i])) continue;
      path.push(i);
      credentials(tool, published, value[i], path, out, depth + 1);
      path.pop();
    }
    return;
  }
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    if (!mayHold(child)) continue;
    path.push(key);
    credentials(tool, published, child, path, out, depth + 1);
    path.pop();
  }
}

function mayHold(value: unknown): boolean {
  return typeof value === "string" ? value.length >= MIN_CREDENTIAL_LENGTH : typeof value === "object" && value !== null;
}

/** No credential above is shorter (an AWS key id and a Slack token are 15 to 20 characters); most of a manifest's strings are. */
const MIN_CREDENTIAL_LENGTH = 15;

/** HTTP headers that carry credentials, besides any whose name says token, secret or key. */
const SECRET_HEADER = /^(?:authorization|proxy-authorization|cookie)$|token|secret|api[-_]?key|auth/i;

/** A scheme before a header's credential ("Bearer abc…"): the credential is what follows. */
const AUTH_SCHEME = /^(?:bearer|basic|token|bot|apikey|digest)\s+/i;

/**
 * A literal, random-looking value under a name that says it is secret (a config.env variable as
 * exec treats one, or a credential header): gitleaks' generic-key rule, a keyword and entropy.
 * A value with a `${VAR}` reference, a URL, a path, a short or low-entropy value (a word, a
 * number, a header name) is left alone, and so is one with a known credential's form
 * (secret-literal's). A variable whose name ends in PASSWORD (PASSWD, PASSPHRASE) is the
 * exception: people choose passwords, so any literal there is one (`postgres`, `changeme`),
 * however plain; PASSWORD_MIN_LENGTH and PASSWORD_FILE name something else.
 */
function secretValues(tool: Tool, ctx: LayerContext, out: Finding[]): void {
  const config = isRecord(tool.doc.config) ? tool.doc.config : undefined;
  if (!config) return;
  const declared = declaredSecrets(config);
  const fields: [string, string, unknown][] = [];
  if (isRecord(config.env)) for (const [name, value] of Object.entries(config.env)) if (isSecretName(name, declared)) fields.push(["env", name, value]);
  if (isRecord(config.headers)) for (const [name, value] of Object.entries(config.headers)) if (SECRET_HEADER.test(name)) fields.push(["headers", name, value]);
  for (const [where, name, value] of fields) {
    // A reference, a URL or a path names where the secret is, not the secret.
    if (typeof value !== "string" || value.includes("${") || value.includes("://") || /^(?:\.{0,2}\/|~\/)/.test(value)) continue;
    const secret = where === "headers" ? value.replace(AUTH_SCHEME, "") : value;
    const password = where === "env" && PASSWORD_NAME.test(name) && value.trim() !== "";
    if ((!password && !looksRandom(secret)) || ANY_CREDENTIAL.test(value)) continue;
    const pointer = `/config/${where}/${seg(name)}`;
    const what = password ? `a literal password (${secret.length} characters, ${secret.slice(0, 2)}…)` : `a literal value that looks like a secret (${secret.length} random-looking characters, ${secret.slice(0, 2)}…)`;
    out.push(
      toolFinding(
        tool,
        "security/secret-value",
        pointer,
        `config.${where}.${name} holds ${what}; the manifest is committed with the tool`,
        `if it is a secret, pass it through the environment: ${where === "env" ? envHint(tool, ["config", "env", name]) : headerHint(name, value.slice(0, value.length - secret.length))}; --strict makes this an error`,
        ctx.strict ? "error" : undefined,
      ),
    );
  }
}

/** A variable that holds a password by its name: the name ends in one (DB_PASSWORD, SMTP_PASSWD). */
const PASSWORD_NAME = /(?:PASSWORD|PASSWD|PASSPHRASE)$/i;

/** How a header's credential reaches it instead: a reference after the header's scheme, if any. */
function headerHint(header: string, scheme: string): string {
  return `a "\${NAME}" reference in the header (${header}: "${scheme}\${NAME}"), NAME set where kiwi runs and listed in config.secrets if its name does not look secret`;
}

/**
 * Long enough, one word, and with the spread of characters a generated key has: at least 16
 * characters without spaces and a Shannon entropy of 3.5 bits per character or more (a 32-digit
 * hex key has ~3.9, base64 ~5). A word, a number or a repeated pattern stays under it; words
 * joined into a phrase may not (development_secret_key_base has 3.7), which under a secret's name
 * is a committed secret all the same.
 */
function looksRandom(text: string): boolean {
  if (text.length < 16 || /\s/.test(text)) return false;
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / text.length) * Math.log2(n / text.length);
  return bits >= 3.5;
}

/** The way past a published example: an ignore comment where the manifest's syntax has comments, else (JSON) an entry of the ignore file. */
function exampleHint(tool: Tool): string {
  const json = syntaxOf(manifestPathOf(tool.manifestFile)) === "json";
  return `; ${publishedExampleHint(json ? undefined : "# kiwi-ignore: security/secret-literal -- <why>", `tool: ${tool.id}`)}`;
}

/**
 * An Agent Plugin's server (its manifest is `<plugin>/mcp.json#<server>`) takes no `${NAME}` from
 * kiwi's environment: the spec expands nothing but ${PLUGIN_ROOT}, and kiwi escapes the rest.
 */
function isPluginServer(tool: Tool): boolean {
  return manifestPathOf(tool.manifestFile) !== tool.manifestFile;
}

const PLUGIN_SECRET_HINT = 'describe the server with a kiwi manifest instead (tool_type: mcp_server, config.env NAME: "${NAME}", NAME set where kiwi runs): an Agent Plugin\'s mcp.json expands nothing but ${PLUGIN_ROOT}';

/**
 * How the value reaches the tool instead: under its own name when it is a config.env entry, listed
 * in config.secrets unless exec already treats it as secret (its name, or the list).
 */
function envHint(tool: Tool, path: readonly (string | number)[]): string {
  const name = path.length === 3 && path[0] === "config" && path[1] === "env" ? String(path[2]) : undefined;
  const secret = (n: string) => isSecretName(n, declaredSecrets(isRecord(tool.doc.config) ? tool.doc.config : {}));
  return name !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
    ? `write ${name}: "\${${name}}" and set ${name} where kiwi runs${secret(name) ? "" : ` (and list ${name} in config.secrets)`}`
    : 'a "${NAME}" reference in config.env, NAME set where kiwi runs (and listed in config.secrets if the name does not look secret)';
}

/** Where a tool's fixed arguments are written (config.args, or kiwi_mcp's config.base_args). */
const ARGS_SPELLINGS = ALIAS_GROUPS.find((g) => g.field === "args")!;

/** Entry points and config paths that name tool files stay inside the tool directory. */
function paths(tool: Tool, ctx: LayerContext, out: Finding[]): void {
  const candidates: [string, unknown][] = [];
  if (tool.dialect === "magray") candidates.push(["/entry_point", tool.doc.entry_point]);
  else {
    const c = isRecord(tool.doc.config) ? tool.doc.config : {};
    candidates.push(["/config/entrypoint", c.entrypoint], ["/config/cwd", c.cwd]);
    if (Array.isArray(c.files)) c.files.forEach((f, i) => candidates.push([`/config/files/${i}`, f]));
  }
  for (const [pointer, value] of candidates) {
    if (typeof value !== "string") continue;
    const reason = toolPathProblem(value, "written");
    if (reason) {
      out.push(toolFinding(tool, "security/path", pointer, `${fieldName(pointer)} "${value}" ${reason}; paths must stay inside the tool directory`, "use a path relative to the tool folder, without '..'"));
    } else if (tool.dialect === "magray" && value.includes("..")) {
      // magray's validate_security refuses ".." anywhere in an entry point (`bin..x` too), not
      // only as a path segment: its verdict, in its words.
      out.push(toolFinding(tool, "security/path", pointer, `Security validation error: Entry point contains potentially dangerous path components ("${value}" holds '..')`, "rename the file so its path holds no '..': magray refuses it anywhere in an entry point"));
    } else if (ctx.escapedPaths.has(toolPath(tool, normalizeRel(value)))) {
      out.push(toolFinding(tool, "security/path", pointer, `${fieldName(pointer)} "${value}" resolves outside the tool directory through a symbolic link`, "copy the file into the tool instead of linking to it"));
    }
  }
}
