// A small OCI distribution client over fetch: the calls kiwi needs (manifests, blobs, uploads,
// referrers), the auth flows registries use (anonymous, Basic, Bearer token), HTTPS by default
// with the system CAs or SSL_CERT_FILE, plain HTTP only for loopback or --insecure-registry.
// The registry is untrusted: every body is capped in size and checked against its digest here,
// before a caller sees a byte. Hand-written: see the commit that added it for the npm clients evaluated.
import { KiwiError } from "../errors.ts";
import { readBodyCapped } from "../exec/body-io.ts";
import { formatDigest, sha256Hex } from "../integrity/digest.ts";
import { isRecord } from "../integrity/value.ts";
import { type Credentials, findCredentials } from "./auth-io.ts";
import { MAX_MANIFEST_BYTES, MEDIA } from "./artifact-layout.ts";
import { type OciReference, apiHost, isLoopbackHost } from "./reference.ts";
import { RETRY_DELAYS_MS, type Route, caBundle, failureDetail, fetchFollowing, isReset, isTimeout, registryUrl, unreachable } from "./transport-io.ts";

export interface ClientOptions {
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  /** Registries (host[:port]) where plain HTTP is allowed. */
  insecure?: readonly string[];
}

const MANIFEST_ACCEPT = [MEDIA.manifest, MEDIA.index].join(", ");

/** One registry repository, with its auth state. */
export class RegistryClient {
  readonly registry: string;
  readonly repository: string;
  private base: string | undefined;
  private authorization: string | undefined;
  private credentials: Credentials | undefined | null = null;
  /** Where this client's requests go and how (transport-io.ts). */
  private readonly route: Route;
  private readonly plainAllowed: boolean;

  constructor(
    ref: Pick<OciReference, "registry" | "repository">,
    private readonly options: ClientOptions,
  ) {
    this.registry = ref.registry;
    this.repository = ref.repository;
    this.plainAllowed = isLoopbackHost(ref.registry) || (options.insecure ?? []).includes(ref.registry);
    this.route = { registry: ref.registry, env: options.env, tls: caBundle(options.env.SSL_CERT_FILE) };
  }

  /** Fetches a manifest by tag or digest; the digest is of the exact bytes served. */
  async getManifest(reference: string): Promise<{ bytes: Uint8Array; digest: string; mediaType: string }> {
    const res = await this.request("GET", `/manifests/${reference}`, { accept: MANIFEST_ACCEPT, scope: "pull" });
    if (res.status === 404) {
      await res.body?.cancel();
      if (reference.startsWith("sha256:")) {
        // A locked digest the registry no longer has: the tag cannot bring those bytes back.
        throw new KiwiError("E_REGISTRY", `${this.name()} has no manifest for the digest ${reference}`, {
          hint: "the artifact was deleted from the registry (or pushed to another one): publish that version again, or move to one it has with kiwi update or kiwi add",
        });
      }
      throw new KiwiError("E_REGISTRY", `${this.name()} has no manifest for the tag "${reference}"`, {
        hint: `check the tag and the repository: "${reference}" was never pushed to ${this.name()}, or was deleted (a tool added from it stays installable by its locked digest)`,
      });
    }
    await this.expectOk(res, `GET manifest ${reference}`);
    const bytes = await this.readBody(res, MAX_MANIFEST_BYTES, `the manifest ${this.name()}:${reference}`);
    const digest = formatDigest(sha256Hex(bytes));
    if (reference.startsWith("sha256:") && digest !== reference) {
      throw new KiwiError("E_ARTIFACT_INVALID", `${this.name()} served a manifest for ${reference} whose bytes hash to ${digest}`, { hint: "the registry or something between kiwi and it altered the manifest; nothing was used" });
    }
    const header = res.headers.get("docker-content-digest");
    if (header && header.startsWith("sha256:") && header !== digest) {
      throw new KiwiError("E_ARTIFACT_INVALID", `${this.name()}:${reference}: the Docker-Content-Digest header says ${header}, the bytes hash to ${digest}`, { hint: "the registry or a proxy altered the manifest; nothing was used" });
    }
    return { bytes, digest, mediaType: res.headers.get("content-type") ?? "" };
  }

  /** The digest a tag points to now (HEAD, falling back to GET when the header is missing). */
  async resolveTag(tag: string): Promise<string> {
    return (await this.getManifest(tag)).digest;
  }

