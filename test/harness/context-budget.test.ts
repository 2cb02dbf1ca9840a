import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applySpec } from "../../src/harness/compile.ts";
import { loadHarness } from "../../src/harness/package.ts";
import { validateSpec } from "../../src/harness/spec.ts";
import { copyOf, edit, INITIAL_HARNESS, tempDir } from "../helpers/fixtures.ts";

/** hone:context_budget's parameters are part of the harness: validated on load, tunable by a HarnessSpec. */
function withBudget(params: string): string {
  const dir = copyOf(INITIAL_HARNESS);
  edit(join(dir, "agent.yaml"), (t) =>
    t.replace("stop_tools: [finish]", `  - import: hone:context_budget\n    params:\n${params}\nstop_tools: [finish]`),
  );
  return dir;
}

describe("hone:context_budget in a package", () => {
  it("loads with its defaults filled in", () => {
    const h = loadHarness(withBudget("      context_window: 8192"));
    expect(h.middlewares.find((m) => m.name === "context_budget")?.params).toEqual({
      context_window: 8192,
      fill_ratio: 0.8,
      keep_recent_turns: 3,
      strategy: "summarize",
      keep_chars: 400,
    });
  });
  it("refuses an out-of-range or unknown parameter, naming the file and field", () => {
    expect(() => loadHarness(withBudget("      fill_ratio: 2"))).toThrow(/agent\.yaml.*fill_ratio/s);
    expect(() => loadHarness(withBudget("      strategy: forget"))).toThrow(/strategy/);
    expect(() => loadHarness(withBudget("      window: 8192"))).toThrow(/window/);
  });
  it("is tunable by a proposer's spec, and a bad value is refused", () => {
    const base = withBudget("      keep_recent_turns: 3");
    const { spec } = validateSpec({ middleware_params: { context_budget: { keep_recent_turns: 6, strategy: "truncate" } } });
    const out = join(tempDir(), "cand");
    applySpec(base, spec ?? {}, out);
    expect(loadHarness(out).middlewares.find((m) => m.name === "context_budget")?.params).toMatchObject({
      keep_recent_turns: 6,
      strategy: "truncate",
    });
    expect(validateSpec({ middleware_params: { context_budget: { fill_ratio: 0.99 } } }).problems[0]?.field).toBe(
      "middleware_params.context_budget.fill_ratio",
    );
  });
  it("takes reasoning_effort, parallel_tool_calls and stream in llm_config into the sampling it sends", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) =>
      t.replace(
        "  max_tokens: 4096",
        "  max_tokens: 4096\n  reasoning_effort: low\n  parallel_tool_calls: false\n  stream: true",
      ),
    );
    expect(loadHarness(dir).sampling).toMatchObject({ reasoning_effort: "low", parallel_tool_calls: false, stream: true });
    edit(join(dir, "agent.yaml"), (t) => t.replace("reasoning_effort: low", "reasoning_effort: extreme"));
    expect(() => loadHarness(dir)).toThrow(/reasoning_effort/);
  });
});
