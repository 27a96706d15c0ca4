// `kiwi hash json|integrity|tool`: canonical JSON and tool integrity over an input file (or stdin)
// or a tool read from disk. Input is parsed losslessly, so what is hashed is exactly what was written.
import type { Context } from "../context.ts";
import { formatDigest, hashCanonical } from "../integrity/digest.ts";
import { hashReferenceIntegrity } from "../integrity/tool.ts";
import { integrityText } from "../lockfile/build.ts";
import { checkIntegrityInput, parseHashInput } from "../lockfile/hash-inputs.ts";
import { type TreeTool, findTool, hashProjectTools } from "../lockfile/hash-tree-io.ts";
import { readInputText } from "../lockfile/input-io.ts";
import { readProject } from "../manifest/discover-io.ts";
import type { Tool } from "../manifest/model.ts";

/** A JSON document (a file, or `-` for stdin): its canonical text and sha256 digest. */
export async function hashJsonInput(ctx: Context, input: string | undefined): Promise<{ canonical: string; digest: string }> {
  const { text, subject } = await readInputText(input, ctx.cwd);
  const { canonical, hex } = hashCanonical(parseHashInput(text, subject));
  return { canonical, digest: formatDigest(hex) };
}

/** The integrity of a {tool_id, version, manifest, files} document (the vector input shape). */
export async function hashIntegrityInput(ctx: Context, input: string | undefined): Promise<{ canonical: string; integrity: string }> {
  const { text, subject } = await readInputText(input, ctx.cwd);
  const { canonical, hex } = hashReferenceIntegrity(checkIntegrityInput(parseHashInput(text, subject), subject));
  return { canonical, integrity: formatDigest(hex) };
}

/** One tool of the project (by id, manifest or folder), hashed from disk as `kiwi lock` hashes it. */
export function hashTool(ctx: Context, ref: string): { tool: Tool; hashed: TreeTool; canonical: string } {
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const tool = findTool(project, ref, ctx.cwd);
  const [hashed] = hashProjectTools({ ...project, tools: [tool] });
  return { tool, hashed: hashed!, canonical: integrityText(hashed!) };
}