  /** Fetches a blob of known digest and size; any other bytes are an error, never returned. */
  async getBlob(digest: string, size: number): Promise<Uint8Array> {
    let bytes: Uint8Array;
    for (let attempt = 0; ; attempt++) {
      const res = await this.request("GET", `/blobs/${digest}`, { scope: "pull" });
      if (res.status === 404) {
        await res.body?.cancel();
        throw new KiwiError("E_REGISTRY", `${this.name()} has no blob ${digest}`, { hint: "the artifact was deleted or only partly pushed; publish it again" });
      }
      await this.expectOk(res, `GET blob ${digest}`);
      try {
        bytes = await this.readBody(res, size, `blob ${digest}`);
        break;
      } catch (error) {
        // A download cut midway is fetched again, as a connection cut before the answer is.
        if (attempt >= RETRY_DELAYS_MS.length || !(error instanceof KiwiError) || error.details?.cut !== true) throw error;
        await Bun.sleep(RETRY_DELAYS_MS[attempt]!);
      }
    }
    const actual = formatDigest(sha256Hex(bytes));
    if (bytes.length !== size || actual !== digest) {
      throw new KiwiError("E_ARTIFACT_INVALID", `${this.name()} served ${bytes.length} bytes hashing to ${actual} for the blob ${digest} (${size} bytes)`, {
        hint: "the registry or something between kiwi and it altered the blob; nothing was used",
      });
    }
    return bytes;
  }

  /** True when the repository already holds the blob. */
  async hasBlob(digest: string): Promise<boolean> {
    const res = await this.request("HEAD", `/blobs/${digest}`, { scope: "pull,push" });
    await res.body?.cancel();
    if (res.status === 404) return false;
    await this.expectOk(res, `HEAD blob ${digest}`);
    return true;
  }

  /** Uploads a blob (monolithic POST then PUT), skipping it when present. */
  async pushBlob(bytes: Uint8Array, digest: string = formatDigest(sha256Hex(bytes))): Promise<"pushed" | "present"> {
    if (await this.hasBlob(digest)) return "present";
    const start = await this.request("POST", "/blobs/uploads/", { scope: "pull,push" });
    await start.body?.cancel();
    if (start.status !== 202) await this.expectOk(start, "POST blob upload", 202);
    const location = start.headers.get("location");
    if (!location) throw new KiwiError("E_REGISTRY", `${this.name()} started an upload without a Location header`, { hint: "the registry does not follow the distribution spec" });
    const url = registryUrl(this.registry, location, this.base, "the upload Location");
    url.searchParams.set("digest", digest);
    const put = await this.request("PUT", url.toString(), { scope: "pull,push", body: bytes, contentType: "application/octet-stream" });
    await put.body?.cancel();
    if (put.status !== 201) await this.expectOk(put, `PUT blob ${digest}`, 201);
    return "pushed";
  }

  /** Puts a manifest under a tag or its digest. */
  async putManifest(reference: string, bytes: Uint8Array, mediaType: string): Promise<void> {
    const res = await this.request("PUT", `/manifests/${reference}`, { scope: "pull,push", body: bytes, contentType: mediaType });
    await res.body?.cancel();
    if (res.status !== 201) await this.expectOk(res, `PUT manifest ${reference}`, 201);
  }

  /**
   * The referrers of a manifest: the referrers API when the registry has it, else the tag
   * fallback `sha256-<hex>` (OCI distribution spec 1.1, "Referrers tag schema").
   */
  async getReferrers(digest: string): Promise<{ descriptors: Array<Record<string, unknown>>; api: boolean }> {
    const res = await this.request("GET", `/referrers/${digest}`, { accept: MEDIA.index, scope: "pull" });
    if (res.status === 200 && (res.headers.get("content-type") ?? "").startsWith(MEDIA.index)) {
      const bytes = await this.readBody(res, MAX_MANIFEST_BYTES, `the referrers of ${digest}`);
      return { descriptors: manifestsOf(bytes), api: true };
    }
    await res.body?.cancel();
    const fallback = await this.request("GET", `/manifests/${referrersTag(digest)}`, { accept: MEDIA.index, scope: "pull" });
    if (fallback.status === 404) {
      await fallback.body?.cancel();
      return { descriptors: [], api: false };
    }
    await this.expectOk(fallback, `GET referrers tag of ${digest}`);
    return { descriptors: manifestsOf(await this.readBody(fallback, MAX_MANIFEST_BYTES, `the referrers tag of ${digest}`)), api: false };
  }

