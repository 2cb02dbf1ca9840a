import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

const BUILTIN = [
  "autocorrelation-c1",
  "autocorrelation-c2",
  "circle-packing",
  "circle-packing-32",
  "erdos-min-overlap",
  "hadamard-29",
  "prism",
  "txn-scheduling",
];

describe("hone tasks", () => {
  it("lists at least 8 built-in tasks with best known values or a stated source", async () => {
    const r = await hone(["tasks", "--json"]);
    const tasks = JSON.parse(r.stdout) as { id: string; best_known: number | null; source: string | null }[];
    expect(tasks.map((t) => t.id)).toEqual(BUILTIN);
    for (const t of tasks) expect(t.best_known !== null || (t.source ?? "").length > 0).toBe(true);
  });

  it("shows one task's description, budget and rules", async () => {
    const r = await hone(["tasks", "show", "erdos-min-overlap"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/c5, lower is better/);
    expect(r.stdout).toMatch(/evaluator rules:/);
  });

  it("scaffolds a task that evaluates and runs", async () => {
    const dir = join(tempDir(), "my-task");
    expect((await hone(["tasks", "new", dir])).code).toBe(0);
    const ev = await hone(["evaluate", "--task", dir, join(dir, "initial_program.py"), "--json"]);
    expect(ev.code).toBe(0);
    expect(JSON.parse(ev.stdout)).toMatchObject({ valid: true });
    const run = await hone([
      "run",
      "--task",
      dir,
      "--model",
      "offline",
      "--max-evals",
      "6",
      "--out",
      join(tempDir(), "r"),
      "--json",
    ]);
    expect(run.code).toBe(0);
  });

  it("hone evaluate reports an invalid program as a result: its reason, and exit 0", async () => {
    const p = join(tempDir(), "bad.py");
    const seed = readFileSync("tasks/circle-packing/initial_program.py", "utf8").replace(
      "return centers, radii, float(np.sum(radii))",
      "return centers * np.nan, radii, 3.0",
    );
    writeFileSync(p, seed);
    const r = await hone(["evaluate", "--task", "circle-packing", p]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^invalid: .*finite/);
    expect(r.stderr).not.toMatch(/failed/);
    const json = await hone(["evaluate", "--task", "circle-packing", p, "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, reason: expect.stringMatching(/finite/) });
  });
});

describe("every built-in task runs end to end on the offline model", () => {
  it.each(BUILTIN)("%s", async (id) => {
    const out = join(tempDir(), id);
    const r = await hone(["run", "--task", id, "--model", "offline", "--max-evals", "6", "--out", out, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(readFileSync(join(out, "result.json"), "utf8"));
    expect(result.status).toBe("completed");
    expect(result.start_valid).toBe(true);
    expect(result.evaluations.used).toBe(6);
    expect(result.best_score).not.toBeNull();
  });
});
