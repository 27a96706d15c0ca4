import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { RULES, renderRulesMarkdown, ruleInfo } from "../../src/findings/rules.ts";

const ROOT = join(import.meta.dir, "..", "..");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => readFileSync(join(e.parentPath, e.name), "utf8"));
}

describe("the rule table", () => {
  test("ids are area/name in lower case, each with a description and an example", () => {
    for (const [id, info] of Object.entries(RULES)) {
      expect(id).toMatch(/^[a-z_-]+\/[a-z0-9-]+$/);
      expect(info.description.endsWith(".")).toBe(true);
      expect(info.example.length).toBeGreaterThan(0);
    }
  });

  test("every rule id used in src/ is in the table", () => {
    const text = [...sources(join(ROOT, "src", "validate")), ...sources(join(ROOT, "src", "manifest")), ...sources(join(ROOT, "src", "schema")), ...sources(join(ROOT, "src", "resolve"))].join("\n");
    const used = new Set([...text.matchAll(/"((?:parse|discover|universal|security|entrypoint|script|api|mcp_server|mcp_tool|runtime|knowledge|primitive|chain|child-schema|parameters)\/[a-z0-9-]+)"/g)].map((m) => m[1]!));
    expect([...used].filter((id) => !(id in RULES))).toEqual([]);
  });

  test("an unknown id falls back to an error, so nothing is hidden", () => {
    expect(ruleInfo("nope/nope").severity).toBe("error");
  });

  test("renders the README table with every id", () => {
    const md = renderRulesMarkdown();
    for (const id of Object.keys(RULES)) expect(md).toContain(`| \`${id}\` |`);
    expect(md).toContain("(error with --strict)");
  });

  test("the README lists every rule id", () => {
    const text = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(text).toContain("<!-- BEGIN rules -->");
    for (const id of Object.keys(RULES)) expect(text).toContain(`\`${id}\``);
  });
});
