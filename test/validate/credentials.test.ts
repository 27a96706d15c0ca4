// Finding credentials by their issuers' forms, in one value (a manifest's string) and across a
// text (a tool's file): where each starts, which kind names it, and what counts as a placeholder.
import { describe, expect, test } from "bun:test";
import { credentialIn, credentialNoun, credentialsInText } from "../../src/validate/credentials.ts";

// Built here, not written out: a scanner of this repository must not find a key in its tests.
const GH = "ghp_" + "Kw9aB3xY9Qz5r".repeat(3).slice(0, 36);
const AWS = "AKIA" + "Z7QW".repeat(4);
const ANTHROPIC = "sk-ant-api03-" + "qW3e".repeat(10);

describe("credentialsInText", () => {
  test("each credential at its line and column, in order", () => {
    const text = `import os\nTOKEN = "${GH}"\n\n  key: ${AWS}  # and ${GH}\n`;
    expect(credentialsInText(text)).toEqual([
      { kind: "GitHub token", shown: "ghp_", line: 2, column: 10 },
      { kind: "AWS access key id", shown: "AKIA", line: 4, column: 8 },
      { kind: "GitHub token", shown: "ghp_", line: 4, column: 8 + AWS.length + 8 },
    ]);
  });

  test("one credential where two forms match the same characters: the table's first names it", () => {
    expect(credentialsInText(`k=${ANTHROPIC}`)).toEqual([{ kind: "Anthropic API key", shown: "sk-a", line: 1, column: 3 }]);
  });

  test("placeholders are none, a real key among them is one; a private key's header always is", () => {
    const text = ["ghp_" + "X".repeat(36), "xoxb-your-bot-token-here", "AKIAIOSFODNN7" + "EXAMPLE", "sk-proj-" + "0".repeat(40), AWS, `-----BEGIN RSA ${"PRIVATE"} KEY-----`].join("\n");
    expect(credentialsInText(text).map((h) => [h.line, h.kind])).toEqual([
      [5, "AWS access key id"],
      [6, "private key"],
    ]);
  });

  test("texts built to make a pattern backtrack are read in one pass, to the end (a tool's file may be hostile)", () => {
    // Before the fix each took from seconds to minutes: quadratic starts of the JWT form, an unbounded run of words before PRIVATE.
    const hostile = ["-eyJ".repeat(250_000), "-eyJa.".repeat(160_000), `-----BEGIN ${"A ".repeat(400_000)}`, "-github_pat_".repeat(80_000), `https://hooks.slack.com/services/T${"A".repeat(900_000)}`];
    for (const text of hostile) expect(credentialsInText(`${text}\n${AWS}\n`).map((h) => h.kind)).toEqual(["AWS access key id"]);
  });

  test("CRLF line ends and a text with none", () => {
    expect(credentialsInText(`a\r\nb ${GH}\r\n`)).toEqual([{ kind: "GitHub token", shown: "ghp_", line: 2, column: 3 }]);
    expect(credentialsInText("nothing here\n")).toEqual([]);
    expect(credentialsInText("")).toEqual([]);
  });
});

describe("credentialIn", () => {
  test("the first real credential of a value, by the table's order", () => {
    expect(credentialIn(`Bearer ${GH}`)).toEqual({ kind: "GitHub token", shown: "ghp_" });
    expect(credentialIn(`${"AKIAIOSFODNN7" + "EXAMPLE"} ${AWS}`)).toEqual({ kind: "AWS access key id", shown: "AKIA" });
    expect(credentialIn("ghp_...")).toBeUndefined();
  });

  test("says a kind with its article", () => {
    expect(credentialNoun("AWS access key id")).toBe("an AWS access key id");
    expect(credentialNoun("OpenAI API key")).toBe("an OpenAI API key");
    expect(credentialNoun("GitHub token")).toBe("a GitHub token");
    expect(credentialNoun("npm token")).toBe("an npm token");
    expect(credentialNoun("JSON Web Token")).toBe("a JSON Web Token");
  });
});
