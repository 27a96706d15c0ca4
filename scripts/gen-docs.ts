// Rewrites the generated reference tables in README.md from the code's tables (src/ui/docs.ts).
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderDocBlocks } from "../src/ui/docs.ts";

const path = join(import.meta.dir, "..", "README.md");
const before = readFileSync(path, "utf8");
const after = renderDocBlocks(before);
if (after !== before) {
  writeFileSync(`${path}.tmp`, after);
  renameSync(`${path}.tmp`, path);
  process.stderr.write("README.md tables updated\n");
}
