import { cpSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { harnessProblems } from "../../src/harness/package.ts";
import { hone } from "../helpers/cli.ts";
import { INITIAL_HARNESS, tempDir } from "../helpers/fixtures.ts";

/** An optimize run folder as `hone optimize` leaves it: `best/` (a package with meta.json) and best_program.py. */
function optimizeFolder(): string {
  const dir = tempDir();
  cpSync(INITIAL_HARNESS, join(dir, "best"), { recursive: true });
  writeFileSync(
    join(dir, "best", "meta.json"),
    `${JSON.stringify({ candidate: "r02-k0", round: 2, commit: "0".repeat(40), parent: null, changed: [], score: 1.367, metric: "combined_score", direction: "maximize" })}\n`,
  );
  writeFileSync(join(dir, "best_program.py"), "# the incumbent program\n");
  return dir;
}

describe("hone run --harness with what hone optimize and hone run leave", () => {
  it("a learned best/ runs from the task's seed program, and the run says its meta.json score is not this run's", async () => {
    const opt = optimizeFolder();
    const out = join(tempDir(), "run");
    const r = await hone([
      "run",
      "--harness",
      join(opt, "best"),
      "--task",
      "circle-packing",
      "--model",
      "offline",
      "--max-evals",
      "1",
      "--out",
      out,
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/is a learned harness \(meta\.json: score 1\.367 by candidate r02-k0 in round 2\)/);
    expect(r.stderr).toMatch(/best_program\.py is that program\). This run starts from the task's seed program/);
    expect(r.stdout).toMatch(/start score 0\.959764/);
  });

  it("a run folder given as the package names the package inside it", () => {
    const opt = optimizeFolder();
    expect(harnessProblems(opt).map((p) => p.message)).toEqual([
      expect.stringContaining(`this looks like a run folder: give ${join(opt, "best")}, its best harness`),
    ]);
    const run = tempDir();
    mkdirSync(join(run, "harness"));
    cpSync(INITIAL_HARNESS, join(run, "harness"), { recursive: true });
    expect(harnessProblems(run).map((p) => p.message)).toEqual([
      expect.stringContaining(`this looks like a run folder: give ${join(run, "harness")}, the harness it ran`),
    ]);
    expect(existsSync(join(run, "agent.yaml"))).toBe(false);
  });
});
