import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runHarness } from "../../src/loop/run.ts";
import { hone } from "../helpers/cli.ts";
import { INITIAL_HARNESS, tempDir } from "../helpers/fixtures.ts";

describe("hone run refuses a budget or seed that is no number it can use, before anything starts", () => {
  it.each([
    [["--max-evals", "abc"], /--max-evals abc \(maxEvals\): a whole number from 1 to 10000/], // ran unbounded (budget NaN)
    [["--max-evals", "-1"], /--max-evals -1 \(maxEvals\): a whole number from 1 to 10000/],
    [["--max-evals", "1.5"], /--max-evals 1\.5 \(maxEvals\): a whole number/],
    [["--time-limit", "abc"], /--time-limit abc \(timeLimitSec\): a number of seconds above 0/], // stopped at once
    [["--time-limit", "0"], /--time-limit 0 \(timeLimitSec\): a number of seconds above 0/],
    [["--seed", "abc"], /--seed abc \(seed\): a whole number from 0/], // an internal error once the run had finished
    [["--seed", "1e400"], /--seed 1e400 \(seed\): a whole number from 0/],
  ])("%s is exit 2 naming the flag, with no folder", async (flags, message) => {
    const parent = tempDir();
    const r = await hone(["run", "--task", "circle-packing", "--model", "offline", "--out", join(parent, "run"), ...flags]);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
    expect(readdirSync(parent)).toEqual([]);
  });

  it("runHarness refuses the same values from TypeScript", async () => {
    const outDir = join(tempDir(), "run");
    await expect(
      runHarness(INITIAL_HARNESS, "circle-packing", { model: "offline", maxEvals: Number.NaN, outDir }),
    ).rejects.toThrow(/maxEvals\): a whole number from 1 to 10000/);
  });
});
