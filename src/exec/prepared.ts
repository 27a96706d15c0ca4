// The request `kiwi exec` makes and the prepared run it gets back: the types the preparation
// (ops/prepare-exec-io.ts) and the run (run-io.ts) share, here so the run needs nothing from ops/.
import type { ParamSources } from "./params.ts";
import type { Plan } from "./plan.ts";
import type { SandboxMode } from "./sandbox-plan.ts";
import type { VerifiedChain } from "./chain-verify-io.ts";
import type { HostPolicy } from "./net-policy.ts";
import type { Refusal } from "./net-proxy.ts";

export interface ExecRequest {
  toolId: string;
  unlocked: boolean;
  strict?: boolean;
  /** Flag sources; `stdin` is read lazily, only when no flag gave parameters and the tool does not inherit stdin. */
  sources: Omit<ParamSources, "stdin">;
  readStdin?: () => string | undefined;
  /** Resolve everything but materialise nothing (the plan names the run directories it would use). */
  dryRun: boolean;
  /** How subprocess tools are contained (sandbox-plan.ts). */
  sandbox: SandboxMode;
  /** Run a tool whose declared hosts admit every host (--allow-any-host). */
  allowAnyHost?: boolean;
  /** Plans an MCP server's launch for kiwi's MCP commands: not a call (a call refuses a server). */
  server?: boolean;
}

export interface PreparedExec {
  /** The plan as run (secret values in place). Never print it: print `shown`. */
  plan: Plan;
  /** The same plan with secret values as `***`. */
  shown: Plan;
  /** Removes secret values from any text (error messages, response excerpts). */
  redact: (text: string) => string;
  /** Refuses URLs an http_client tool may not contact (declared net.outbound hosts, SSRF rule). */
  checkUrl: (url: URL) => Promise<void>;
  chain: VerifiedChain;
  warnings: string[];
  /** Host filtering of a subprocess tool: the policy kiwi's proxy enforces on `plan.subprocess.proxy.socket`. */
  netPolicy?: HostPolicy;
  /** Connections kiwi's proxy refused during the run (filled by run-io.ts), to report after it. */
  refusals: Refusal[];
  /** Removes one-off run directories; call after the run. */
  cleanup: () => void;
}
