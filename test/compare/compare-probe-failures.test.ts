import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readCellFolder } from "../../src/compare/read-cells.ts";
import type { CompareReport } from "../../src/compare/report.ts";
import { reportFolder } from "../../src/compare/report-folder.ts";
import { reportText } from "../../src/compare/text.ts";
import { hone } from "../helpers/cli.ts";
import { INITIAL_HARNESS, tempDir, write } from "../helpers/fixtures.ts";
import { cellRecord } from "./records.ts";

// A cell × seed that fails (a method that crashes, an evaluator that breaks) has no cell.json. It was reported as
// "not finished (no cell.json yet)", as if it were still running, and a baseline whose seeds had all failed made
// `hone compare --report` refuse the folder. And `--report` compared against `random` even when the experiment was run
// (and `hone view` showed it) against another baseline.

const rec = (method: string, seed: number, final: number[]) =>
  JSON.stringify(cellRecord({ method, seed, final, seedHarness: final.map(() => 0.5) }));

function folderWith(files: Record<string, string>): string {
  const dir = tempDir("hone-cells-");
  for (const [path, text] of Object.entries(files)) write(join(dir, path), text);
  return dir;
}

const failure = (error: string) => JSON.stringify({ format: "hone-cell-failure/1", error, failed: "2026-01-01T00:00:00Z" });

describe("failed cells are shown as failed", () => {
  it("reads a seed folder with cell-failed.json as failed, not pending; a cell.json wins over it", () => {
    const dir = folderWith({
      "gsm8k-slice+qa+random/seed-0/cell.json": rec("random", 0, [1, 0]),
      "gsm8k-slice+qa+random/seed-1/cell.json": rec("random", 1, [1, 1]),
      "gsm8k-slice+qa+random/seed-1/cell-failed.json": failure("an earlier attempt"),
      "gsm8k-slice+qa+crash/seed-0/cell-failed.json": failure("the method crash exited with code 3: boom"),
      "gsm8k-slice+qa+crash/seed-1/hone.db": "",
      "gsm8k-slice+qa+crash/seed-2/cell-failed.json": "not json",
    });
    const f = readCellFolder(dir);
    expect(f.cells.map((c) => [c.method, c.seed])).toEqual([
      ["random", 0],
      ["random", 1],
    ]);
    expect(f.failed).toEqual([
      { dir: "gsm8k-slice+qa+crash/seed-0", error: "the method crash exited with code 3: boom", failed: "2026-01-01T00:00:00Z" },
    ]);
    expect(f.pending).toEqual(["gsm8k-slice+qa+crash/seed-1", "gsm8k-slice+qa+crash/seed-2"]);
  });

  it("names each failure in the text, the JSON and the page, and reports when the baseline itself failed", () => {
    const dir = folderWith({
      "gsm8k-slice+qa+greedy/seed-0/cell.json": rec("greedy", 0, [1, 0]),
      "gsm8k-slice+qa+random/seed-0/cell-failed.json": failure("the evaluator failed on <the> seed program"),
    });
    const { report, html } = reportFolder(dir);
    expect(report.failed.map((f) => f.dir)).toEqual(["gsm8k-slice+qa+random/seed-0"]);
    expect(report.comparisons.map((c) => c.status)).toEqual(["no_baseline"]);
    const line = "FAILED gsm8k-slice+qa+random/seed-0 (no result, left out of every statistic)";
    expect(reportText(report)).toContain(`${line}: the evaluator failed on <the> seed program`);
    expect(reportText(report)).not.toMatch(/not finished/);
    expect(readFileSync(html, "utf8")).toContain(`${line}: the evaluator failed on &lt;the&gt; seed program`);
  });
});

