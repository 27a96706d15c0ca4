// Builds real Tool values from manifest text (through the real parsers), for validator tests.
import { parseJsonLossless } from "../../src/integrity/json-lossless.ts";
import { computeLineStarts, lineColumn } from "../../src/integrity/json-lossless.ts";
import type { ManifestForm, Tool, ToolFile } from "../../src/manifest/model.ts";
import { normalizeManifest } from "../../src/manifest/normalize.ts";
import { parseYaml } from "../../src/manifest/yaml.ts";
import { yamlIgnoreDirectives } from "../../src/manifest/ignore-comments.ts";

export interface ToolOptions {
  file?: string;
  form?: ManifestForm;
  /** Tool files (paths relative to the tool root). */
  files?: string[];
  fallbackId?: string;
}

/** A Tool from YAML text, as discovery would build it (its ignore comments included). */
export function toolFromYaml(text: string, options: ToolOptions = {}): Tool {
  const parsed = parseYaml(text);
  const tool = build(parsed.value, parsed.locate, options);
  const ignores = yamlIgnoreDirectives(text);
  return ignores.length > 0 ? { ...tool, ignores } : tool;
}

/** A Tool from JSON text (magray tool.json or kiwi JSON). */
export function toolFromJson(text: string, options: ToolOptions = {}): Tool {
  const result = parseJsonLossless(text);
  const starts = computeLineStarts(text);
  const locate = (pointer: string) => {
    for (let p = pointer; ; p = p.slice(0, Math.max(0, p.lastIndexOf("/")))) {
      const offset = result.offsets.get(p);
      if (offset !== undefined) return lineColumn(starts, offset);
      if (p === "") return undefined;
    }
  };
  return build(result.value, locate, { file: ".ai/tools/t/tool.json", ...options });
}

function build(value: Parameters<typeof normalizeManifest>[0], locate: Tool["locate"], options: ToolOptions): Tool {
  const file = options.file ?? ".ai/tools/t/tool.yaml";
  const fields = normalizeManifest(value, options.fallbackId ?? "t");
  const root = file.slice(0, file.lastIndexOf("/"));
  const files: ToolFile[] = (options.files ?? []).map((path) => ({
    path,
    abs: `/project/${root}/${path}`,
    size: 1,
    mtimeMs: 0,
    ctimeMs: 0,
    ino: 0,
    isExecutable: false,
  }));
  const form = options.form ?? "directory";
  return {
    ...fields,
    // As discovery does: a script or Markdown file with embedded metadata is its own entry point.
    entrypoint: form === "script" || form === "markdown" ? (fields.entrypoint ?? file.slice(file.lastIndexOf("/") + 1)) : fields.entrypoint,
    form,
    root,
    rootAbs: `/project/${root}`,
    manifestFile: file,
    files,
    locate,
  };
}
