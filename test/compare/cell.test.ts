import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readCellFolder } from "../../src/compare/read-cells.ts";
import { HoneError } from "../../src/errors.ts";
import { tempDir, write } from "../helpers/fixtures.ts";
import { cellRecord } from "./records.ts";

const rec = (o: Partial<Parameters<typeof cellRecord>[0]> = {}) => cellRecord({ method: "random", seed: 0, final: [1, 0], ...o });

function folderWith(files: Record<string, unknown>): string {
  const dir = tempDir("hone-cells-");
  for (const [path, value] of Object.entries(files))
    write(join(dir, path), typeof value === "string" ? value : JSON.stringify(value));
  return dir;
}

function refusal(value: unknown, path = "gsm8k-slice+qa+random/seed-0/cell.json"): HoneError {
  const dir = folderWith({ [path]: value });
  try {
    readCellFolder(dir);
  } catch (err) {
    expect(err).toBeInstanceOf(HoneError);
    expect((err as HoneError).file).toBe(join(dir, path));
    expect((err as HoneError).exit).toBe("usage");
    return err as HoneError;
  }
  throw new Error("the record was accepted");
}

describe("reading cell records", () => {
  it("reads <cell>/seed-<n>/cell.json, lists seed folders without one as pending, ignores the rest", () => {
    const dir = folderWith({
      "gsm8k-slice+qa+random/seed-0/cell.json": rec(),
      "gsm8k-slice+qa+random/seed-1/cell.json": rec({ seed: 1 }),
      "gsm8k-slice+qa+random/seed-2/hone.db": "",
      "gsm8k-slice+qa+random/notes/cell.json": "not read",
      "report.html": "<html>",
    });
    const f = readCellFolder(dir);
    expect(f.cells.map((c) => [c.method, c.seed])).toEqual([
      ["random", 0],
      ["random", 1],
    ]);
    expect(f.cells[0]?.file).toBe(join(dir, "gsm8k-slice+qa+random/seed-0/cell.json"));
    expect(f.pending).toEqual(["gsm8k-slice+qa+random/seed-2"]);
  });

  it("says when a folder holds no cell records at all", () => {
    expect(() => readCellFolder(tempDir())).toThrow(/holds no cell records/);
    expect(() => readCellFolder("/nonexistent/x")).toThrow(/is not a folder/);
  });

  it.each([
    ["not JSON", "{", undefined, /not valid JSON/],
    ["another format", { ...rec(), format: "hone-cell/2" }, "format", /hone-cell\/1/],
    ["an unknown field", { ...rec(), extra: 1 }, "(top level)", /extra/],
    [
      "a curve point hone did not measure",
      { ...rec(), curve: { split: "train", points: [{ x: 1, score: 2, measured_by: "method" }] } },
      "curve.points.0.measured_by",
      /hone/,
    ],
    [
      "a negative x",
      { ...rec(), curve: { split: "train", points: [{ x: -1, score: 2, measured_by: "hone" }] } },
      "curve.points.0.x",
      />=0/,
    ],
    [
      "a valid result without a score",
      (() => {
        const r = rec();
        r.final.tasks[0] = { task: "t1", score: null, valid: true };
        return r;
      })(),
      "final.tasks.0.score",
      /needs a score/,
    ],
    [
      "a task twice",
      (() => {
        const r = rec();
        r.final.tasks[1] = { task: "t1", score: 0, valid: true };
        return r;
      })(),
      "final.tasks.1.task",
      /appears twice/,
    ],
    [
      "seed-harness tasks that differ from the final's",
      (() => {
        const r = rec();
        r.seed_harness.tasks = r.seed_harness.tasks.slice(0, 1);
        return r;
      })(),
      "seed_harness.tasks",
      /same tasks/,
    ],
    [
      "an unknown budget unit",
      (() => {
        const r = rec();
        (r.identity.budget as { unit: string }).unit = "rounds";
        return r;
      })(),
      "identity.budget.unit",
      /evaluator_calls/,
    ],
    [
      "a seed harness other than the identity's",
      { ...rec(), seed_harness: { ...rec().seed_harness, harness: "other" } },
      "seed_harness.harness",
      /identity/,
    ],
    [
      "nested sampling",
      (() => {
        const r = rec();
        r.identity.measurement.sampling = { a: { b: { c: 1 } } };
        return r;
      })(),
      "identity.measurement.sampling.a",
      /./,
    ],
    ["a negative cost", { ...rec(), cost: { ...rec().cost, seconds: -1 } }, "cost.seconds", />=0/],
    ["a bad time", { ...rec(), finished: "yesterday" }, "finished", /datetime/i],
  ])("refuses %s, naming the file and the field", (_what, value, field, message) => {
    const err = refusal(value);
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
  });

  it("refuses a record filed under another cell's or seed's folder", () => {
    expect(refusal(rec(), "gsm8k-slice+qa+greedy/seed-0/cell.json").message).toMatch(/belongs in gsm8k-slice\+qa\+random\//);
    expect(refusal(rec(), "gsm8k-slice+qa+random/seed-4/cell.json").message).toMatch(/belongs in seed-0\/, not seed-4\//);
  });

  it("does not follow a symbolic link in place of a record, and refuses an oversized one unread", () => {
    const outside = join(tempDir(), "cell.json");
    writeFileSync(outside, JSON.stringify(rec()));
    const dir = tempDir();
    mkdirSync(join(dir, "gsm8k-slice+qa+random", "seed-0"), { recursive: true });
    symlinkSync(outside, join(dir, "gsm8k-slice+qa+random", "seed-0", "cell.json"));
    expect(() => readCellFolder(dir)).toThrow(/not a regular file/);
    expect(refusal(" ".repeat((32 << 20) + 1)).message).toMatch(/larger than/);
  });
});
