import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { draft07CheckSource } from "../../scripts/json-schema-check.ts";
import { schemaError } from "../../src/sandbox/check.ts";
import { editorSchemas } from "../../src/schemas.ts";
import { INITIAL_HARNESS, ROOT } from "../helpers/fixtures.ts";

describe("the draft-07 check of tool input schemas", () => {
  it("is current with ajv (run `npm run schema`)", () => {
    expect(readFileSync(join(ROOT, "src", "sandbox", "draft07-check.generated.ts"), "utf8")).toBe(draft07CheckSource());
  });
  it("says what ajv says of each schema, and names a meta-schema it does not know", () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const schemas = [
      { type: "object", properties: { a: { type: "string", enum: ["x"] } } },
      { type: "strnig" },
      { type: "object", properties: { a: { minimum: "5" } }, required: "x" },
      { $schema: "http://json-schema.org/draft-07/schema#", type: 5, items: [1] },
    ];
    for (const schema of schemas)
      expect(schemaError(schema)).toBe(ajv.validateSchema(schema) ? undefined : ajv.errorsText(ajv.errors));
    expect(schemaError({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" })).toMatch(
      /is not a meta-schema hone knows/,
    );
  });
});

describe("editor JSON Schemas", () => {
  it("are up to date with the zod schemas (run `npm run schema`)", () => {
    for (const [name, schema] of Object.entries(editorSchemas())) {
      expect(JSON.parse(readFileSync(join(ROOT, "schemas", name), "utf8"))).toEqual(JSON.parse(JSON.stringify(schema)));
    }
  });
  it("accept the initial harness and refuse an unknown key", () => {
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(editorSchemas()["agent.schema.json"] as object);
    const agent = parse(readFileSync(join(INITIAL_HARNESS, "agent.yaml"), "utf8"));
    expect(validate(agent)).toBe(true);
    expect(validate({ ...agent, bogus: 1 })).toBe(false);
  });
});
