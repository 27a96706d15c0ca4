// What kiwi's filtering proxy refused a host-filtered tool, printed on stderr after the run so the
// user sees which host and port to declare (or which rule to look at).
import type { Refusal } from "../exec/net-proxy.ts";
import { renderRefusals } from "../exec/net-proxy.ts";
import { showNote } from "./output.ts";

/** Prints each refused destination once; nothing when the proxy refused nothing. */
export function reportRefusals(prepared: { refusals: readonly Refusal[]; plan: { tool: string } }): void {
  for (const line of renderRefusals(prepared.plan.tool, prepared.refusals)) showNote(line);
}
