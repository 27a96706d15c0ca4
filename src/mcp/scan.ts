// The poisoning scan: every string (and every object key) of a server's interface, checked for
// hidden Unicode, injection markers, sensitive paths, cross-server references and base64 blobs.
// Pure: a listing in, findings out. The rule ids live in SCAN_RULES below and nowhere else.
import { isMapping } from "../integrity/value.ts";
import { escapePointer } from "../integrity/canonical.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { type Finding, verdictOf } from "../findings/verdict.ts";
import { LIST_KINDS, type WireListing, discoverComponent, withoutMeta } from "./listing.ts";
import { renderVisible } from "./visible.ts";

/** Every scan rule: id → what it catches and how to respond. */
export const SCAN_RULES = {
  "mcp/unicode-tag": {
    title: "Unicode tag characters (U+E0000–U+E007F) hide text the model reads but people do not see",
    hint: "do not trust this server until its author removes the hidden text",
  },
  "mcp/zero-width": {
    title: "zero-width or other invisible characters",
    hint: "invisible characters can split words to dodge review; ask the author to remove them",
  },
  "mcp/bidi-control": {
    title: "bidirectional control characters reorder how text is displayed",
    hint: "text shown to reviewers may differ from what the model reads; ask the author to remove them",
  },
  "mcp/control-character": {
    title: "control characters (an ANSI escape, NUL, backspace) that a terminal acts on instead of showing",
    hint: "escape sequences can hide or rewrite text where descriptions are displayed; ask the author to remove them",
  },
  "mcp/mixed-script": {
    title: "a word that mixes Latin letters with Cyrillic or Greek look-alikes (a homoglyph)",
    hint: "a look-alike letter makes a name read as another (a shadowed tool, a dodged keyword); ask the author to use one script per word",
  },
  "mcp/injection-marker": {
    title: "prompt-injection marker",
    hint: "a tool description should describe the tool, not instruct the model; review it before pinning",
  },
  "mcp/sensitive-path": {
    title: "reference to a sensitive file or credential",
    hint: "check why this server's interface mentions secrets or keys before pinning it",
  },
  "mcp/cross-server-reference": {
    title: "reference to another server or its tools",
    hint: "a server that tells the model how to use other servers' tools may be shadowing them; review it",
  },
  "mcp/base64-blob": {
    title: "long base64 blob",
    hint: "encoded payloads hide content from review; decode it and check what it says",
  },
} as const;
export type ScanRule = keyof typeof SCAN_RULES;

/** A scan finding: a Finding plus where in the server's interface, and a visible excerpt. */
export interface ScanFinding extends Finding {
  rule: ScanRule;
  /** The server's kiwi tool id (or the listing file for offline scans). */
  server: string;
  /** `tool "read_file"`, `prompt "summarize"`, `instructions`, … */
  component: string;
  /** Wire field the string sits in: `description`, `inputSchema`, `arguments`, or `… (key)` for an object key. */
  field: string;
  /** The matched text with its surroundings, every hidden character made visible. */
  excerpt: string;
}

/** Another server kiwi knows of, whose tool names this server's text should not mention. */
export interface OtherServer {
  id: string;
  name?: string;
  tools: string[];
}

export interface ScanOptions {
  server: string;
  /** Where findings point: the mcp_server manifest file, or the listing file. */
  file: string;
  /** Findings become errors instead of warnings. */
  strict?: boolean;
  otherServers?: readonly OtherServer[];
  /** Stop after this many findings (a hostile listing could otherwise flood the report). */
  maxFindings?: number;
}

export interface ScanResult {
  ok: boolean;
  findings: ScanFinding[];
  /** True when maxFindings cut the report short. */
  truncated: boolean;
}

const TAG = /[\u{E0000}-\u{E007F}]+/gu;
const ZERO_WIDTH = /[\u200B-\u200D\u2060-\u2064\uFEFF\u180E\u00AD\u034F\u115F\u1160\u3164\uFFA0]/gu;
/**
 * A word (letters and marks) that holds both Latin letters and Cyrillic letters, or Greek letters
 * that look Latin (ο, α, ρ, ν…; not μ, which units use): "reаd_file" with a Cyrillic а.
 */
const WORD = /[\p{L}\p{M}]+/gu;
const LATIN = /\p{Script=Latin}/u;
const LOOKALIKE = /[\p{Script=Cyrillic}ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ]/u;

/** C0 and C1 controls other than tab, line feed and carriage return (ordinary whitespace in text). */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/gu;
const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/gu;
const INJECTION =
  /<\s*\/?\s*(?:important|system|instructions?|secret|hidden)\s*>|\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding)\s+(?:instructions?|prompts?|rules|directions)\b|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this\s+|it\s+)?to|notify|alert|reveal\s+(?:this\s+|it\s+)?to)\s+(?:this\s+|it\s+|anything\s+)?(?:to\s+)?the\s+user\b|\bwithout\s+(?:telling|informing|notifying|alerting)\s+the\s+user\b/giu;
