// What leaves a run: an error with every secret value removed from its message, hint and details.
import { describe, expect, test } from "bun:test";
import { KiwiError } from "../../src/errors.ts";
import { redactError } from "../../src/exec/run-io.ts";
import { makeRedactor } from "../../src/exec/template.ts";

describe("redactError", () => {
  test.each(["pw\\", "two\nlines", 'p"w'])("removes the secret %p from the details value by value, whatever JSON would make of it", (secret) => {
    const error = new KiwiError("E_EXEC_FAILED", `t: login as ${secret} failed`, { hint: `not ${secret}`, details: { tool: "t", url: `http://h/?k=${secret}`, sent: { password: secret, tries: [secret, 2] } } });
    const redacted = redactError(error, makeRedactor([secret]));
    expect(redacted).toMatchObject({ code: "E_EXEC_FAILED", message: "t: login as *** failed", hint: "not ***" });
    expect(redacted.details).toEqual({ tool: "t", url: "http://h/?k=***", sent: { password: "***", tries: ["***", 2] } });
  });

  test("a short secret does not reach the details' keys", () => {
    const redacted = redactError(new KiwiError("E_EXEC_FAILED", "m", { details: { url: "u" } }), makeRedactor(["u"]));
    expect(redacted.details).toEqual({ url: "***" });
  });
});
