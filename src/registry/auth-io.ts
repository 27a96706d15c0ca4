// Registry credentials as docker and podman users already have them: ~/.docker/config.json
// ($DOCKER_CONFIG) `auths` entries, `credHelpers` / `credsStore` helpers (docker-credential-*).
// Reads files and runs the helper; never writes anything.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { KiwiError } from "../errors.ts";
import { isRecord } from "../integrity/value.ts";
import { credentialServer } from "./reference.ts";

export interface Credentials {
  username: string;
  password: string;
  /**
   * An OAuth2 refresh token docker stored instead of a password (`identitytoken`, or a helper's
   * `<token>` user): traded at the token service for an access token, never sent as Basic.
   */
  identityToken?: string;
}

/** Where docker's config lives for this environment. */
export function dockerConfigPath(env: Readonly<Record<string, string | undefined>>, home: string): string {
  return join(env.DOCKER_CONFIG || join(home, ".docker"), "config.json");
}

/** The credentials docker would use for `registry`, or undefined (anonymous). */
export function findCredentials(registry: string, env: Readonly<Record<string, string | undefined>>, home: string): Credentials | undefined {
  const path = dockerConfigPath(env, home);
  // The name docker keeps it under (Docker Hub's is https://index.docker.io/v1/).
  const server = credentialServer(registry);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    throw new KiwiError("E_REGISTRY_AUTH", `${path} is not valid JSON`, { hint: "fix the file, or point DOCKER_CONFIG at another folder" });
  }
  if (!isRecord(config)) return undefined;
  // Docker's order (GetCredentialsStore): the host's credHelpers entry, else credsStore, else the
  // file's auths. A helper, once named, answers alone: docker does not fall back to auths when it
  // has no credentials for the host (an auths entry beside a helper is docker login's placeholder).
  const helpers = isRecord(config.credHelpers) ? config.credHelpers : {};
  const named = Object.hasOwn(helpers, server) ? helpers[server] : undefined;
  const helper = typeof named === "string" && named !== "" ? named : typeof config.credsStore === "string" && config.credsStore !== "" ? config.credsStore : undefined;
  if (helper) return runHelper(helper, server, env);
  const auths = isRecord(config.auths) ? config.auths : {};
  // Docker's file store: the exact key, else any key whose host is this one, as `docker login`
  // wrote them in the past and some tools still do ("https://registry.example.com/v1/").
  const key = Object.hasOwn(auths, server) ? server : Object.keys(auths).find((k) => hostOfAuthKey(k) === hostOfAuthKey(server));
  const entry = key === undefined ? undefined : auths[key];
  if (isRecord(entry)) {
    if (typeof entry.identitytoken === "string" && entry.identitytoken !== "") return { username: "", password: "", identityToken: entry.identitytoken };
    if (typeof entry.auth === "string" && entry.auth !== "") {
      const decoded = Buffer.from(entry.auth, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon === -1) throw new KiwiError("E_REGISTRY_AUTH", `${path}: the auth entry for ${registry} is not base64 of user:password`, { hint: `run "docker login ${registry}" again` });
      return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    }
    if (typeof entry.username === "string" && typeof entry.password === "string") return { username: entry.username, password: entry.password };
  }
  return undefined;
}

/** The registry host an `auths` key names: docker's ConvertToHostname (scheme and path dropped). */
function hostOfAuthKey(key: string): string {
  const rest = key.startsWith("http://") ? key.slice("http://".length) : key.startsWith("https://") ? key.slice("https://".length) : key;
  return rest.split("/", 1)[0]!.toLowerCase();
}

/** Runs `docker-credential-<helper> get` the way docker does (server URL on stdin, JSON out). */
function runHelper(helper: string, registry: string, env: Readonly<Record<string, string | undefined>>): Credentials | undefined {
  const program = `docker-credential-${helper}`;
  // Found on the PATH of the environment kiwi was given, as every other program it starts.
  const found = Bun.which(program, { PATH: env.PATH ?? "" });
  let result;
  try {
    if (!found) throw new Error("not found");
    result = Bun.spawnSync([found, "get"], { stdin: new TextEncoder().encode(registry), stdout: "pipe", stderr: "pipe" });
  } catch {
    throw new KiwiError("E_REGISTRY_AUTH", `the credential helper ${program} named for ${registry} is not installed`, { hint: `install ${program}, or remove it from the docker config` });
  }
  const out = result.stdout.toString();
  // Helpers answer "credentials not found in native keychain" for a host they do not know.
  if (result.exitCode !== 0) {
    if (/not found/i.test(out + result.stderr.toString())) return undefined;
    throw new KiwiError("E_REGISTRY_AUTH", `the credential helper ${program} failed for ${registry} (exit ${result.exitCode}): ${(out || result.stderr.toString()).trim().slice(0, 200)}`, {
      hint: `run "${program} get" yourself to see why`,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(out);
  } catch {
    throw new KiwiError("E_REGISTRY_AUTH", `the credential helper ${program} printed something that is not JSON`, { hint: `run "${program} get" yourself to see why` });
  }
  if (!isRecord(value) || typeof value.Username !== "string" || typeof value.Secret !== "string") return undefined;
  // Docker's helpers keep an identity token under the user "<token>".
  if (value.Username === "<token>") return { username: "", password: "", identityToken: value.Secret };
  return { username: value.Username, password: value.Secret };
}
