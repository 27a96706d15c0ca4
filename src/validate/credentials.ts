// Credentials by the forms their issuers give them: a prefix or shape no ordinary text has, so a
// match is a key committed with the tool (gitleaks' and GitHub secret scanning's high-confidence
// patterns). security.ts asks it of every string of a manifest, file-secrets.ts of every line of a
// tool's files. Pure.
import { computeLineStarts, lastStartAtOrBefore } from "../integrity/json-lossless.ts";
import { IGNORE_FILE } from "../manifest/model.ts";

interface CredentialFormat {
  kind: string;
  pattern: RegExp;
  /** Its text is fixed (a private key's header): nothing in it can be a stand-in. */
  fixed?: true;
  /** Said with "an" (as its name is spoken: an npm token, an AWS key). */
  an?: true;
}

const CREDENTIAL_FORMATS: readonly CredentialFormat[] = [
  { kind: "GitHub token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,255})\b/ },
  { kind: "GitLab token", pattern: /\bglpat-[A-Za-z0-9_-]{20,}/ },
  { kind: "npm token", pattern: /\bnpm_[A-Za-z0-9]{36}\b/, an: true },
  { kind: "PyPI token", pattern: /\bpypi-AgE[A-Za-z0-9_-]{50,}/ },
  { kind: "Slack token", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/ },
  { kind: "Slack webhook URL", pattern: /https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]{20,}/ },
  { kind: "AWS access key id", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/, an: true },
  { kind: "Google API key", pattern: /\bAIza[0-9A-Za-z_-]{35}/ },
  { kind: "Anthropic API key", pattern: /\bsk-ant-[A-Za-z0-9_-]{32,}/, an: true },
  { kind: "OpenAI API key", pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}/, an: true },
  { kind: "Stripe secret key", pattern: /\b[rs]k_live_[A-Za-z0-9]{20,}/ },
  // Starts only where a run of its characters starts (not at \b): in "-eyJ-eyJ-eyJ…" every eyJ
  // after a word boundary began a scan of the whole run, so a file of them took quadratic time.
  { kind: "JSON Web Token", pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/ },
  // At most three words before PRIVATE (RSA, EC, OPENSSH, ENCRYPTED, PGP… take one): unbounded, a
  // header followed by a megabyte of "A A A …" took the regex engine seconds.
  { kind: "private key", pattern: /-----BEGIN (?:[A-Z]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----/, fixed: true },
];

/** Each format's pattern, global, for finding every match in a text. */
const GLOBAL = CREDENTIAL_FORMATS.map((f) => new RegExp(f.pattern.source, `${f.pattern.flags}g`));

/** Any of them: one test per string or file, the table asked only on a match. */
export const ANY_CREDENTIAL = new RegExp(CREDENTIAL_FORMATS.map((f) => `(?:${f.pattern.source})`).join("|"));

/**
 * A stand-in written where a token goes, in documentation and sample configs: ghp_XXXX…,
 * xoxb-your-token-here, AWS's AKIAIOSFODNN7EXAMPLE (which gitleaks' allowlist lets through too).
 * Eight equal characters in a row or one of these words is as good as absent from an issued key's
 * random part: "dummy", the shortest, turns up in about one 36-character key in a million.
 */
const PLACEHOLDER_WORD = /example|placeholder|dummy|redacted|changeme|your[-_]|[-_]here\b/i;
const PLACEHOLDER_RUN = /(.)\1{7}/;

/** A credential found: its kind and its first four characters (all a finding may show of it). */
export interface Credential {
  kind: string;
  shown: string;
}

/** A credential found in a text, where it starts (1-based line and column). */
export interface CredentialHit extends Credential {
  line: number;
  column: number;
}

/** The kind with its article, as a message says it: "an AWS access key id", "a GitHub token". */
export function credentialNoun(kind: string): string {
  return `${CREDENTIAL_FORMATS.find((f) => f.kind === kind)?.an ? "an" : "a"} ${kind}`;
}

/** The first credential in `value` that is no placeholder (by the table's order). */
export function credentialIn(value: string): Credential | undefined {
  if (!ANY_CREDENTIAL.test(value)) return undefined;
  for (const [i, format] of CREDENTIAL_FORMATS.entries()) {
    for (const match of value.matchAll(GLOBAL[i]!)) if (isCredential(format, match[0])) return { kind: format.kind, shown: match[0].slice(0, 4) };
  }
  return undefined;
}

/**
 * Every credential in `text` that is no placeholder, in order, one per stretch of text: where two
 * forms match the same characters (an Anthropic key is an OpenAI-shaped one too), the table's
 * first names it.
 */
export function credentialsInText(text: string): CredentialHit[] {
  if (!ANY_CREDENTIAL.test(text)) return [];
  const found: { start: number; end: number; order: number; kind: string; shown: string }[] = [];
  for (const [i, format] of CREDENTIAL_FORMATS.entries()) {
    for (const match of text.matchAll(GLOBAL[i]!)) {
      if (isCredential(format, match[0])) found.push({ start: match.index, end: match.index + match[0].length, order: i, kind: format.kind, shown: match[0].slice(0, 4) });
    }
  }
  found.sort((a, b) => a.start - b.start || a.order - b.order);
  const starts = computeLineStarts(text);
  const hits: CredentialHit[] = [];
  let covered = -1;
  for (const f of found) {
    if (f.start < covered) continue;
    covered = f.end;
    const index = lastStartAtOrBefore(starts, f.start);
    hits.push({ kind: f.kind, shown: f.shown, line: index + 1, column: f.start - starts[index]! + 1 });
  }
  return hits;
}

function isCredential(format: CredentialFormat, match: string): boolean {
  return format.fixed === true || !(PLACEHOLDER_RUN.test(match) || PLACEHOLDER_WORD.test(match));
}

/**
 * A credential in a remote tool (pulled from a registry: layer.ts isPublished) is its
 * publisher's: the tool is not committed here, and its integrity is pinned, so the consumer can
 * neither change the file nor add a comment. It is said (a warning), with the publisher's fix.
 */
export const PUBLISHED_WITH_IT = "the tool was published with it (from a registry: it is not committed here)";

/** What the consumer of a remote tool can do about a credential in it. */
export function publishedSecretHint(toolId: string): string {
  return `tell the tool's publisher, who should revoke it and publish a version without it ("kiwi outdated" shows when the tag moves, "kiwi update ${toolId}" takes it); or remove the tool`;
}

/**
 * The way past a published example (no credential), as a hint ends: on its line, the comment
 * `comment` when the text can hold one, else (JSON has no comments) an entry of the project's
 * ignore file narrowed by `narrowing` (`tool: x`, or `file: …, line: n`).
 */
export function publishedExampleHint(comment: string | undefined, narrowing: string): string {
  const way = comment === undefined ? `in ${IGNORE_FILE} (rule: security/secret-literal, ${narrowing}, reason: <why>)` : `on its line: ${comment}`;
  return `if it is a published example and no credential, say so ${way}`;
}