const SENSITIVE =
  /~\/\.ssh\b|\.ssh\/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|(?<![\w.])\.env\b|\bcredentials?\b(?:\.json)?|\.netrc\b|\.npmrc\b|\.pgpass\b|\.git-credentials\b|\/etc\/(?:passwd|shadow)\b|\.kube\/config\b|\.gnupg\b|\bprivate[ _-]key\b/giu;
const GENERIC_CROSS = /\bmcp__[\w-]+__[\w-]+|\b(?:any|all|every|the)\s+other\s+(?:mcp\s+)?(?:tools?|servers?)\b|\bother\s+(?:mcp\s+)?servers?(?:'s?)?\s+tools?\b/giu;
/** What precedes the payload of an inline image (`data:image/png;base64,…`, as MCP icons may be). */
const IMAGE_DATA_URI = /(?:^|[\s"'(<=])data:image\/[\w.+-]+(?:;[\w-]+=[\w.+-]+)*;base64,$/i;
const BASE64 = /[A-Za-z0-9+/]{80,}={0,2}|[A-Za-z0-9_-]{80,}/g;

/** Scans every string and key of a listing; findings are warnings (errors with `strict`). */
export function scanListing(listing: WireListing, options: ScanOptions): ScanResult {
  const findings: ScanFinding[] = [];
  const max = options.maxFindings ?? 500;
  const ownTools = new Set(listing.tools.map((t) => t.name).filter((n): n is string => typeof n === "string"));
  const cross = crossServerPattern(options.otherServers ?? [], ownTools);
  let truncated = false;
  const visit = (text: string, pointer: string, component: string, field: string): void => {
    if (truncated) return;
    for (const hit of matchString(text, cross)) {
      if (findings.length >= max) {
        truncated = true;
        return;
      }
      findings.push({
        rule: hit.rule,
        severity: options.strict ? "error" : "warning",
        file: options.file,
        pointer,
        tool: options.server,
        server: options.server,
        component,
        field,
        excerpt: excerptAround(text, hit.index, hit.length),
        message: `${component} ${renderVisible(field)}: ${SCAN_RULES[hit.rule].title}${hit.detail ? ` (${hit.detail})` : ""}`,
        hint: SCAN_RULES[hit.rule].hint,
      });
    }
  };
  if (typeof listing.instructions === "string") visit(listing.instructions, "/instructions", "instructions", "instructions");
  // A 2026-07-28 server's discover result is pinned interface too (its capabilities, experimental
  // fields and all); its instructions were scanned above and its volatile fields are in no pin.
  if (listing.discover) walk(discoverComponent(listing.discover), "/discover", "server/discover", undefined, visit);
  // serverInfo is what a client shows of the server (title, description, websiteUrl besides name
  // and version), so it is read like every other string the server sends; _meta as elsewhere is not.
  if (listing.serverInfo) walk(withoutMeta(listing.serverInfo), "/serverInfo", "serverInfo", undefined, visit);
  for (const { key, item } of LIST_KINDS) {
    listing[key].forEach((entry, i) => {
      const id = entry[key === "resources" ? "uri" : key === "resourceTemplates" ? "uriTemplate" : "name"];
      const component = `${item} ${renderVisible(JSON.stringify(typeof id === "string" ? id : String(i)))}`;
      walk(entry, `/${key}/${i}`, component, undefined, visit);
    });
  }
  const verdict = verdictOf(findings);
  return { ok: verdict.ok, findings, truncated };
}

type Visit = (text: string, pointer: string, component: string, field: string) => void;

function walk(value: CanonicalValue, pointer: string, component: string, field: string | undefined, visit: Visit): void {
  if (typeof value === "string") visit(value, pointer, component, field ?? "value");
  else if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${pointer}/${i}`, component, field, visit));
  else if (isMapping(value)) {
    for (const key of Object.keys(value)) {
      const child = `${pointer}/${escapePointer(key)}`;
      // Object keys are strings the model reads too (schema property names above all), the keys
      // of a tool object itself included.
      visit(key, child, component, `${field ?? key} (key)`);
      walk(value[key]!, child, component, field ?? key, visit);
    }
  }
}

interface Hit {
  rule: ScanRule;
  index: number;
  length: number;
  detail?: string;
}

/** Every rule's first hit in one string (one finding per rule per string keeps reports readable). */
export function matchString(text: string, cross?: RegExp): Hit[] {
  const hits: Hit[] = [];
  const first = (rule: ScanRule, re: RegExp, accept: (m: RegExpExecArray) => boolean = () => true, detail?: (m: RegExpExecArray) => string) => {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (accept(m)) {
        hits.push({ rule, index: m.index, length: m[0].length, detail: detail?.(m) });
        return;
      }
    }
  };
  // Cheap pre-check: most strings are plain ASCII and skip the Unicode rules.
  if (/[^\x00-\x7f]/.test(text)) {
    first("mcp/unicode-tag", TAG, undefined, (m) => `hidden text: ${JSON.stringify(decodeTags(m[0]).slice(0, 80))}`);
    first("mcp/zero-width", ZERO_WIDTH, (m) => !isEmojiJoiner(text, m.index, m[0]), (m) => `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`);
    first("mcp/bidi-control", BIDI, undefined, (m) => `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`);
    // Word by word, each tested twice: linear in the text, whatever a hostile listing holds.
    first("mcp/mixed-script", WORD, (m) => LATIN.test(m[0]) && LOOKALIKE.test(m[0]), (m) => JSON.stringify(m[0]));
  }
  first("mcp/control-character", CONTROL, undefined, (m) => `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`);
  first("mcp/injection-marker", INJECTION, undefined, (m) => JSON.stringify(m[0]));
  first("mcp/sensitive-path", SENSITIVE, undefined, (m) => JSON.stringify(m[0]));
  first("mcp/cross-server-reference", GENERIC_CROSS, undefined, (m) => JSON.stringify(m[0]));
  if (cross && !hits.some((h) => h.rule === "mcp/cross-server-reference")) first("mcp/cross-server-reference", cross, undefined, (m) => JSON.stringify(m[0]));
  first("mcp/base64-blob", BASE64, (m) => isBase64Like(m[0]) && !IMAGE_DATA_URI.test(text.slice(Math.max(0, m.index - 120), m.index)), (m) => `${m[0].length} characters`);
  return hits;
}

/** The ASCII text a run of tag characters spells (U+E0020–E007E mirror ASCII). */
export function decodeTags(run: string): string {
  let out = "";
  for (const ch of run) {
    const cp = ch.codePointAt(0)! - 0xe0000;
    out += cp >= 0x20 && cp < 0x7f ? String.fromCharCode(cp) : "";
  }
  return out;
}

/** A zero-width joiner between emoji builds one glyph (👩‍💻) and is legitimate. */
function isEmojiJoiner(text: string, index: number, char: string): boolean {
  if (char !== "\u200D") return false;
  const before = [...text.slice(Math.max(0, index - 2), index)].pop() ?? "";
  const after = String.fromCodePoint(text.codePointAt(index + 1) ?? 0);
  return /[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]/u.test(before) && /\p{Extended_Pictographic}/u.test(after);
}

function isBase64Like(run: string): boolean {
  if (/^[0-9a-fA-F]+$/.test(run)) return false; // a hex digest, not an encoded payload
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run);
}

function crossServerPattern(others: readonly OtherServer[], ownTools: ReadonlySet<string>): RegExp | undefined {
  const names = new Set<string>();
  for (const other of others) {
    for (const tool of other.tools) if (tool.length >= 3 && !ownTools.has(tool)) names.add(tool);
    // kiwi ids are distinctive (github_mcp); self-reported names are often plain words, so not used.
    if (other.id.length >= 3) names.add(other.id);
  }
  if (names.size === 0) return undefined;
  const alternatives = [...names].sort((a, b) => b.length - a.length).map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`(?<![\\w-])(?:${alternatives.join("|")})(?![\\w-])`, "gu");
}

/** Up to ~40 characters either side of a match, with hidden characters made visible. */
export function excerptAround(text: string, index: number, length: number): string {
  const start = onBoundary(text, Math.max(0, index - 40));
  const end = onBoundary(text, Math.min(text.length, index + length + 40));
  const clippedMatch =
    length > 160 ? text.slice(index, onBoundary(text, index + 80)) + "…" + text.slice(onBoundary(text, index + length - 40), index + length) : text.slice(index, index + length);
  const body = text.slice(start, index) + clippedMatch + text.slice(index + length, end);
  return `${start > 0 ? "…" : ""}${renderVisible(body)}${end < text.length ? "…" : ""}`;
}

/** `i`, moved back one when it would cut a surrogate pair (a tag character, an emoji) in half. */
function onBoundary(text: string, i: number): number {
  const code = text.charCodeAt(i);
  return i > 0 && i < text.length && code >= 0xdc00 && code <= 0xdfff && /[\uD800-\uDBFF]/.test(text[i - 1]!) ? i - 1 : i;
}
