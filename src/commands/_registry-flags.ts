// The flag every command that talks to an OCI registry shares.
import type { ArgsDef } from "citty";

/** `--insecure-registry host[:port][,…]`: plain HTTP (and no TLS) allowed for these registries. */
export const registryFlags = {
  insecureRegistry: { type: "string", description: "Allow plain HTTP to these registries (comma-separated host[:port], or repeat the flag); loopback needs no flag", valueHint: "host[:port]" },
} as const satisfies ArgsDef;

/**
 * The --insecure-registry list: every time the flag is given (each value comma-separated), as
 * docker's daemon and podman take it; the parsed value alone is only the last one.
 */
export function insecureList(rawArgs: readonly string[], parsed: string | undefined): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (arg === "--") break;
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (name !== "--insecure-registry" && name !== "--insecureRegistry") continue;
    if (eq !== -1) values.push(arg.slice(eq + 1));
    else if (i + 1 < rawArgs.length) values.push(rawArgs[++i]!);
  }
  if (values.length === 0 && parsed !== undefined) values.push(parsed);
  return values.flatMap((v) => v.split(",")).map((s) => s.trim().toLowerCase()).filter(Boolean);
}
