// The HTTP request of an http_client plan: method, URL with every parameter encoded as one URL
// component, query, headers, JSON body, timeout, retries and caps. Pure.
import { KiwiError } from "../errors.ts";
import { parseJsonPath } from "./jsonpath.ts";
import { type CanonicalValue, isMapping } from "../integrity/value.ts";
import { renderLosslessJson } from "../integrity/canonical.ts";
import type { ParamViolation } from "./params.ts";
import type { PlanLimits } from "../manifest/run-limits.ts";
import { HEADER_NAME, URL_AUTHORITY, referencedParams, wholeParam } from "../schema/placeholders.ts";
import { type TemplateScope, expandString, expandValue, renderConfigText, stringifyParam } from "./template.ts";

export interface HttpRequestPlan {
  method: string;
  url: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** JSON text, when the request has a body. */
  body?: string;
  /** Per attempt. */
  timeoutMs: number;
  /** Extra attempts after the first; always 0 for non-idempotent methods. */
  retries: number;
  maxResponseBytes: number;
  responseTransform?: string;
  /** Hosts a redirect may lead to besides the request's own host. */
  allowRedirectHosts: string[];
  maxRedirects: number;
}

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] as const;
/** RFC 9110 §9.2.2: only these may be repeated without changing the outcome. */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);
/** Retries for idempotent methods when the tool declares none. */
export const DEFAULT_RETRIES = 2;
const MAX_RETRIES = 10;
const MAX_REDIRECTS = 5;

export interface HttpPlanInput {
  toolId: string;
  /** The merged config as plain values: what decides (method, retries, redirects). */
  config: Record<string, unknown>;
  /** The same config as written (lossless): what query, headers and body are rendered from. Default: config. */
  exact?: Record<string, unknown>;
  scope: TemplateScope;
  limits: PlanLimits;
  userAgent: string;
  violations: ParamViolation[];
}

/** Builds the request; parameter misuse (dot segments, line breaks in headers) lands in `violations`. */
export function buildHttpRequest(input: HttpPlanInput): HttpRequestPlan {
  const { toolId, config, scope, violations } = input;
  const exact = input.exact ?? config;
  const method = typeof config.method === "string" ? config.method.toUpperCase() : "GET";
  if (!(HTTP_METHODS as readonly string[]).includes(method)) {
    throw new KiwiError("E_EXEC_FAILED", `${toolId}: config.method ${JSON.stringify(config.method)} is not one of ${HTTP_METHODS.join(", ")}`, { hint: "fix the method in the manifest" });
  }
  const template = typeof config.url_template === "string" ? config.url_template : typeof config.url === "string" ? config.url : undefined;
  if (template === undefined) throw new KiwiError("E_EXEC_FAILED", `${toolId} has neither config.url nor config.url_template`, { hint: "declare the URL to call" });
  const url = buildUrl(toolId, template, scope, violations);
  if (url && isMapping(exact.query as CanonicalValue)) {
    for (const [key, raw] of Object.entries(exact.query as Record<string, unknown>)) {
      const text = renderConfigText(raw);
      const whole = wholeParam(text);
      const value = whole !== undefined ? scope.params[whole] : undefined;
      if (whole !== undefined && Array.isArray(value)) {
        // An array parameter as a whole query value repeats the key: tag=a&tag=b.
        for (const item of value) url.searchParams.append(key, stringifyParam(item));
        continue;
      }
      const e = expandString(text, scope);
      if (!e.absent) url.searchParams.append(key, e.value);
    }
  }
  const headers: Record<string, string> = {};
  if (isMapping(exact.headers as CanonicalValue)) {
    for (const [name, raw] of Object.entries(exact.headers as Record<string, unknown>)) {
      if (!HEADER_NAME.test(name)) {
        throw new KiwiError("E_EXEC_FAILED", `${toolId}: header name ${JSON.stringify(name)} is not a valid HTTP token`, { hint: "fix the header name in the manifest" });
      }
      const e = expandString(renderConfigText(raw), scope);
      if (e.absent) continue;
      if (/[\r\n\0]/.test(e.value)) {
        if (e.params.length === 0) throw new KiwiError("E_EXEC_FAILED", `${toolId}: header ${name} contains a line break or NUL (from the environment)`, { hint: "fix the environment variable the header reads" });
        for (const p of e.params) {
          if (/[\r\n\0]/.test(stringifyParam(scope.params[p]))) violations.push({ pointer: `/${p}`, rule: "header", message: `must not contain line breaks or NUL when sent in header ${name}`, value: scope.params[p] });
        }
        continue;
      }
      headers[name.toLowerCase()] = e.value;
    }
  }
  headers["user-agent"] ??= input.userAgent;
  headers.accept ??= "application/json, */*;q=0.5";
  let body: string | undefined;
  // The body is rendered from the config as written: 12345678901234567890 and 1.0 arrive as written.
  if (exact.body !== undefined && method !== "GET" && method !== "HEAD") body = renderLosslessJson(expandValue(exact.body, scope).value);
  else if (exact.body === undefined && (method === "POST" || method === "PUT" || method === "PATCH")) body = renderLosslessJson(scope.params);
  if (body !== undefined) headers["content-type"] ??= "application/json";
  const transform = typeof config.response_transform === "string" ? config.response_transform : undefined;
  if (transform !== undefined) parseJsonPath(transform);
  const declaredRetries = typeof config.retries === "number" && Number.isInteger(config.retries) ? Math.min(Math.max(config.retries, 0), MAX_RETRIES) : DEFAULT_RETRIES;
  return {
    method,
    url: url ? url.href : "",
    headers,
    ...(body !== undefined ? { body } : {}),
    timeoutMs: input.limits.timeoutMs,
    retries: IDEMPOTENT_METHODS.has(method) ? declaredRetries : 0,
    maxResponseBytes: input.limits.outputBytes,
    ...(transform !== undefined ? { responseTransform: transform } : {}),
    allowRedirectHosts: Array.isArray(config.allow_redirect_hosts) ? config.allow_redirect_hosts.map((h) => String(h).toLowerCase()) : [],
    maxRedirects: MAX_REDIRECTS,
  };
}

