// OCI references: `registry/repository[:tag][@sha256:digest]` and the lockfile's
// `oci://registry/repository@sha256:…` source. Pure: text in, parts out.
import { KiwiError } from "../errors.ts";

/** A parsed reference. `tag` and `digest` may both be present (`repo:tag@sha256:…`: the digest wins). */
export interface OciReference {
  /** `host[:port]`, exactly as written (lowercased). */
  registry: string;
  /** Path inside the registry, e.g. `team/tools/echo`. */
  repository: string;
  tag?: string;
  /** `sha256:<64 hex>`. */
  digest?: string;
}

const REPO = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:]+\])(?::[0-9]{1,5})?$/;

/** Parses `host/repo:tag`, `host/repo@sha256:…` or `oci://host/repo@sha256:…`. Throws E_USAGE. */
export function parseReference(text: string): OciReference {
  const bad = (why: string) =>
    new KiwiError("E_USAGE", `"${text}" is not an OCI reference: ${why}`, {
      hint: "write registry/repository:tag or registry/repository@sha256:<digest>, e.g. ghcr.io/acme/tools/echo:1.0.0",
    });
  let rest = text.startsWith("oci://") ? text.slice("oci://".length) : text;
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw bad(`the digest "${digest}" is not sha256:<64 lowercase hex digits>`);
  }
  const slash = rest.indexOf("/");
  if (slash === -1) throw bad("it names no registry host (kiwi has no default registry)");
  const registry = rest.slice(0, slash).toLowerCase();
  if (!HOST.test(registry)) throw bad(`"${registry}" is not a registry host`);
  let path = rest.slice(slash + 1);
  let tag: string | undefined;
  const colon = path.lastIndexOf(":");
  if (colon !== -1) {
    tag = path.slice(colon + 1);
    path = path.slice(0, colon);
    if (!TAG.test(tag)) throw bad(`the tag "${tag}" is not a valid tag`);
  }
  if (!REPO.test(path)) throw bad(`the repository "${path}" is not lowercase path components`);
  if (!tag && !digest) throw bad("it has neither a tag nor a digest");
  // Docker Hub as every OCI client names it: index.docker.io is docker.io, and a one-component
  // repository there is an official image's, below library/.
  const hub = registry === DOCKER_HUB || registry === "index.docker.io";
  return { registry: hub ? DOCKER_HUB : registry, repository: hub && !path.includes("/") ? `library/${path}` : path, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** Docker Hub's name in references. Its API is served by registry-1.docker.io (apiHost). */
export const DOCKER_HUB = "docker.io";

/** The host kiwi sends a registry's API requests to: Docker Hub's is registry-1.docker.io. */
export function apiHost(registry: string): string {
  return registry === DOCKER_HUB ? "registry-1.docker.io" : registry;
}

/**
 * The server name docker keeps a registry's credentials under (auths key, credHelpers key, the
 * helper's input): Docker Hub's is its v1 index URL, https://index.docker.io/v1/, as docker login writes it.
 */
export function credentialServer(registry: string): string {
  return registry === DOCKER_HUB ? "https://index.docker.io/v1/" : registry;
}

/** `registry/repository:tag` or `…@digest`, for messages. */
export function formatReference(ref: OciReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ""}${ref.digest ? `@${ref.digest}` : ""}`;
}

/** The lockfile source of a pulled artifact: always by digest, never by tag. */
export function ociSource(ref: OciReference, digest: string): string {
  return `oci://${ref.registry}/${ref.repository}@${digest}`;
}

/** The manifest digest a lockfile source (ociSource) names. */
export function sourceDigest(source: string): string {
  return source.slice(source.lastIndexOf("@") + 1);
}

/** True for hosts where plain HTTP is allowed without --insecure-registry. */
export function isLoopbackHost(registry: string): boolean {
  const host = registry.startsWith("[") ? registry.slice(1, registry.indexOf("]")) : registry.replace(/:[0-9]+$/, "");
  return host === "localhost" || host === "::1" || /^127\.[0-9]+\.[0-9]+\.[0-9]+$/.test(host);
}
