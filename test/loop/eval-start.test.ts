import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { evaluateBenchmark } from "../../src/loop/eval.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// An eval that cannot begin (its harness copy or hone.db not written, as on a full disk) leaves nothing behind:
// before, its folder kept the harness copy and the lock file, a folder no later eval with that --out would take.

const options = (outDir: string) => ({
  harnessDir: join(ROOT, "harnesses", "qa"),
  benchmark: "bfcl-simple",
  split: "test" as const,
  limit: 2,
  dataDir: join(ROOT, "test", "fixtures", "datasets"),
  model: "offline",
  outDir,
});

/** A folder a run may take (a start cut short left a hone.db being built) where hone.db cannot be built: it is a folder. */
function unbuildable(dir: string): void {
  mkdirSync(join(dir, "hone.db.new"), { recursive: true });
  writeFileSync(join(dir, "hone.db.new", "x"), "");
}

describe("an eval that cannot begin", () => {
  it("empties an --out that was there but for its lock file, which the next eval takes", async () => {
    const dir = tempDir();
    const there = join(dir, "there");
    unbuildable(there);
    await expect(evaluateBenchmark(options(there))).rejects.toThrow(/hone\.db\.new/);
    expect(readdirSync(there).filter((f) => f !== "hone.lock")).toEqual([]);
    // The same --out is taken by the next eval, which measures as usual.
    const s = await evaluateBenchmark(options(there));
    expect(s.tasks).toBe(2);
    expect(readdirSync(there).sort()).toEqual(expect.arrayContaining(["harness", "hone.db", "summary.json"]));
  });

  it("tells the folder it holds, with what removes what it wrote, before it writes anything", async () => {
    const out = join(tempDir(), "new");
    const seen: string[][] = [];
    const s = await evaluateBenchmark({
      ...options(out),
      onHeld: (dir, abandon) => {
        seen.push(readdirSync(dir));
        expect(typeof abandon).toBe("function");
      },
    });
    expect(s.outDir).toBe(out);
    expect(seen).toEqual([["hone.lock"]]);
  });
});
