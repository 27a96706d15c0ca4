// Writes schemas/*.schema.json from the TypeBox table in src/schema/index.ts (stable bytes:
// 2-space indent, trailing newline). `bun run scripts/gen-schemas.ts --check` exits 1 on drift.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PUBLISHED_SCHEMAS, renderPublishedSchema } from "../src/schema/index.ts";

const dir = join(import.meta.dir, "..", "schemas");
const check = process.argv.includes("--check");
let drift = 0;
mkdirSync(dir, { recursive: true });
for (const entry of PUBLISHED_SCHEMAS) {
  const path = join(dir, entry.file);
  const text = renderPublishedSchema(entry);
  let current: string | undefined;
  try {
    current = readFileSync(path, "utf8");
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  if (check) {
    process.stderr.write(`schemas/${entry.file} is out of date; run "bun run schemas"\n`);
    drift++;
  } else {
    writeFileSync(path, text);
    process.stderr.write(`wrote schemas/${entry.file}\n`);
  }
}
process.exit(drift ? 1 : 0);