  /** `registry/repository`, for messages. */
  name(): string {
    return `${this.registry}/${this.repository}`;
  }

  /** A capped body (readCapped); a connection that is cut or stalls midway is E_REGISTRY, never a crash. */
  private async readBody(res: Response, max: number, subject: string): Promise<Uint8Array> {
    try {
      return await readCapped(res, max, subject);
    } catch (error) {
      if (error instanceof KiwiError) throw error;
      throw new KiwiError("E_REGISTRY", `${this.registry} broke off ${subject} midway: ${failureDetail(error)}`, {
        hint: isTimeout(error) ? "the registry or the network stalled; try again later" : "the connection was cut; try again later",
        details: { cut: isReset(error) },
      });
    }
  }

  private async expectOk(res: Response, what: string, want = 200): Promise<void> {
    if (res.status === want || (want === 200 && res.status >= 200 && res.status < 300)) return;
    const body = (await res.text().catch(() => "")).slice(0, 300).trim();
    if (res.status === 401 || res.status === 403) {
      throw new KiwiError("E_REGISTRY_AUTH", `${this.name()} refused ${what}: HTTP ${res.status}${body ? ` ${body}` : ""}`, {
        hint: res.status === 401 ? `log in with "docker login ${this.registry}" (kiwi reads ~/.docker/config.json and credential helpers)` : "the credentials are valid but lack permission for this repository",
      });
    }
    throw new KiwiError("E_REGISTRY", `${this.name()} answered HTTP ${res.status} to ${what}${body ? `: ${body}` : ""}`, { hint: "check the registry's logs; try again later" });
  }

  /** Sends a request under /v2/<repository> (or to an absolute URL), authenticating on 401. */
  private async request(method: string, path: string, init: { accept?: string; scope: string; body?: Uint8Array; contentType?: string }): Promise<Response> {
    const base = await this.baseUrl();
    const url = path.startsWith("http://") || path.startsWith("https://") ? path : `${base}/v2/${this.repository}${path}`;
    let sent: string | undefined;
    const send = () => {
      const headers: Record<string, string> = {};
      if (init.accept) headers.accept = init.accept;
      if (init.contentType) headers["content-type"] = init.contentType;
      sent = this.authorization;
      if (sent) headers.authorization = sent;
      return fetchFollowing(this.route, method, url, headers, init.body);
    };
    let res = await send();
    for (let attempt = 0; res.status === 401 && attempt < 3; attempt++) {
      // Concurrent transfers share one login: if another request renewed it meanwhile, just retry;
      // a second 401 with the same credentials makes authenticate() name the refusal.
      if (this.authorization !== sent) await res.body?.cancel();
      else if (!(await this.authenticate(res, init.scope, sent))) break;
      res = await send();
    }
    return res;
  }

