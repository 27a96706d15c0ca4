// The words of a parameter declaration in kiwi's manifest format: its types, string formats and
// name pattern. schema/manifest.ts builds the TypeBox schema from them; validate/parameters.ts and
// validate/check-value.ts judge declarations and values by them. Pure, and imports nothing, so
// exec's value checker loads nothing more for it.

/** Parameter types, as JSON Schema names them. */
export const PARAMETER_TYPES = ["string", "integer", "number", "boolean", "array", "object"] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

/** String formats a parameter may declare (checked as ajv-formats checks them). */
export const PARAMETER_FORMATS = ["uuid", "email", "uri", "date-time"] as const;

/** A parameter name: what can be a JSON key and a `{placeholder}` (exec/template.ts) alike. */
export const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
