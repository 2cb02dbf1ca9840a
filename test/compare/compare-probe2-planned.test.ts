import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CompareReport } from "../../src/compare/report.ts";
import { reportFolder } from "../../src/compare/report-folder.ts";
import { reportText } from "../../src/compare/text.ts";
import { hone } from "../helpers/cli.ts";
import { tempDir, write } from "../helpers/fixtures.ts";
import { cellRecord } from "./records.ts";

// `hone compare` stops starting cells once one fails (a method that crashes), so the cells planned after it have no
// folder at all. `--report` read only the folders there: a method none of whose cells had started was left out of
// the report without a word ("(no other method to compare)"), as if the grid never had it. experiment.json lists
// every planned cell × seed; those without a folder are now reported as not finished.

const rec = (method: string, seed: number, final: number[]) =>
  JSON.stringify(cellRecord({ method, seed, final, seedHarness: final.map(() => 0.5) }));
const failure = JSON.stringify({
  format: "hone-cell-failure/1",
  error: "the method crasher exited with code 3: boom",
  failed: "",
});

function folder(planned: unknown): string {
  const dir = tempDir("hone-planned-");
  const files: Record<string, string> = {
    "experiment.json": JSON.stringify({ format: "hone-experiment/1", name: "x", baseline: "random", planned }),
    "gsm8k-slice+qa+random/seed-0/cell.json": rec("random", 0, [1, 0]),
    "gsm8k-slice+qa+random/seed-1/cell.json": rec("random", 1, [1, 1]),
    "gsm8k-slice+qa+crasher/seed-0/cell-failed.json": failure,
  };
  for (const [path, text] of Object.entries(files)) write(join(dir, path), text);
  return dir;
}

const PLAN = [
  "gsm8k-slice+qa+random/seed-0",
  "gsm8k-slice+qa+random/seed-1",
  "gsm8k-slice+qa+crasher/seed-0",
  "gsm8k-slice+qa+crasher/seed-1",
  "gsm8k-slice+qa+greedy/seed-0",
  "gsm8k-slice+qa+greedy/seed-1",
];

describe("cells planned but never started are reported, not left out", () => {
  it("lists every planned cell × seed without a folder as not finished, in the plan's order", () => {
    const { report } = reportFolder(folder(PLAN));
    expect(report.failed.map((f) => f.dir)).toEqual(["gsm8k-slice+qa+crasher/seed-0"]);
    expect(report.pending).toEqual([
      "gsm8k-slice+qa+crasher/seed-1",
      "gsm8k-slice+qa+greedy/seed-0",
      "gsm8k-slice+qa+greedy/seed-1",
    ]);
    expect(reportText(report)).toContain(
      "not finished (no cell.json yet): gsm8k-slice+qa+crasher/seed-1, gsm8k-slice+qa+greedy/seed-0, gsm8k-slice+qa+greedy/seed-1",
    );
  });

  it("takes the baseline from the plan when none of its cells started yet", () => {
    const dir = folder(PLAN);
    write(join(dir, "experiment.json"), JSON.stringify({ format: "hone-experiment/1", baseline: "greedy", planned: PLAN }));
    const { report } = reportFolder(dir);
    expect(report.baseline).toBe("greedy");
    expect(report.comparisons.map((c) => [c.method, c.status])).toEqual([["random", "no_baseline"]]);
  });

  it("ignores planned entries that are not cell × seed folders (a manifest is read like any file)", () => {
    const { report } = reportFolder(
      folder([...PLAN.slice(0, 4), "../../etc/passwd", "a+b/seed-0", 7, "x+y+<script>/seed-1", "gsm8k-slice+qa+greedy/seed-01"]),
    );
    expect(report.pending).toEqual(["gsm8k-slice+qa+crasher/seed-1"]);
  });

  it("prints them through hone compare --report --json", async () => {
    const r = await hone(["compare", "--report", folder(PLAN), "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as CompareReport).pending).toContain("gsm8k-slice+qa+greedy/seed-1");
  });
});

// A shared experiment folder is read like any file: a folder named with a terminal's control sequences (clear the
// screen, retitle the window) was printed raw by `hone compare --report`, and so was a failure record's text.
describe("names and errors from an experiment folder never reach the terminal as control sequences", () => {
  const ESC = "\u001b";

  it("reads only folders named <benchmark>+<harness>+<method> with grid labels", async () => {
    const dir = tempDir("hone-names-");
    const evil = `m${ESC}[2J${ESC}]0;owned\u0007`;
    const record = JSON.parse(rec("random", 0, [1, 0]));
    write(join(dir, `gsm8k-slice+qa+${evil}`, "seed-0", "cell.json"), JSON.stringify({ ...record, method: evil }));
    write(join(dir, "gsm8k-slice+qa+random/seed-0/cell.json"), rec("random", 0, [1, 0]));
    write(join(dir, `gsm8k-slice+qa+x${ESC}[31m`, "seed-1", "hone.db"), "");
    const r = await hone(["compare", "--report", dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(ESC);
    expect(reportFolder(dir).report.cells.map((c) => c.method)).toEqual(["random"]);
  });

  it("shows a failure's text with its control characters written out, never raw", () => {
    const dir = folder(PLAN.slice(0, 3));
    write(
      join(dir, "gsm8k-slice+qa+crasher/seed-0/cell-failed.json"),
      JSON.stringify({ format: "hone-cell-failure/1", error: `boom${ESC}[2J\u009b31m\tdone`, failed: `x${ESC}` }),
    );
    const { report } = reportFolder(dir);
    expect(report.failed).toEqual([
      { dir: "gsm8k-slice+qa+crasher/seed-0", error: "boom\\u001b[2J\\u009b31m\tdone", failed: "x\\u001b" },
    ]);
    expect(reportText(report)).not.toContain(ESC);
  });
});
