// Which `kiwi exec` command lines bin.ts may replay from a launch memo: only the tool id with
// --sandbox, --cwd, --json and the parameter flags (--param, --params, --params-file, '-' for
// stdin). Everything else goes to the CLI, which parses, checks and reports it (a misread line here
// would run a call the CLI would have refused).
import { describe, expect, test } from "bun:test";
import { rememberedCall } from "../../src/commands/exec-remembered.ts";

describe("the calls a replay takes", () => {
  test.each([
    [["t"], { toolId: "t", json: false, flags: { pairs: [] } }],
    [["t", "--sandbox=off"], { toolId: "t", sandbox: "off", json: false, flags: { pairs: [] } }],
    [["--sandbox", "auto", "t"], { toolId: "t", sandbox: "auto", json: false, flags: { pairs: [] } }],
    [["t", "--param", "a=1", "--param=b=x y"], { toolId: "t", json: false, flags: { pairs: ["a=1", "b=x y"] } }],
    [["t", "--params", '{"a":1}'], { toolId: "t", json: false, flags: { params: '{"a":1}', pairs: [] } }],
    [["t", "--params={}", "--param", "a=2"], { toolId: "t", json: false, flags: { params: "{}", pairs: ["a=2"] } }],
    [["--json", "t", "--param", "a=2"], { toolId: "t", json: true, flags: { pairs: ["a=2"] } }],
    [["t", "--params", "-"], { toolId: "t", json: false, flags: { params: "-", pairs: [] } }],
    [["t", "--params-file", "p.json"], { toolId: "t", json: false, flags: { paramsFile: "p.json", pairs: [] } }],
    [["t", "--params-file=-", "--param", "a=1"], { toolId: "t", json: false, flags: { paramsFile: "-", pairs: ["a=1"] } }],
    [["--cwd", "/tmp", "t"], { toolId: "t", cwd: "/tmp", json: false, flags: { pairs: [] } }],
    [["t", "--cwd=sub", "--sandbox", "off", "--json"], { toolId: "t", sandbox: "off", cwd: "sub", json: true, flags: { pairs: [] } }],
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
    [["t", "--cwd"]],
    [["t", "--cwd="]],
    [["t", "--cwd", "-"]],
    [["t", "--cwd", "a", "--cwd", "b"]],
    [["t", "--project", "a"]],
    [["t", "--help"]],
    [["t", "-h"]],
    [["t", "--params-file"]],
    [["t", "--params-file", "-x"]],
    [["t", "--params-file", "a", "--params-file", "b"]],
    [["t", "--param", "-"]],
    [["t", "--sandbox", "-"]],
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
