// The flag every command that talks to an OCI registry shares.
import type { ArgsDef } from "citty";

/** `--insecure-registry host[:port][,…]`: plain HTTP (and no TLS) allowed for these registries. */
export const registryFlags = {
  insecureRegistry: { type: "string", description: "Allow plain HTTP to these registries (comma-separated host[:port]); loopback needs no flag", valueHint: "host[:port]" },
} as const satisfies ArgsDef;

/** The --insecure-registry list. */
export function insecureList(value: string | undefined): string[] {
  return (value ?? "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
}
