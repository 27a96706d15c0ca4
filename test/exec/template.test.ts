import { describe, expect, test } from "bun:test";
import { type TemplateScope, assertEnvPresent, expandString, expandValue, makeRedactor } from "../../src/exec/template.ts";

function scope(params: Record<string, unknown>, env: Record<string, string> = {}, secrets: string[] = [], redact = false): TemplateScope {
  return { params, env, secrets: new Set(secrets), redact, missingEnv: new Set() };
}

describe("expanding placeholders", () => {
  test.each([
    ["--city={city}", { city: "Paris" }, "--city=Paris"],
    ["{n}", { n: 7 }, "7"],
    ["{flag}", { flag: false }, "false"],
    ["{list}", { list: [1, "a"] }, '[1,"a"]'],
    ["{obj}", { obj: { a: 1 } }, '{"a":1}'],
    ["{{city}}", { city: "Paris" }, "{city}"],
    ['{"json": {"stays": "literal"}}', {}, '{"json": {"stays": "literal"}}'],
    ["{a}{b}", { a: "x", b: "y" }, "xy"],
  ])("%s with %p gives %p", (template, params, expected) => {
    expect(expandString(template, scope(params))).toEqual(expect.objectContaining({ absent: false, value: expected }));
  });

  test("a value is substituted once and never re-scanned", () => {
    const e = expandString("{a}", scope({ a: "{b} ${HOME} $(id) `id`", b: "NO" }, { HOME: "/home/x" }));
    expect(e).toEqual({ absent: false, value: "{b} ${HOME} $(id) `id`", params: ["a"] });
  });

  test("an absent parameter marks the whole string absent", () => {
    expect(expandString("--limit={limit}", scope({}))).toEqual({ absent: true, param: "limit" });
  });

  test("${VAR} reads the environment; a secret is *** only in the shown plan", () => {
    expect(expandString("Bearer ${API_TOKEN}", scope({}, { API_TOKEN: "s3cr3t" }, ["API_TOKEN"]))).toEqual(expect.objectContaining({ value: "Bearer s3cr3t" }));
    expect(expandString("Bearer ${API_TOKEN}", scope({}, { API_TOKEN: "s3cr3t" }, ["API_TOKEN"], true))).toEqual(expect.objectContaining({ value: "Bearer ***" }));
  });

  test("unset variables are collected and reported together", () => {
    const s = scope({});
    expandString("${B} ${A} ${B}", s);
    expect(() => assertEnvPresent(s, "weather")).toThrow(
      expect.objectContaining({ code: "E_EXEC_FAILED", message: "weather references ${A}, ${B}, which are not set in the environment" }),
    );
  });

  test("a body keeps parameter types and drops members whose parameter is absent", () => {
    const body = { q: "{q}", n: "{n}", nested: { on: "{flag}", text: "n={n}" }, list: ["{q}", "{missing}"], gone: "{missing}" };
    expect(expandValue(body, scope({ q: "x", n: 3, flag: true })).value).toEqual({ q: "x", n: 3, nested: { on: true, text: "n=3" }, list: ["x"] });
  });

  test("the redactor removes raw and percent-encoded secret values", () => {
    const redact = makeRedactor(["p@ss word", "", "tok"]);
    expect(redact("url=https://h/?k=p%40ss%20word tok=tok, p@ss word")).toBe("url=https://h/?k=*** ***=***, ***");
  });

  test("removes a secret in every form a URL gives it: a query value (a space is +), and a path or query it was written into whole", () => {
    const secret = "s3cr3t/&=+ x'";
    const redact = makeRedactor([secret]);
    const query = new URL("https://h/v1");
    query.searchParams.set("key", secret);
    expect(query.href).toBe("https://h/v1?key=s3cr3t%2F%26%3D%2B+x%27");
    expect(redact(`GET ${query.href}: bad key`)).toBe("GET https://h/v1?key=***: bad key");
    // ${KEY} in a URL template: the parser encodes what a path or a query string may not hold.
    const path = new URL(`https://h/v1/${secret}/items`).href;
    expect(path).toBe("https://h/v1/s3cr3t/&=+%20x'/items");
    expect(redact(path)).toBe("https://h/v1/***/items");
    expect(redact(new URL(`https://h/v1?key=${secret}`).href)).toBe("https://h/v1?key=***");
  });

  test("removes a secret written into a URL's userinfo, which encodes \";\" but leaves \"$\"", () => {
    const secret = "pa$s;x";
    const url = new URL(`https://bob:${secret}@h/v1`).href;
    expect(url).toBe("https://bob:pa$s%3Bx@h/v1");
    expect(makeRedactor([secret])(`GET ${url} failed`)).toBe("GET https://bob:***@h/v1 failed");
  });

  test.each([
    ["as JSON.stringify writes it", 'pa\\"ss\\\\wörd\\n😀/'],
    ["with every non-ASCII character escaped, as Python's json.dumps does", 'pa\\"ss\\\\w\\u00f6rd\\n\\ud83d\\ude00/'],
    ["with upper-case hex escapes", 'pa\\"ss\\\\w\\u00F6rd\\n\\uD83D\\uDE00/'],
    ["with / escaped, as PHP's json_encode does", 'pa\\"ss\\\\w\\u00f6rd\\n\\ud83d\\ude00\\/'],
  ])("removes a secret a server echoes back inside JSON, %s", (_how, spelled) => {
    const secret = 'pa"ss\\wörd\n😀/';
    expect(makeRedactor([secret])(`HTTP 422: {"password":"${spelled}","user":"me"}`)).toBe('HTTP 422: {"password":"***","user":"me"}');
  });

  test.each(["pw\\", 'p"w', "two\nlines"])("removes the whole JSON escape of a secret %p, leaving no half escape behind", (secret) => {
    const json = JSON.stringify({ password: secret, user: "me" });
    expect(makeRedactor([secret])(`HTTP 422: ${json}`)).toBe('HTTP 422: {"password":"***","user":"me"}');
  });
});
