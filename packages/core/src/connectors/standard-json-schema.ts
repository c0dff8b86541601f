/** The JSON Schema behind a tool's Standard Schema (zod, valibot…), for writing its TypeScript type. */

import { isPlainObject } from "./declaration-text.js";
import type { JsonSchema, StandardSchemaV1 } from "./define-connector.js";

/** The caller's own conversion (`DeclarationOptions.convertStandardSchema`); `undefined` to fall back. */
export type StandardSchemaConverter = (
  schema: StandardSchemaV1,
  direction: "input" | "output",
) => JsonSchema | undefined;

/** The JSON Schema of a tool's schema: itself, or a Standard Schema's conversion; `true` when it has none. */
export function jsonSchemaOf(
  schema: JsonSchema | StandardSchemaV1 | undefined,
  direction: "input" | "output",
  custom: StandardSchemaConverter | undefined,
): JsonSchema | boolean | undefined {
  if (schema === undefined) return undefined;
  if (!isStandardSchema(schema)) return schema;
  return convertStandardSchema(schema, direction, custom) ?? true;
}

function isStandardSchema(schema: JsonSchema | StandardSchemaV1): schema is StandardSchemaV1 {
  const standard: unknown = (schema as Record<string, unknown>)["~standard"];
  return typeof standard === "object" && standard !== null;
}

/**
 * The caller's converter, then Standard JSON Schema (`~standard.jsonSchema.input/output`, zod 4.2+
 * and others), then zod 4's `toJSONSchema` method. Libraries throw for what JSON Schema cannot
 * express (a zod date, a transform): then the next way is tried, and in the end the type is unknown.
 */
function convertStandardSchema(
  schema: StandardSchemaV1,
  direction: "input" | "output",
  custom: StandardSchemaConverter | undefined,
): JsonSchema | undefined {
  const standard = schema["~standard"] as { vendor: string; jsonSchema?: unknown };
  const attempts: (() => unknown)[] = [
    () => custom?.(schema, direction),
    () => {
      const converter = standard.jsonSchema as { input?: unknown; output?: unknown } | undefined;
      const convert = converter?.[direction];
      return typeof convert === "function" ? convert.call(converter, { target: "draft-2020-12" }) : undefined;
    },
    () => {
      const toJsonSchema: unknown = (schema as unknown as Record<string, unknown>).toJSONSchema;
      return standard.vendor === "zod" && typeof toJsonSchema === "function"
        ? toJsonSchema.call(schema, { io: direction })
        : undefined;
    },
  ];
  for (const attempt of attempts) {
    try {
      const converted = attempt();
      if (isPlainObject(converted)) return converted;
    } catch {
      // Try the next way.
    }
  }
  return undefined;
}
