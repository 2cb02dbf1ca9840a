import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lockRunDir, type RunLock } from "../../src/store/run-lock.ts";
import { hone } from "../helpers/cli.ts";
import { packingExperiment } from "../helpers/experiment.ts";
import { tempDir, write } from "../helpers/fixtures.ts";

// A second `hone compare` on an out folder another one is writing (a resume started while the first was still
// stopping) started the same cells, failed on the first one the other held (exit 2 mid-grid) and left a
// cell-failed.json in a cell that was running, which a report then showed as FAILED. It is now refused before it
// writes anything, naming the process that holds the folder.
describe("one hone compare at a time on an out folder", () => {
  it("refuses a second one before anything is written, naming the holder", async () => {
    const dir = tempDir("hone-probe6-lock-");
    write(
      join(dir, "x.yaml"),
      packingExperiment("  - method: random", 15, "search: { proposals: 1, max_evals: 3, noise_repeats: 1, concurrency: 1 }"),
    );
    const out = join(dir, "out");
    mkdirSync(out);
    const lock = lockRunDir(out);
    expect("release" in lock).toBe(true);
    try {
      const r = await hone(["compare", join(dir, "x.yaml"), "--out", out], { timeoutMs: 120_000 });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${out} is being written by another hone process (pid ${process.pid}`);
      expect(r.stderr).toContain("before running the experiment again");
      expect(readdirSync(out).filter((f) => f !== "hone.lock")).toEqual([]);
      expect(existsSync(join(out, "experiment.json"))).toBe(false);
    } finally {
      (lock as RunLock).release();
    }
  });
});
