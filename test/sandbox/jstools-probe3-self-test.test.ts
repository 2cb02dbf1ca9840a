import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../../src/harness/types.ts";
import { gate } from "../../src/sandbox/gate.ts";
import { sampleFromSchema, selfTest, selfTestHost } from "../../src/sandbox/self-test.ts";

// The self-test calls a tool with arguments made from its schema: they must satisfy the schema, or a tool that
// checks its arguments (as a careful one does) is refused for a fault of the self-test. Ordinary code the gate
// should pass, and the self-test's own stageEdit, are checked here too.

const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
const ajv = new Ajv({ strict: false });

const schemas: [string, Record<string, unknown>][] = [
  ["a number with only a maximum", { type: "number", maximum: 0.5 }],
  ["a number with exclusive bounds", { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 }],
  ["a number with an exclusive minimum", { type: "number", exclusiveMinimum: 1 }],
  ["a negative integer range", { type: "integer", minimum: -10, maximum: -1 }],
  ["an integer below an exclusive maximum", { type: "integer", exclusiveMaximum: 1 }],
  ["an integer of at least 0", { type: "integer", minimum: 0, maximum: 0 }],
  ["a string with a minimum length", { type: "string", minLength: 12 }],
  ["a nullable string", { type: ["null", "string"], minLength: 3 }],
  ["anyOf", { anyOf: [{ type: "integer", maximum: 0 }, { type: "string" }] }],
  ["an array with a minimum of items", { type: "array", items: { type: "integer", maximum: 3, minimum: 3 }, minItems: 3 }],
  [
    "an object of bounded fields",
    {
      type: "object",
      properties: { temperature: { type: "number", maximum: 0.5 }, offset: { type: "integer", maximum: -2 } },
      required: ["temperature", "offset"],
    },
  ],
];

const tool = (source: string, inputSchema: Record<string, unknown>): ToolSpec => ({
  name: "bounded_tool",
  description: "d",
  inputSchema,
  kind: "custom",
  file: "custom_tools/bounded_tool.js",
  source,
});

describe("self-test arguments", () => {
  it.each(schemas)("satisfy the schema: %s", (_name, schema) => {
    const sample = sampleFromSchema(schema);
    expect(ajv.validate(schema, sample), `${JSON.stringify(sample)}: ${ajv.errorsText()}`).toBe(true);
  });

  it("keep what they did: the minimum, 1 for an unbounded integer, the first enum value, a default", () => {
    expect(
      sampleFromSchema({
        type: "object",
        properties: {
          n: { type: "integer", minimum: 2 },
          k: { type: "integer" },
          x: { type: "number" },
          e: { enum: ["a", "b"] },
          d: { type: "integer", maximum: 0, default: 5 },
        },
        required: ["n", "k", "x", "e", "d"],
      }),
    ).toEqual({ n: 2, k: 1, x: 1, e: "a", d: 5 });
  });

  it("a tool that checks its argument's range passes the self-test", async () => {
    const source =
      "function run(ctx, args) { if (!(args.temperature <= 0.5)) throw new RangeError('temperature must be at most 0.5'); return 'ok'; }";
    const schema = { type: "object", properties: { temperature: { type: "number", maximum: 0.5 } }, required: ["temperature"] };
    expect(gate(source, "tool")).toEqual([]);
    expect(await selfTest([tool(source, schema)], [])).toEqual([]);
  });
});

describe("the self-test's ctx.stageEdit", () => {
  it("puts a block holding $& or $' in as it is", () => {
    const host = selfTestHost();
    const block = "x = '$&' + \"$'\" + '$1$2'";
    expect(JSON.parse(host.stage(JSON.stringify({ block })))).toEqual({ ok: true });
    expect(host.program()).toContain(`# EVOLVE-BLOCK-START\n${block}\n# EVOLVE-BLOCK-END`);
  });

  it("so a tool that checks its own staged edit passes", async () => {
    const source =
      "function run(ctx, args) { const block = 'S = \"$&\"'; ctx.stageEdit({ block }); if (!ctx.program.includes(block)) throw new Error('edit lost'); return 'ok'; }";
    expect(await selfTest([tool(source, { type: "object" })], [])).toEqual([]);
  });
});

describe("gate: ordinary code passes", () => {
  it("handles Promise.any's AggregateError", () => {
    const source =
      "async function run(ctx) { try { return await Promise.any([ctx.probe(), ctx.probe()]); } catch (e) { if (e instanceof AggregateError) return e.errors.length; throw e; } }";
    expect(gate(source, "tool")).toEqual([]);
  });
});

describe("self-test arguments from a schema that refers to itself", () => {
  it("stop instead of recursing without end", () => {
    const schema: Record<string, unknown> = { type: "object", required: ["x"], properties: {} };
    const loop: Record<string, unknown> = {};
    loop.anyOf = [loop];
    (schema.properties as Record<string, unknown>).x = loop;
    expect(sampleFromSchema(schema)).toEqual({ x: null });
  });
});
