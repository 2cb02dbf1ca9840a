import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { editorSchemas } from "../../src/schemas.ts";
import { INITIAL_HARNESS, ROOT } from "../helpers/fixtures.ts";

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
