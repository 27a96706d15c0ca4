// normalizeManifest maps magray's permissions onto kiwi capabilities.
import { describe, expect, test } from "bun:test";
import { normalizeManifest } from "../../src/manifest/normalize.ts";

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
