import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { writeScaffold } from "../../src/init/scaffold-io.ts";
import { TEMPLATES } from "../../src/init/templates.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";

afterAll(cleanupTemps);

describe("writing the scaffold", () => {
  test("creates .ai/tools/ and every example, scripts executable", () => {
    const root = makeTemp("kiwi-init-");
    const result = writeScaffold(root);
    expect(result.created).toEqual([".ai/tools/", ...TEMPLATES.map((t) => t.path)]);
    for (const t of TEMPLATES) {
      expect(readFileSync(join(root, t.path), "utf8")).toBe(t.content);
      expect(statSync(join(root, t.path)).mode & 0o777).toBe(t.mode);
    }
  });

  test("adds only what is missing and never touches what is there", () => {
    const root = makeTemp("kiwi-init-");
    writeTree(root, {
      ".ai/tools/greet.sh": "my own greet.sh\n",
      ".ai/tools/mine/tool.yaml": "tool_id: word_count\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { method: GET, url: https://x.test/ }\n",
    });
    const result = writeScaffold(root);
    expect(result.created).toEqual([".ai/tools/weather_forecast.yaml", ".ai/tools/everything.yaml", ".ai/tools/everything_echo.yaml"]);
    expect(result.skip).toEqual([
      { path: ".ai/tools/word_count.py", reason: 'the tool id "word_count" is already defined by .ai/tools/mine/tool.yaml', kept: false },
      { path: ".ai/tools/greet.sh", reason: "already exists", kept: true },
    ]);
    expect(readFileSync(join(root, ".ai/tools/greet.sh"), "utf8")).toBe("my own greet.sh\n");
  });

  test("treats a dangling symbolic link as taken", () => {
    const root = makeTemp("kiwi-init-");
    writeTree(root, { ".ai/tools/.keep": "" });
    symlinkSync("/nonexistent/target", join(root, ".ai/tools/greet.sh"));
    expect(writeScaffold(root).skip).toEqual([{ path: ".ai/tools/greet.sh", reason: "already exists", kept: true }]);
  });

  test("is a no-op the second time", () => {
    const root = makeTemp("kiwi-init-");
    writeScaffold(root);
    const again = writeScaffold(root);
    expect([again.created, again.skip.length]).toEqual([[], TEMPLATES.length]);
  });

  test("scaffolds the given folder even inside another project", () => {
    const outer = makeTemp("kiwi-outer-");
    writeTree(outer, { ".ai/tools/greet.sh": "outer\n" });
    const inner = join(outer, "inner");
    expect(writeScaffold(inner).created).toContain(".ai/tools/greet.sh");
  });
});
