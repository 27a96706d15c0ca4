// The machine facts a plan needs, read at the edge so plan.ts stays pure.
import pkg from "../../package.json" with { type: "json" };
import type { PlanHost } from "./plan.ts";

/** One PATH lookup a plan made: the command, the PATH and what was found (null: nothing). */
export type Lookup = [command: string, path: string, found: string | null];

/**
 * PATH lookups through Bun.which and kiwi's user agent. Each lookup is added to `lookups` when
 * given: a remembered plan holds what they found, and is replayed only while they find the same.
 */
export function planHost(lookups?: Lookup[]): PlanHost {
  return {
    which: (command, path) => {
      const found = Bun.which(command, { PATH: path ?? "" });
      lookups?.push([command, path ?? "", found]);
      return found;
    },
    userAgent: `kiwi/${pkg.version}`,
  };
}

/** Whether every lookup still finds what it found. */
export function sameLookups(lookups: readonly Lookup[]): boolean {
  return lookups.every(([command, path, found]) => Bun.which(command, { PATH: path }) === found);
}
