// Which `kiwi exec` command lines bin.ts may replay from a launch memo: only the tool id with
// --sandbox, --param, --params and --json. Everything else goes to the CLI, which parses, checks and
// reports it (a misread line here would run a call the CLI would have refused).
import { describe, expect, test } from "bun:test";
import { rememberedCall } from "../../src/commands/exec-remembered.ts";

describe("the calls a replay takes", () => {
  test.each([
    [["t"], { toolId: "t", json: false, sources: { pairs: [] } }],
    [["t", "--sandbox=off"], { toolId: "t", sandbox: "off", json: false, sources: { pairs: [] } }],
    [["--sandbox", "auto", "t"], { toolId: "t", sandbox: "auto", json: false, sources: { pairs: [] } }],
    [["t", "--param", "a=1", "--param=b=x y"], { toolId: "t", json: false, sources: { pairs: ["a=1", "b=x y"] } }],
    [["t", "--params", '{"a":1}'], { toolId: "t", json: false, sources: { json: '{"a":1}', pairs: [] } }],
    [["t", "--params={}", "--param", "a=2"], { toolId: "t", json: false, sources: { json: "{}", pairs: ["a=2"] } }],
    [["--json", "t", "--param", "a=2"], { toolId: "t", json: true, sources: { pairs: ["a=2"] } }],
  ])("%j", (args, expected) => {
    expect(rememberedCall(args)).toEqual(expected);
  });
});

describe("the calls left to the CLI", () => {
  test.each([
    [[]],
    [["--sandbox=off"]],
    [["t", "u"]],
    [["t", "--"]],
    [["t", "--", "x"]],
    [["t", "--json=true"]],
    [["t", "--no-json"]],
    [["t", "--dry-run"]],
    [["t", "--unlocked"]],
    [["t", "--strict"]],
    [["t", "--allow-any-host"]],
    [["t", "--cwd", "/tmp"]],
    [["t", "--help"]],
    [["t", "-h"]],
    [["t", "--params", "-"]],
    [["t", "--params-file", "p.json"]],
    [["t", "--param"]],
    [["t", "--param", "--json"]],
    [["t", "--params", "{}", "--params", "{}"]],
    [["t", "--sandbox", "off", "--sandbox=auto"]],
    [["t", "--sandboxx=off"]],
    [["t", "--sandbox="]],
    [["t", "--param="]],
    [["t", "a=1"]],
  ])("%j", (args) => {
    expect(rememberedCall(args)).toBeUndefined();
  });
});
