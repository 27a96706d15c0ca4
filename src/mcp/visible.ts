// Makes hidden characters visible, so a reviewer sees what a model reads. Pure.

/** Short names for the invisible characters reviewers meet most often. */
const NAMES: Record<number, string> = {
  0x200b: "ZWSP",
  0x200c: "ZWNJ",
  0x200d: "ZWJ",
  0x200e: "LRM",
  0x200f: "RLM",
  0x202a: "LRE",
  0x202b: "RLE",
  0x202c: "PDF",
  0x202d: "LRO",
  0x202e: "RLO",
  0x2066: "LRI",
  0x2067: "RLI",
  0x2068: "FSI",
  0x2069: "PDI",
  0x2060: "WJ",
  0xfeff: "BOM",
  0x00ad: "SHY",
  0x061c: "ALM",
};

const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u034F\u115F\u1160\u3164\uFFA0]/u;

/**
 * Renders text with every control, format (zero-width, bidi), separator and lone-surrogate
 * character as `<U+XXXX NAME>`, and runs of Unicode tag characters as `<tags:"decoded text">`.
 */
export function renderVisible(text: string, options: { keepNewlines?: boolean } = {}): string {
  let out = "";
  let tags = "";
  const flushTags = () => {
    if (tags) out += `<tags:${JSON.stringify(tags)}>`;
    tags = "";
  };
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xe0000 && cp <= 0xe007f) {
      tags += cp >= 0xe0020 && cp < 0xe007f ? String.fromCharCode(cp - 0xe0000) : "";
      if (cp < 0xe0020 || cp === 0xe007f) tags += `<U+${cp.toString(16).toUpperCase()}>`;
      continue;
    }
    flushTags();
    if (ch === "\n") out += options.keepNewlines ? "\n" : "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (HIDDEN.test(ch)) {
      const name = NAMES[cp];
      out += `<U+${cp.toString(16).toUpperCase().padStart(4, "0")}${name ? ` ${name}` : ""}>`;
    } else out += ch;
  }
  flushTags();
  return out;
}
