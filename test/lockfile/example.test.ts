// tool.lock.example.json is a real lockfile of the demo tree (scripts/gen-lock-example.ts): it
// passes the published JSON Schema and kiwi's own parser, its tools are what locking the demo
// scaffold gives today, and its MCP pin re-derives its own hashes. No network needed.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parsePin } from "../../src/mcp/pin.ts";
import { parseLockfile } from "../../src/lockfile/parse.ts";
import { renderLockfile } from "../../src/lockfile/render.ts";
import type { CanonicalValue } from "../../src/integrity/value.ts";
import { EXAMPLE_PATH, lockScaffold } from "../../scripts/gen-lock-example.ts";

const SCHEMA = join(import.meta.dir, "..", "..", "schemas", "lockfile.schema.json");
const text = readFileSync(EXAMPLE_PATH, "utf8");

describe("tool.lock.example.json", () => {
  test("passes schemas/lockfile.schema.json", () => {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA, "utf8")));
    const ok = validate(JSON.parse(text));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  test("is exactly what kiwi writes (parse, render: same bytes)", () => {
    expect(renderLockfile(parseLockfile(text))).toBe(text);
  });

  test('its tools are what locking the demo scaffold gives now (else run "bun run scripts/gen-lock-example.ts")', async () => {
    expect(parseLockfile(text).tools).toEqual(parseLockfile(await lockScaffold()).tools);
  });

  test("its MCP pins are real: each re-derives both of its hashes", () => {
    const pins = parseLockfile(text).mcp_servers;
    expect(Object.keys(pins)).toEqual(["everything"]);
    for (const [id, pin] of Object.entries(pins)) expect(parsePin(pin as unknown as CanonicalValue, id).interface_hash).toBe(pin.interface_hash);
  });

  test("the schema rejects what the parser rejects: an unknown algorithm", () => {
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA, "utf8")));
    const doc = JSON.parse(text);
    doc.tools.greet.integrity = "md5:d41d8cd98f00b204e9800998ecf8427e";
    expect(validate(doc)).toBe(false);
    expect(() => parseLockfile(JSON.stringify(doc))).toThrow(expect.objectContaining({ code: "E_LOCK_INVALID" }));
  });
});
