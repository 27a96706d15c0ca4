// TypeBox schemas of the two manifest dialects: kiwi's tool.yaml (also single-file, embedded and
// front-matter manifests) and magray's tool.json. Pure. They generate schemas/*.schema.json for
// editors, and `kiwi check` judges every manifest's shape against them.
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { PARAMETER_FORMATS, PARAMETER_NAME, PARAMETER_TYPES } from "./parameter-fields.ts";
import { MAGRAY_CAPABILITY_WORDS, SEMVER_PATTERN, TOOL_ID_PATTERN, TOOL_TYPES } from "./vocabulary.ts";

const AnyObject = Type.Object({}, { additionalProperties: true });
const JsonSchemaValue = Type.Union([AnyObject, Type.Boolean()], { description: "a JSON Schema (2020-12, or draft-07 when $schema says so)" });

const lit = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

/** One entry of a `parameters` list. */
export const ParameterSchema = Type.Object(
  {
    name: Type.String({ pattern: PARAMETER_NAME.source }),
    type: lit(PARAMETER_TYPES),
    required: Type.Optional(Type.Boolean()),
    default: Type.Optional(Type.Unknown()),
    enum: Type.Optional(Type.Array(Type.Unknown(), { minItems: 1 })),
    description: Type.Optional(Type.String()),
    minLength: Type.Optional(Type.Integer({ minimum: 0 })),
    maxLength: Type.Optional(Type.Integer({ minimum: 0 })),
    pattern: Type.Optional(Type.String()),
    format: Type.Optional(lit(PARAMETER_FORMATS)),
    minimum: Type.Optional(Type.Number()),
    maximum: Type.Optional(Type.Number()),
    exclusiveMinimum: Type.Optional(Type.Number()),
    exclusiveMaximum: Type.Optional(Type.Number()),
    minItems: Type.Optional(Type.Integer({ minimum: 0 })),
    maxItems: Type.Optional(Type.Integer({ minimum: 0 })),
    non_empty: Type.Optional(Type.Boolean()),
    nonEmpty: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** `validation.child_schemas`: the first entry whose `match` equals the child's values judges it. */
export const ChildSchemaEntrySchema = Type.Object(
  {
    match: Type.Record(Type.String(), Type.Unknown(), { description: "fields of the child's manifest and the values they must equal" }),
    schema: JsonSchemaValue,
  },
  { additionalProperties: false },
);

/** A `requires` entry: a capability or package name, or `{capability: [paths or hosts]}`. */
const RequirementSchema = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]), { minProperties: 1, maxProperties: 1 }),
]);

export const LimitsSchema = Type.Object(
  {
    memory_mb: Type.Optional(Type.Integer()),
    timeout_ms: Type.Optional(Type.Integer()),
    cpu_seconds: Type.Optional(Type.Number()),
    open_files: Type.Optional(Type.Integer()),
    processes: Type.Optional(Type.Integer()),
    output_bytes: Type.Optional(Type.Integer()),
    fuel: Type.Optional(Type.Integer({ description: "WebAssembly tools: function entries, loop iterations and returns the module may execute" })),
  },
  { additionalProperties: false },
);

