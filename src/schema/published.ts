// The table of kiwi's published schemas (schemas/*.schema.json) and their JSON text; scripts/gen-schemas.ts
// writes them and test/schema/schemas.test.ts fails when the committed copies drift.
import type { TSchema } from "@sinclair/typebox";
import { LockfileSchema } from "./lockfile.ts";
import { KiwiManifestSchema, MagrayManifestSchema } from "./manifest.ts";

export interface PublishedSchema {
  /** File name under schemas/. */
  file: string;
  title: string;
  description: string;
  schema: TSchema;
}

/** Every schema scripts/gen-schemas.ts writes; add a format here and it is generated and drift-tested. */
export const PUBLISHED_SCHEMAS: readonly PublishedSchema[] = [
  { file: "tool.schema.json", title: "kiwi tool manifest", description: "tool.yaml / tool.json / <name>.yaml, embedded script metadata and Markdown front matter", schema: KiwiManifestSchema },
  { file: "magray-tool.schema.json", title: "magray tool.json", description: "magray-style tool.json, read by kiwi as a first-class dialect", schema: MagrayManifestSchema },
  { file: "lockfile.schema.json", title: "kiwi lockfile", description: "tool.lock.json", schema: LockfileSchema },
];

/** The JSON text of a published schema: 2020-12 header, keys in TypeBox's order, 2-space indent, trailing newline. */
export function renderPublishedSchema(entry: PublishedSchema): string {
  const body = JSON.parse(JSON.stringify(entry.schema)) as Record<string, unknown>;
  const doc = { $schema: "https://json-schema.org/draft/2020-12/schema", title: entry.title, description: entry.description, ...body };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
