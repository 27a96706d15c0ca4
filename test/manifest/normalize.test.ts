// normalizeManifest maps magray's permissions onto kiwi capabilities.
import { describe, expect, test } from "bun:test";
import { normalizeManifest, pathToolId, ryeExecutorRef } from "../../src/manifest/normalize.ts";

const magray = (capabilities: string[], permissions: Record<string, unknown>) =>
  normalizeManifest({ name: "t", version: "1.0.0", type: "wasm", entry_point: "t.wasm", capabilities, permissions } as never, "t");

describe("magray permission groups", () => {
  test("a null group grants nothing for its capability word", () => {
    const tool = magray(["filesystem", "network", "shell"], { filesystem: ["read"], network: null, shell: null });
    expect(tool.capabilities?.map((c) => c.name)).toEqual(["fs.read"]);
  });

  test("a listed group still grants its capability", () => {
    const tool = magray(["network", "shell"], { network: { hosts: ["api.example.com"] }, shell: ["execute"] });
    expect(tool.capabilities?.map((c) => [c.name, c.hosts])).toEqual([["net.outbound", ["api.example.com"]], ["shell.execute", undefined]]);
  });
});

describe("rye-os manifests", () => {
  test.each([
    ["ryeos/core/bundle/sign", "ryeos-core-bundle-sign"],
    ["rye/core/runtimes/Python.Runtime", "rye-core-runtimes-python_runtime"],
  ])("path %p is the id %p", (path, id) => {
    expect(pathToolId(path)).toBe(id);
  });

  test.each([
    ["@subprocess", "subprocess"],
    ["tool:ryeos/development/authoring-environment-production/runtime", "ryeos-development-authoring-environment-production-runtime"],
    ["rye/core/runtimes/python_runtime", "rye-core-runtimes-python_runtime"],
    ["python_runtime", "python_runtime"],
  ])("executor_id %p names %p", (raw, id) => {
    expect(ryeExecutorRef(raw)).toEqual({ id, range: null, raw });
  });

  test("a manifest with executor_id and no tool_id takes its id from its path; with tool_id, kiwi's rules hold", () => {
    const doc = { version: "1.0.0", executor_id: "@subprocess" };
    expect(normalizeManifest(doc as never, "sign", "ryeos/core/bundle/sign").id).toBe("ryeos-core-bundle-sign");
    expect(normalizeManifest({ ...doc, tool_id: "mine" } as never, "sign", "ryeos/core/bundle/sign")).toMatchObject({ id: "mine", executor: { id: "subprocess" } });
    expect(normalizeManifest({ version: "1.0.0", executor: "subprocess" } as never, "sign", "ryeos/core/bundle/sign").id).toBe("sign");
  });
});
