// The machine facts a plan needs, read at the edge so plan.ts stays pure.
import pkg from "../../package.json" with { type: "json" };
import type { PlanHost } from "./plan.ts";

/** PATH lookups through Bun.which and kiwi's user agent. */
export function planHost(): PlanHost {
  return {
    which: (command, path) => Bun.which(command, { PATH: path ?? "" }),
    userAgent: `kiwi/${pkg.version}`,
  };
}