describe("--report compares against the experiment's baseline", () => {
  const files = {
    "experiment.json": JSON.stringify({ format: "hone-experiment/1", name: "x", baseline: "greedy", planned: [] }),
    "gsm8k-slice+qa+greedy/seed-0/cell.json": rec("greedy", 0, [0, 0]),
    "gsm8k-slice+qa+greedy/seed-1/cell.json": rec("greedy", 1, [0, 1]),
    "gsm8k-slice+qa+opro/seed-0/cell.json": rec("opro", 0, [1, 1]),
    "gsm8k-slice+qa+opro/seed-1/cell.json": rec("opro", 1, [1, 1]),
  };

  it("takes the baseline the experiment was run with when --baseline is not given", async () => {
    const dir = folderWith(files);
    expect(reportFolder(dir).report.baseline).toBe("greedy");
    const r = await hone(["compare", "--report", dir, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const rep = JSON.parse(r.stdout) as CompareReport;
    expect(rep.baseline).toBe("greedy");
    expect(rep.comparisons.map((c) => [c.method, c.baseline, c.n, c.mean_difference])).toEqual([["opro", "greedy", 4, 0.75]]);
    const other = await hone(["compare", "--report", dir, "--json", "--baseline", "opro"]);
    expect((JSON.parse(other.stdout) as CompareReport).baseline).toBe("opro");
  });

  it("defaults to random for a folder without experiment.json", () => {
    const dir = folderWith({
      ...files,
      "experiment.json": "{}",
      "gsm8k-slice+qa+random/seed-0/cell.json": rec("random", 0, [0, 0]),
    });
    expect(reportFolder(dir).report.baseline).toBe("random");
  });

  it("does not wait on an experiment.json that is a FIFO (the default baseline instead)", () => {
    const dir = folderWith({ ...files, "gsm8k-slice+qa+random/seed-0/cell.json": rec("random", 0, [0, 0]) });
    rmSync(join(dir, "experiment.json"));
    execFileSync("mkfifo", [join(dir, "experiment.json")]);
    expect(reportFolder(dir).report.baseline).toBe("random");
  });
});

// A method given as a program that crashes while its marker file is there, and proposes nothing otherwise.
const METHOD = `import json, os, sys
req = json.load(sys.stdin)
if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "crash-now")):
    sys.stderr.write("boom\\n")
    sys.exit(3)
`;

describe("hone compare leaves a failed cell's error beside it, and refuses finished cells made under other settings", () => {
  it("writes cell-failed.json when a method crashes, and removes it when the cell is tried again and finishes", async () => {
    const dir = tempDir("hone-compare-fail-");
    write(join(dir, "crasher", "method.json"), JSON.stringify({ name: "crasher", entrypoint: "python3 crash.py", timeout: 60 }));
    write(join(dir, "crasher", "crash.py"), METHOD);
    write(join(dir, "crasher", "crash-now"), "");
    write(
      join(dir, "x.yaml"),
      `name: x
tasks:
  - name: packing
    splits: { train: [circle-packing] }
harnesses:
  - name: initial
    path: ${INITIAL_HARNESS}
methods:
  - method: ./crasher
    name: crasher
seeds: [0]
baseline: crasher
budget: { unit: evaluator_calls, size: 15 }
search: { proposals: 2, max_evals: 3, noise_repeats: 2, concurrency: 2 }
`,
    );
    const out = join(dir, "out");
    const failed = await hone(["compare", join(dir, "x.yaml"), "--out", out], { timeoutMs: 300_000 });
    expect(failed.code).not.toBe(0);
    const file = join(out, "packing+initial+crasher", "seed-0", "cell-failed.json");
    expect(JSON.parse(readFileSync(file, "utf8")).error).toMatch(/crasher exited with code 3: boom/);
    const report = await hone(["compare", "--report", out]);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toMatch(/FAILED packing\+initial\+crasher\/seed-0 .*exited with code 3: boom/);

    rmSync(join(dir, "crasher", "crash-now"));
    const again = await hone(["compare", join(dir, "x.yaml"), "--out", out], { timeoutMs: 300_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(join(out, "packing+initial+crasher", "seed-0", "cell.json"))).toBe(true);
    expect(again.stdout).not.toMatch(/FAILED/);

    // The same out folder with another budget: its finished cell would be reported as made under the new one.
    write(join(dir, "x.yaml"), readFileSync(join(dir, "x.yaml"), "utf8").replace("size: 15", "size: 23"));
    const changed = await hone(["compare", join(dir, "x.yaml"), "--out", out, "--json"], { timeoutMs: 300_000 });
    expect(changed.code).toBe(5);
    expect(changed.stderr).toMatch(/budget\.size.*seed-0\/cell\.json was made with budget\.size 15, not 23.*another --out/);
    expect(changed.stdout).toBe("");
  }, 600_000);
});
