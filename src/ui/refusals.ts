// What kiwi's filtering proxy refused a host-filtered tool, printed on stderr after the run so the
// user sees which host and port to declare (or which rule to look at).
import type { Refusal } from "../exec/net-proxy.ts";
import { showNote } from "./output.ts";

/** Prints each refused destination once; nothing when the proxy refused nothing. */
export function reportRefusals(prepared: { refusals: readonly Refusal[]; plan: { tool: string } }): void {
  if (prepared.refusals.length === 0) return;
  // The renderer loads only when there is something to say (nearly every call has nothing).
  const { renderRefusals } = require("../exec/net-proxy.ts") as typeof import("../exec/net-proxy.ts");
  for (const line of renderRefusals(prepared.plan.tool, prepared.refusals)) showNote(line);
}
