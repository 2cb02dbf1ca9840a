import { describe, expect, it } from "vitest";
import { REQUIRED_TOOLS, validateSpec } from "../../../src/harness/spec.ts";
import { randomSpec, rangeOf, SPEC_SPACE, sampleNumber } from "../../../src/method/rules/random.ts";
import { rng } from "../../../src/rng.ts";

describe("random: the spec space comes from the HarnessSpec schema", () => {
  it("reads the schema's ranges", () => {
    expect(SPEC_SPACE.sampling.temperature).toEqual({ min: 0, max: 1.5, int: false });
    expect(SPEC_SPACE.sampling.top_k).toEqual({ min: -1, max: 200, int: true });
    expect(SPEC_SPACE.maxIterations).toEqual({ min: 8, max: 200, int: true });
    expect(SPEC_SPACE.middleware.stall_restart).toEqual({
      after_evaluations: { min: 1, max: 10_000, int: true },
      max_restarts: { min: 0, max: 1000, int: true },
    });
    expect(() => rangeOf("not a schema")).toThrow(/not a number schema/);
  });
  it("numbers stay in range: uniform integers hit both ends, log-uniform ones favour small values", () => {
    const r = rng(1);
    const small = Array.from({ length: 2000 }, () => sampleNumber({ min: 8, max: 10, int: true }, r));
    expect(new Set(small)).toEqual(new Set([8, 9, 10]));
    const wide = Array.from({ length: 2000 }, () => sampleNumber({ min: 1, max: 10_000, int: true }, r, true));
    expect(Math.min(...wide)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...wide)).toBeLessThanOrEqual(10_000);
    expect(wide.filter((x) => x <= 100).length).toBeGreaterThan(800); // ln(101)/ln(10001) ≈ 0.5 of the mass
    const f = Array.from({ length: 2000 }, () => sampleNumber({ min: 0, max: 1, int: false }, r));
    expect(f.every((x) => x > 0 && x <= 1)).toBe(true);
  });
});

describe("random: sampled specs", () => {
  it("500 seeds: every sample is a valid, non-empty change", () => {
    const tools = ["view_program", "edit_program", "evaluate_program", "finish", "probe", "grid_search"];
    for (let seed = 0; seed < 500; seed++) {
      const spec = randomSpec(rng(seed), { removableTools: tools, systemPrompts: ["Be bold.", "Be careful."] });
      expect(validateSpec(spec).problems).toEqual([]);
      const { rationale: _r, ...change } = spec;
      expect(Object.keys(change).length).toBeGreaterThan(0);
      for (const t of spec.remove_tools ?? []) expect(REQUIRED_TOOLS as readonly string[]).not.toContain(t);
      const lto = spec.middleware_params?.long_tool_output;
      if (lto) expect((lto.head_chars as number) + (lto.tail_chars as number)).toBeLessThan(lto.max_chars as number);
    }
  });
  it("covers every group over many seeds; without removable tools or prompts those groups never appear", () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 300; seed++) {
      for (const k of Object.keys(randomSpec(rng(seed), { removableTools: ["probe"], systemPrompts: ["p"] }))) seen.add(k);
      const bare = randomSpec(rng(seed));
      expect(bare.remove_tools).toBeUndefined();
      expect(bare.system_prompt).toBeUndefined();
    }
    expect([...seen].sort()).toEqual(["agent", "middleware_params", "rationale", "remove_tools", "sampling", "system_prompt"]);
  });
  it("the same seed gives the same spec; different seeds differ", () => {
    expect(randomSpec(rng(42))).toEqual(randomSpec(rng(42)));
    expect(randomSpec(rng(42))).not.toEqual(randomSpec(rng(43)));
  });
});
