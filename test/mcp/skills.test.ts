// Skill entries (SEP-2640) and their files: malformed entries are refused naming what is wrong, a
// file must match its size and sha256 digest, and SKILL.md's frontmatter must equal the entry's.
import { describe, expect, test } from "bun:test";
import { KiwiError } from "../../src/errors.ts";
import { parseJsonLossless } from "../../src/integrity/json-lossless.ts";
import type { WireObject } from "../../src/mcp/listing.ts";
import { assertFrontmatterMatches, checkSkillEntries, verifySkillFile } from "../../src/mcp/skills.ts";

const SKILL_MD = "---\nname: refunds\ndescription: Process refunds.\n---\n# Refunds\n";
const digest = (text: string) => `sha256:${new Bun.CryptoHasher("sha256").update(text).digest("hex")}`;
const entry = (over: Record<string, unknown> = {}): WireObject =>
  parseJsonLossless(
    JSON.stringify({
      uri: "skill://acme/refunds/SKILL.md",
      frontmatter: { name: "refunds", description: "Process refunds." },
      resources: [{ uri: "skill://acme/refunds/SKILL.md", digest: digest(SKILL_MD), size: SKILL_MD.length }],
      ...over,
    }),
    { positions: false },
  ).value as WireObject;

describe("checkSkillEntries", () => {
  test("accepts a complete entry and a dynamic one", () => {
    expect(() => checkSkillEntries([entry(), entry({ uri: "skill://gen/SKILL.md", frontmatter: { name: "gen", description: "d" }, resources: "dynamic" })], "s")).not.toThrow();
  });

  test.each([
    ["a uri that is not a SKILL.md", { uri: "skill://acme/refunds/README.md" }, "does not name a SKILL.md"],
    ["no description", { frontmatter: { name: "refunds" } }, "no frontmatter with a string name and description"],
    ["a folder that is not its name", { frontmatter: { name: "other", description: "d" } }, 'the skill\'s folder "refunds" is not its frontmatter name "other"'],
    ["a bad digest", { resources: [{ uri: "skill://acme/refunds/SKILL.md", digest: "md5:abc" }] }, "not sha256: and 64 lowercase hex digits"],
    ["a file outside the folder", { resources: [{ uri: "skill://acme/refunds/SKILL.md", digest: digest("x") }, { uri: "skill://acme/refunds/../secrets", digest: digest("x") }] }, "lies outside the skill's folder"],
    ["an encoded separator", { resources: [{ uri: "skill://acme/refunds/SKILL.md", digest: digest("x") }, { uri: "skill://acme/refunds/a%2F..%2Fb", digest: digest("x") }] }, "lies outside the skill's folder"],
    ["no SKILL.md among its files", { resources: [{ uri: "skill://acme/refunds/notes.md", digest: digest("x") }] }, "does not list its own SKILL.md"],
  ])("refuses %s", (_, over, message) => {
    let error: unknown;
    try {
      checkSkillEntries([entry(over)], 'MCP server "s"');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KiwiError);
    expect((error as KiwiError).code).toBe("E_MCP");
    expect((error as KiwiError).message).toContain(message);
  });

  test("refuses the same skill listed twice", () => {
    expect(() => checkSkillEntries([entry(), entry()], "s")).toThrow('lists the skill "skill://acme/refunds/SKILL.md" twice');
  });
});

describe("verifySkillFile and the frontmatter", () => {
  const file = { uri: "skill://acme/refunds/SKILL.md", digest: digest(SKILL_MD), size: SKILL_MD.length };
  test("passes the listed bytes", () => {
    expect(verifySkillFile("s", file.uri, file, new TextEncoder().encode(SKILL_MD)).digest).toBe(file.digest);
  });
  test("refuses other bytes of another size, or of the same size", () => {
    expect(() => verifySkillFile("s", file.uri, file, new TextEncoder().encode(`${SKILL_MD}!`))).toThrow(`is ${SKILL_MD.length + 1} bytes, but the skill's entry says ${SKILL_MD.length}`);
    expect(() => verifySkillFile("s", file.uri, file, new TextEncoder().encode(SKILL_MD.replace("#", "!")))).toThrow(`but the skill's entry says ${file.digest}`);
  });
  test("a SKILL.md whose frontmatter differs from the entry is refused, naming the fields", () => {
    expect(() => assertFrontmatterMatches("s", entry(), SKILL_MD)).not.toThrow();
    expect(() => assertFrontmatterMatches("s", entry(), SKILL_MD.replace("Process refunds.", "Refund everything."))).toThrow("has frontmatter that differs from its entry in description");
    expect(() => assertFrontmatterMatches("s", entry(), "# no frontmatter\n")).toThrow("has no YAML frontmatter");
  });
});
