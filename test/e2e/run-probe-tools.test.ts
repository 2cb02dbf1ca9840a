import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { copyOf, INITIAL_HARNESS, ROOT, tempDir } from "../helpers/fixtures.ts";

describe("hone run with a package whose tools cannot drive a discovery task", () => {
  it("a QA harness (calculator, final_answer) on circle packing is exit 3 naming the missing tools, with no folder", async () => {
    // It ran 12 model calls that could neither edit nor evaluate the program, then said "done", exit 0.
    const parent = tempDir();
    const harness = join(ROOT, "harnesses", "qa");
    const r = await hone([
      "run",
      "--harness",
      harness,
      "--task",
      "circle-packing",
      "--model",
      "offline",
      "--max-evals",
      "3",
      "--out",
      join(parent, "run"),
    ]);
    expect(r.stderr).toContain(`${join(harness, "agent.yaml")} (tools): has no edit_program and no evaluate_program`);
    expect(r.code).toBe(3);
    expect(readdirSync(parent)).toEqual([]);
  });

  it("an --out inside the package is exit 2 and leaves the package as it was", async () => {
    // The run folder was written into the package, and the run's own copy of it held the half-built run (`.run1.partial`).
    const harness = copyOf(INITIAL_HARNESS);
    const before = readdirSync(harness).sort();
    const r = await hone([
      "run",
      "--harness",
      harness,
      "--task",
      "circle-packing",
      "--model",
      "offline",
      "--max-evals",
      "2",
      "--out",
      join(harness, "run1"),
    ]);
    expect(r.stderr).toContain(`${join(harness, "run1")} is inside the harness package ${harness}`);
    expect(r.code).toBe(2);
    expect(readdirSync(harness).sort()).toEqual(before);
  });
});
