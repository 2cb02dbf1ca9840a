import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { sampleFromSchema } from "../../src/sandbox/self-test.ts";

// The self-test's arguments keep to a schema's upper bounds on lengths and item counts too: a tool that checks its
// arguments is not refused for "sample" being longer than its maxLength.

const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
const ajv = new Ajv({ strict: false });

const schemas: [string, Record<string, unknown>][] = [
  ["a short string", { type: "string", maxLength: 3 }],
  ["an empty string", { type: "string", maxLength: 0 }],
  ["a string of an exact length", { type: "string", minLength: 8, maxLength: 8 }],
  ["an array of at most 0 items", { type: "array", items: { type: "integer" }, maxItems: 0 }],
  ["an array of at most 2 of many", { type: "array", items: { type: "string", maxLength: 2 }, minItems: 1, maxItems: 2 }],
  ["an object with a short code", { type: "object", properties: { code: { type: "string", maxLength: 4 } }, required: ["code"] }],
];

describe("self-test arguments with upper bounds", () => {
  it.each(schemas)("satisfy the schema: %s", (_name, schema) => {
    const sample = sampleFromSchema(schema);
    expect(ajv.validate(schema, sample), `${JSON.stringify(sample)}: ${ajv.errorsText()}`).toBe(true);
  });

  it("keep what they were within the bounds", () => {
    expect(sampleFromSchema({ type: "string", maxLength: 3 })).toBe("sam");
    expect(sampleFromSchema({ type: "string", maxLength: 40 })).toBe("sample");
    expect(sampleFromSchema({ type: "array", items: { type: "integer" }, minItems: 3, maxItems: 5 })).toHaveLength(3);
  });
});