  /** Answers a 401 challenge to a request sent with `sent`; false when there is nothing more to try. */
  private async authenticate(res: Response, scope: string, sent: string | undefined): Promise<boolean> {
    const challenge = res.headers.get("www-authenticate") ?? "";
    await res.body?.cancel();
    if (this.credentials === null) this.credentials = findCredentials(this.registry, this.options.env, this.options.home);
    const creds = this.credentials;
    const basic = creds && !creds.identityToken ? `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString("base64")}` : undefined;
    if (/^basic\b/i.test(challenge)) {
      if (!basic || sent === basic) {
        throw new KiwiError("E_REGISTRY_AUTH", `${this.registry} requires a login${basic ? " and refused the credentials from the docker config" : ""}`, {
          hint: `run "docker login ${this.registry}" (kiwi reads ~/.docker/config.json and credential helpers)`,
        });
      }
      this.authorization = basic;
      return true;
    }
    if (/^bearer\b/i.test(challenge)) {
      const params = parseChallenge(challenge.slice(6));
      if (!params.realm) throw new KiwiError("E_REGISTRY_AUTH", `${this.registry} sent a Bearer challenge without a realm`, { hint: "the registry's auth set-up is broken" });
      const tokenUrl = registryUrl(this.registry, params.realm, undefined, "the Bearer realm");
      // Credentials go to the realm: plain HTTP only where it would be allowed for a registry.
      const realmPlainOk = isLoopbackHost(tokenUrl.host) || (this.options.insecure ?? []).includes(tokenUrl.host);
      if (tokenUrl.protocol !== "https:" && !(tokenUrl.protocol === "http:" && realmPlainOk)) {
        throw new KiwiError("E_REGISTRY_AUTH", `${this.registry} sends kiwi to a plain-HTTP token service ${params.realm}`, { hint: "use --insecure-registry only for a registry you control" });
      }
      const query = { ...(params.service ? { service: params.service } : {}), scope: params.scope ?? `repository:${this.repository}:${scope}` };
      let tokenRes: Response;
      if (creds?.identityToken) {
        // An identity token is an OAuth2 refresh token: POSTed to the realm, as docker does.
        const form = new URLSearchParams({ ...query, client_id: "kiwi", grant_type: "refresh_token", refresh_token: creds.identityToken });
        tokenRes = await fetchFollowing(this.route, "POST", tokenUrl.toString(), { "content-type": "application/x-www-form-urlencoded" }, new TextEncoder().encode(form.toString()));
      } else {
        for (const [k, v] of Object.entries(query)) tokenUrl.searchParams.set(k, v);
        tokenRes = await fetchFollowing(this.route, "GET", tokenUrl.toString(), basic ? { authorization: basic } : {});
      }
      if (tokenRes.status === 401 || tokenRes.status === 403) {
        await tokenRes.body?.cancel();
        const offered = creds?.identityToken ? "the identity token from the docker config" : basic ? "the credentials from the docker config" : "an anonymous token";
        throw new KiwiError("E_REGISTRY_AUTH", `the token service of ${this.registry} refused ${offered} (HTTP ${tokenRes.status})`, {
          hint: `run "docker login ${this.registry}" (kiwi reads ~/.docker/config.json and credential helpers)`,
        });
      }
      if (tokenRes.status !== 200) throw new KiwiError("E_REGISTRY_AUTH", `the token service of ${this.registry} answered HTTP ${tokenRes.status}`, { hint: "try again later" });
      const bytes = await this.readBody(tokenRes, 1024 * 1024, "the token response");
      let body: unknown;
      try {
        body = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        throw new KiwiError("E_REGISTRY_AUTH", `the token service of ${this.registry} did not answer with JSON`, { hint: "the registry's auth set-up is broken" });
      }
      const token = isRecord(body) ? (body.token ?? body.access_token) : undefined;
      if (typeof token !== "string" || token === "") throw new KiwiError("E_REGISTRY_AUTH", `the token service of ${this.registry} gave no token`, { hint: "the registry's auth set-up is broken" });
      if (sent === `Bearer ${token}`) return false;
      this.authorization = `Bearer ${token}`;
      return true;
    }
    return false;
  }

  /** https://host, or http://host for a loopback or --insecure-registry host that does not speak TLS. */
  private async baseUrl(): Promise<string> {
    if (this.base) return this.base;
    const https = `https://${apiHost(this.registry)}`;
    if (!this.plainAllowed) return (this.base = https);
    try {
      const res = await fetch(`${https}/v2/`, { method: "GET", redirect: "manual", tls: this.route.tls } as RequestInit);
      await res.body?.cancel();
      return (this.base = https);
    } catch (error) {
      const code = (error as { code?: string }).code ?? "";
      if (code === "ConnectionRefused" || code === "ECONNREFUSED") throw unreachable(this.registry, new URL(https), error, this.options.env);
      if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code)) throw unreachable(this.registry, new URL(https), error, this.options.env);
      return (this.base = `http://${apiHost(this.registry)}`);
    }
  }
}

/** The tag the referrers fallback keeps an index under: `sha256-<hex>`. */
export function referrersTag(digest: string): string {
  return digest.replace(":", "-");
}

function manifestsOf(bytes: Uint8Array): Array<Record<string, unknown>> {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes));
    return isRecord(value) && Array.isArray(value.manifests) ? value.manifests.filter(isRecord) : [];
  } catch {
    return [];
  }
}

function parseChallenge(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/([a-zA-Z_]+)="([^"]*)"/g)) out[m[1]!.toLowerCase()] = m[2]!;
  return out;
}

/** Reads a body, failing as soon as it passes `max` bytes (a declared Content-Length is checked first). */
export function readCapped(res: Response, max: number, subject: string): Promise<Uint8Array> {
  return readBodyCapped(res, max, () => new KiwiError("E_ARTIFACT_INVALID", `${subject} is larger than the ${max} bytes allowed`, { hint: "the registry served more than the artifact declares; nothing was used" }));
}
