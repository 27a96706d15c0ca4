import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ENV_VARS } from "../../src/context.ts";
import { ERROR_CODES } from "../../src/errors.ts";
import { DOC_BLOCKS, renderDocBlocks } from "../../src/ui/docs.ts";

const readme = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");

describe("the README's generated tables", () => {
  test.each(Object.keys(DOC_BLOCKS))("has a %s block", (name) => {
    expect(readme).toContain(`<!-- BEGIN ${name} -->`);
    expect(readme).toContain(`<!-- END ${name} -->`);
  });

  test("match the code's tables (run `bun run scripts/gen-docs.ts` after changing them)", () => {
    expect(renderDocBlocks(readme)).toBe(readme);
  });

  test("insert tables literally, even when they contain $' or $&", () => {
    const doc = "a\n<!-- BEGIN t -->\nold\n<!-- END t -->\nz\n";
    const out = renderDocBlocks(doc, { t: () => "pattern: '^(a|a)*$' and $& too" });
    expect(out).toBe("a\n<!-- BEGIN t -->\npattern: '^(a|a)*$' and $& too\n<!-- END t -->\nz\n");
  });

  test("document every error code and environment variable", () => {
    for (const code of Object.keys(ERROR_CODES)) expect(readme).toContain(`\`${code}\``);
    for (const name of Object.keys(ENV_VARS)) expect(readme).toContain(`\`${name}\``);
  });
});
