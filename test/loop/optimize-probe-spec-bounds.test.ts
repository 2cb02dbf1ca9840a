import { describe, expect, it } from "vitest";
import { SPEC_LIMITS, validateSpec } from "../../src/harness/spec.ts";

// Every text a HarnessSpec carries has a cap; what it adds as data must have one too: a new tool's input_schema goes
// to the executor with every model call, a new middleware's params into agent.yaml, and both into every later
// proposer prompt (describeHarness) once the candidate is promoted. Unbounded, one hostile proposal of a few
// hundred kilobytes passed the gate and bloated every later round.

const code = "async function run(ctx, args) { return 'ok'; }";
const tool = (input_schema: object) => ({ new_tools: [{ name: "probe_tool", description: "d", input_schema, code }] });
const middleware = (params: object) => ({
  new_middlewares: [{ name: "note_mw", code: "function beforeModel(view) { return {}; }", params }],
});

describe("a HarnessSpec's data within its limits", () => {
  it("refuses a new tool's input_schema over the cap, naming the field", () => {
    const big = { type: "object", properties: {}, description: "S".repeat(SPEC_LIMITS.json) };
    const v = validateSpec(tool(big));
    expect(v.spec).toBeUndefined();
    expect(v.problems).toEqual([
      { field: "new_tools.0.input_schema", message: expect.stringMatching(/at most 4000 characters/) },
    ]);
  });

  it("refuses a new middleware's params over the cap, however nested", () => {
    const nested = { rows: Array.from({ length: 1000 }, (_, i) => ({ i })) };
    const v = validateSpec(middleware(nested));
    expect(v.problems.map((p) => p.field)).toEqual(["new_middlewares.0.params"]);
  });

  it("refuses params nested past what JSON.stringify can walk, instead of throwing (a proposal ended the run)", () => {
    const deep = JSON.parse(`{"a": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`) as object;
    const v = validateSpec(middleware(deep));
    expect(v.problems.map((p) => p.field)).toEqual(["new_middlewares.0.params"]);
  });

  it("accepts ordinary schemas and params", () => {
    const schema = { type: "object", properties: { step: { type: "number", minimum: 0 } }, required: ["step"] };
    expect(validateSpec(tool(schema)).problems).toEqual([]);
    expect(validateSpec(middleware({ every: 3, text: "Check the overlaps first." })).spec?.new_middlewares?.[0]?.params).toEqual({
      every: 3,
      text: "Check the overlaps first.",
    });
    expect(
      validateSpec({ new_middlewares: [{ name: "bare_mw", code: "function beforeModel(v) { return {}; }" }] }).spec,
    ).toMatchObject({ new_middlewares: [{ params: {} }] });
  });
});