const LEADING_ENV = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}/;
const DOT_SEGMENT = /^(\.|%2e){1,2}$/i;

/**
 * Expands a URL template. The scheme and host come from the manifest or the environment only;
 * each parameter becomes one percent-encoded component (so `/`, `?`, `#`, CR and LF cannot change
 * the URL's structure), and a path segment a parameter turns into `.` or `..` is refused.
 */
function buildUrl(toolId: string, template: string, scope: TemplateScope, violations: ParamViolation[]): URL | undefined {
  const authority = URL_AUTHORITY.exec(template)?.[0] ?? LEADING_ENV.exec(template)?.[0];
  if (authority === undefined) {
    throw new KiwiError("E_EXEC_FAILED", `${toolId}: the URL ${JSON.stringify(template)} is not absolute`, { hint: "write the URL with its scheme and host, e.g. https://api.example.com/v1/{city}" });
  }
  if (referencedParams(authority).length > 0) {
    throw new KiwiError("E_EXEC_FAILED", `${toolId}: the URL ${JSON.stringify(template)} puts a parameter in its scheme or host`, {
      hint: "parameters may only fill the path, query and fragment; put a configurable host in an environment variable (${API_HOST})",
    });
  }
  const base = expandString(authority, scope);
  const rest = template.slice(authority.length);
  const q = rest.search(/[?#]/);
  const pathTemplate = q === -1 ? rest : rest.slice(0, q);
  const tail = q === -1 ? "" : rest.slice(q);
  const hash = tail.indexOf("#");
  const queryTemplate = hash === -1 ? tail : tail.slice(0, hash);
  const fragmentTemplate = hash === -1 ? "" : tail.slice(hash);
  let ok = true;
  const encode = (value: string, param: string) => {
    try {
      return encodeURIComponent(value);
    } catch {
      violations.push({ pointer: `/${param}`, rule: "url", message: "must be valid Unicode text to be placed in a URL", value: scope.params[param] });
      ok = false;
      return "";
    }
  };
  const segments = pathTemplate.split("/").map((seg) => {
    const e = expandString(seg, scope, encode);
    if (e.absent) {
      violations.push({ pointer: `/${e.param}`, rule: "required", message: "is required by the URL path" });
      ok = false;
      return "";
    }
    if (e.params.length > 0 && DOT_SEGMENT.test(e.value)) {
      for (const p of e.params) violations.push({ pointer: `/${p}`, rule: "url", message: 'must not make a URL path segment "." or ".."', value: scope.params[p] });
      ok = false;
    }
    return e.value;
  });
  const query = queryTemplate === "" ? "" : queryTemplate.slice(1).split("&").map((piece) => expandString(piece, scope, encode)).filter((e) => !e.absent).map((e) => (e as { value: string }).value).filter((v) => v !== "").join("&");
  let fragment = "";
  if (fragmentTemplate !== "") {
    const e = expandString(fragmentTemplate.slice(1), scope, encode);
    if (!e.absent) fragment = `#${e.value}`;
  }
  if (!ok || base.absent) return undefined;
  const text = `${base.value}${segments.join("/")}${query ? `?${query}` : ""}${fragment}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new KiwiError("E_EXEC_FAILED", `${toolId}: the URL ${JSON.stringify(scope.redact ? text : template)} is not a valid URL after expansion`, { hint: "check the URL template and the environment variables it reads" });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new KiwiError("E_EXEC_FAILED", `${toolId}: the URL scheme ${url.protocol} is not http or https`, { hint: "http_client only speaks http and https" });
  }
  return url;
}