/** kiwi's manifest: tool.yaml / tool.json / `<name>.yaml` / embedded script metadata / front matter. */
export const KiwiManifestSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    tool_id: Type.Optional(Type.String({ pattern: TOOL_ID_PATTERN, description: "defaults to the file or folder name" })),
    tool_type: lit(TOOL_TYPES),
    version: Type.String({ pattern: SEMVER_PATTERN }),
    executor: Type.Optional(Type.Union([Type.String({ description: "tool id, optionally @semver-range: python_runtime@^1.4" }), Type.Null()])),
    executor_id: Type.Optional(
      Type.String({ description: "rye-os spelling of executor (read when executor is absent): @subprocess, tool:<path under .ai/tools>, or that path; such a tool without tool_id takes its id from its path" }),
    ),
    description: Type.Optional(Type.String()),
    category: Type.Optional(Type.String()),
    tags: Type.Optional(Type.Array(Type.String())),
    metadata: Type.Optional(AnyObject),
    config: Type.Optional(AnyObject),
    config_schema: Type.Optional(JsonSchemaValue),
    env_config: Type.Optional(Type.Object({}, { additionalProperties: true, description: "kiwi_mcp's ENV_CONFIG (how a runtime finds its interpreter): read and hashed, not acted on; config.command and config.env say what kiwi runs" })),
    parameters: Type.Optional(
      Type.Union([
        Type.Array(ParameterSchema),
        Type.String({ minLength: 1, description: "a file beside the manifest (in the tool's folder) holding the parameters list, or a JSON Schema with properties (YAML or JSON)" }),
      ]),
    ),
    validation: Type.Optional(Type.Object({ child_schemas: Type.Optional(Type.Array(ChildSchemaEntrySchema)) }, { additionalProperties: false })),
    requires: Type.Optional(Type.Array(RequirementSchema)),
    allow_scripts: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "packages that may run code at kiwi install: npm install scripts, pip source builds (npm:<name>, pypi:<name>, or a name in the runtime's ecosystem)" })),
    limits: Type.Optional(LimitsSchema),
    entrypoint: Type.Optional(Type.String({ minLength: 1, description: "kiwi_mcp spelling of config.entrypoint (read when config.entrypoint is absent)" })),
    language: Type.Optional(Type.String({ minLength: 1, description: "the script's language (python, bash, javascript, typescript, ...); must agree with the entry point's extension" })),
    manifest: Type.Optional(
      Type.Object(
        {
          language: Type.Optional(Type.String({ minLength: 1 })),
          entrypoint: Type.Optional(Type.String({ minLength: 1 })),
          requires: Type.Optional(Type.Array(Type.String(), { description: "package requirements (pandas>=2.0), as kiwi_mcp's script manifests list them" })),
        },
        { additionalProperties: true, description: "kiwi_mcp's script manifest section: language, entrypoint, requires" },
      ),
    ),
  },
  { additionalProperties: false },
);


/** magray's tool.json, recognised by its shape. */
export const MagrayManifestSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    name: Type.String({ pattern: TOOL_ID_PATTERN }),
    version: Type.String({ pattern: SEMVER_PATTERN }),
    description: Type.Optional(Type.String()),
    type: lit(["wasm", "native", "script"] as const),
    capabilities: Type.Optional(Type.Array(lit(MAGRAY_CAPABILITY_WORDS))),
    entry_point: Type.String({ minLength: 1 }),
    runtime_config: Type.Optional(
      Type.Object(
        {
          max_memory_mb: Type.Optional(Type.Integer()),
          max_execution_time_ms: Type.Optional(Type.Integer()),
          fuel_limit: Type.Optional(Type.Integer()),
        },
        { additionalProperties: false },
      ),
    ),
    permissions: Type.Optional(
      Type.Object(
        {
          // null means "none" (magray's own published example writes `"network": null`).
          filesystem: Type.Optional(Type.Union([Type.Array(lit(["read", "write"] as const)), Type.Object({ read: Type.Optional(Type.Array(Type.String())), write: Type.Optional(Type.Array(Type.String())) }, { additionalProperties: false }), Type.Null()])),
          network: Type.Optional(Type.Union([Type.Array(lit(["outbound", "inbound"] as const)), Type.Object({ hosts: Type.Optional(Type.Array(Type.String())), allowed_hosts: Type.Optional(Type.Array(Type.String())) }, { additionalProperties: false }), Type.Null()])),
          shell: Type.Optional(Type.Union([Type.Array(lit(["execute"] as const)), Type.Null()])),
          environment: Type.Optional(Type.Union([Type.Array(Type.String()), AnyObject, Type.Null()])),
          process: Type.Optional(Type.Union([Type.Array(Type.String()), AnyObject, Type.Null()])),
        },
        { additionalProperties: false },
      ),
    ),
    metadata: Type.Optional(
      Type.Object(
        {
          author: Type.Optional(Type.String()),
          license: Type.Optional(Type.String()),
          repository: Type.Optional(Type.String()),
          homepage: Type.Optional(Type.String()),
          documentation: Type.Optional(Type.String()),
        },
        { additionalProperties: true },
      ),
    ),
    config: Type.Optional(AnyObject),
    capability_spec: Type.Optional(AnyObject),
  },
  { additionalProperties: false },
);

export type KiwiManifest = Static<typeof KiwiManifestSchema>;
export type MagrayManifest = Static<typeof MagrayManifestSchema>;


/** The schema of a dialect. */
export function manifestSchemaOf(dialect: "kiwi" | "magray"): TSchema {
  return dialect === "kiwi" ? KiwiManifestSchema : MagrayManifestSchema;
}
