import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { cellSettings } from "../../src/compare/cell-settings.ts";
import { readExperiment } from "../../src/compare/experiment.ts";
import { planCells } from "../../src/compare/plan.ts";
import { readCellFolder } from "../../src/compare/read-cells.ts";
import { reportFolder } from "../../src/compare/report-folder.ts";
import { runExperiment } from "../../src/compare/run-experiment.ts";
import { HoneError } from "../../src/errors.ts";
import { CIRCLE_PACKING, copyOf, GSM8K_FIXTURE, INITIAL_HARNESS, tempDir, write } from "../helpers/fixtures.ts";

// A finished cell was checked only for its budget, repeats and models when `hone compare` ran again on the same out
// folder: a method's params, the search's settings, an edited task or harness folder, or a seed the file no longer
// plans were reused without a word, and the report mixed cells measured under different settings. The seed harness's
// shared test measurement was reused after the task's files changed, even once the cell folders were removed.

interface Setup {
  dir: string;
  task: string;
  harness: string;
  out: string;
}

const base = (s: Setup) => ({
  name: "t",
  tasks: [{ name: "cp", splits: { train: [s.task] } }],
  harnesses: [{ name: "h", path: s.harness }],
  methods: [{ method: "greedy" }],
  seeds: [0],
  baseline: "greedy",
  budget: { unit: "evaluator_calls", size: 12 },
  search: { proposals: 2, max_evals: 3, noise_repeats: 2, concurrency: 2 },
});
type Exp = ReturnType<typeof base> & Record<string, unknown>;

function experiment(s: Setup, change: (e: Exp) => void = () => {}) {
  const e = structuredClone(base(s)) as Exp;
  change(e);
  const file = join(s.dir, "exp.yaml");
  write(file, stringify(e));
  return readExperiment(file);
}

async function refusal(s: Setup, change: (e: Exp) => void): Promise<HoneError> {
  const err = await runExperiment(experiment(s, change), { out: s.out }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HoneError);
  return err as HoneError;
}

const CELL = join("cp+h+greedy", "seed-0");
const lines: string[] = [];
let s: Setup;

beforeAll(async () => {
  const dir = tempDir("hone-cells-probe4-");
  s = { dir, task: copyOf(CIRCLE_PACKING), harness: copyOf(INITIAL_HARNESS), out: join(dir, "out") };
  await runExperiment(experiment(s), { out: s.out, log: (l) => lines.push(l) });
}, 600_000);

describe("a finished cell is reused only under the settings it was made with", () => {
  it("records them in cell.json and beside the run folder, and a rerun with the same file reuses it", async () => {
    const rec = JSON.parse(readFileSync(join(s.out, CELL, "cell.json"), "utf8"));
    expect(rec.settings["methods.params"]).toEqual({ proposals: 2 });
    expect(rec.settings["tasks.splits.test"]).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(s.out, `${CELL}.settings.json`), "utf8"))).toEqual(rec.settings);
    const again = await runExperiment(experiment(s), { out: s.out });
    expect(again.skipped).toBe(1);
    expect(again.ran).toBe(0);
  });

  const cases: [string, string, (e: Exp) => void][] = [
    [
      "methods.params",
      '{"proposals":2}, not {"proposals":1}',
      (e) => (e.methods[0] = { method: "greedy", params: { proposals: 1 } } as never),
    ],
    ["search.proposals", "2, not 3", (e) => (e.search.proposals = 3)],
    ["search.noise_repeats", "2, not 3", (e) => (e.search.noise_repeats = 3)],
    ["search.paired", "false, not true", (e) => ((e.search as Record<string, unknown>).paired = true)],
    ["search.max_evals", "3, not 2", (e) => (e.search.max_evals = 2)],
    ["executor", "not", (e) => (e.executor = { model: "offline", keep_sampling: true })],
  ];
  for (const [field, values, change] of cases)
    it(`refuses a rerun whose ${field} changed, naming the cell, the setting and both values`, async () => {
      const err = await refusal(s, change);
      expect(err.exit).toBe("badConfig");
      expect(err.field).toBe(field);
      expect(err.message).toContain(`${CELL} was made with ${field} `);
      expect(err.message).toContain(values);
      expect(err.message).toMatch(/give another --out \(or remove those seed folders/);
    });

  it("refuses a rerun after the task folder's files changed (its content hash)", async () => {
    const evaluator = join(s.task, "evaluator.py");
    const before = readFileSync(evaluator, "utf8");
    try {
      writeFileSync(evaluator, `${before}\n# edited\n`);
      const err = await refusal(s, () => {});
      expect(err.field).toBe("tasks.splits.train");
      expect(err.message).toMatch(/was made with tasks\.splits\.train .*; tasks\.splits\.test /);
    } finally {
      writeFileSync(evaluator, before);
    }
  });

  it("refuses a rerun after the seed harness's files changed", async () => {
    const file = join(s.harness, "agent.yaml");
    const before = readFileSync(file, "utf8");
    try {
      writeFileSync(file, `${before}\n# edited\n`);
      expect((await refusal(s, () => {})).field).toBe("harnesses.path");
    } finally {
      writeFileSync(file, before);
    }
  });

  it("reuses its cells when running the harness left Python byte-code in its folder (not what it is)", async () => {
    const cache = join(s.harness, "__pycache__");
    try {
      write(join(cache, "tool.cpython-311.pyc"), "byte-code");
      write(join(s.harness, "helper.pyc"), "byte-code");
      const again = await runExperiment(experiment(s), { out: s.out });
      expect(again.skipped).toBe(1);
    } finally {
      rmSync(cache, { recursive: true, force: true });
      rmSync(join(s.harness, "helper.pyc"), { force: true });
    }
  });

  it("checks a finished seed the file no longer plans, which the report still reads", async () => {
    const err = await refusal(s, (e) => {
      e.seeds = [1];
      e.methods[0] = { method: "greedy", params: { proposals: 1 } } as never;
    });
    expect(err.message).toContain(`${CELL} was made with methods.params`);
    expect(existsSync(join(s.out, "cp+h+greedy", "seed-1"))).toBe(false);
  });

  it("refuses to resume a started cell under other settings", async () => {
    const cell = join(s.out, CELL, "cell.json");
    const rec = readFileSync(cell, "utf8");
    rmSync(cell);
    try {
      const err = await refusal(s, (e) => (e.search.noise_repeats = 3));
      expect(err.message).toContain(`${CELL} was made with search.noise_repeats 2, not 3`);
    } finally {
      writeFileSync(cell, rec);
    }
  });

  it("still reads and reuses a cell.json written before settings were recorded", async () => {
    const cell = join(s.out, CELL, "cell.json");
    const rec = readFileSync(cell, "utf8");
    const { settings: _, ...old } = JSON.parse(rec);
    writeFileSync(cell, JSON.stringify(old));
    try {
      expect(readCellFolder(s.out).cells).toHaveLength(1);
      expect(reportFolder(s.out).report.cells).toHaveLength(1);
      const again = await runExperiment(experiment(s), { out: s.out });
      expect(again.ran).toBe(0);
    } finally {
      writeFileSync(cell, rec);
    }
  });
});

describe("a record's settings nested a million deep", () => {
  it("are refused by the reader (exit 2, naming the field) and taken as unknown by a rerun, never a crash", async () => {
    const cell = join(s.out, CELL, "cell.json");
    const rec = readFileSync(cell, "utf8");
    const deep = `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`;
    const withX = JSON.parse(rec);
    withX.settings.x = "DEEP";
    writeFileSync(cell, JSON.stringify(withX).replace('"DEEP"', deep));
    try {
      let err: unknown;
      try {
        readCellFolder(s.out);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(HoneError);
      expect((err as HoneError).exit).toBe("usage");
      expect((err as HoneError).field).toBe("settings.x");
      expect((err as HoneError).message).toMatch(/nests deeper than 16 levels/);
      expect((await runExperiment(experiment(s), { out: s.out })).ran).toBe(0);
    } finally {
      writeFileSync(cell, rec);
    }
  });

  it("are named with their control characters written out, never raw", async () => {
    const cell = join(s.out, CELL, "cell.json");
    const rec = readFileSync(cell, "utf8");
    const sent = JSON.parse(rec);
    sent.settings.seed = "\u009b2J";
    sent.settings["\u001b]0;title\u0007"] = 1;
    writeFileSync(cell, JSON.stringify(sent));
    try {
      const err = await refusal(s, () => {});
      expect(err.message).not.toMatch(/[\u001b\u0007\u009b]/);
      expect(err.message).toContain('seed "\\u009b2J", not 0');
      expect(err.message).toContain("\\u001b]0;title\\u0007 1, not null");
    } finally {
      writeFileSync(cell, rec);
    }
  });

  it("keeps a file's params nested past what a record keeps by their digest", async () => {
    let nested: Record<string, unknown> = { v: 1 };
    for (let i = 0; i < 20; i++) nested = { n: nested };
    const e = experiment(s, (x) => (x.methods[0] = { method: "greedy", params: { extra: nested } } as never));
    const got = await cellSettings(e, planCells(e)[0] as never);
    expect(got["methods.params"]).toMatch(/^digest [0-9a-f]{64}$/);
  });
});

describe("a failed cell × seed tried again", () => {
  it("starts again from the beginning when it began under other settings, and says so", async () => {
    const dir = join(s.out, CELL);
    rmSync(join(dir, "cell.json"));
    writeFileSync(join(dir, "cell-failed.json"), JSON.stringify({ format: "hone-cell-failure/1", error: "boom", failed: "x" }));
    writeFileSync(join(dir, "left-by-the-failed-attempt"), "");
    const log: string[] = [];
    await runExperiment(
      experiment(s, (e) => (e.search.noise_repeats = 3)),
      { out: s.out, log: (l) => log.push(l) },
    );
    expect(log).toContain(
      `note: ${CELL} failed under other search.noise_repeats than the file gives now: started again from the beginning`,
    );
    expect(existsSync(join(dir, "left-by-the-failed-attempt"))).toBe(false);
    const rec = JSON.parse(readFileSync(join(dir, "cell.json"), "utf8"));
    expect(rec.settings["search.noise_repeats"]).toBe(3);
  }, 600_000);
});

describe("the seed harness's shared test measurement", () => {
  it("is measured again once the task's files changed and the cell folder was removed as told", async () => {
    const evaluator = join(s.task, "evaluator.py");
    writeFileSync(evaluator, `${readFileSync(evaluator, "utf8")}\n# edited\n`);
    const old = JSON.parse(readFileSync(join(s.out, CELL, "cell.json"), "utf8"));
    rmSync(join(s.out, "cp+h+greedy"), { recursive: true });
    const marker = join(s.out, ".seed-harness", "cp+h", "seed-0", "made-before-the-edit");
    writeFileSync(marker, "");
    const log: string[] = [];
    await runExperiment(experiment(s), { out: s.out, log: (l) => log.push(l) });
    expect(log.join("\n")).toMatch(
      /note: the seed harness's test measurement \.seed-harness\/cp\+h\/seed-0 was made with other tasks\.splits\.test: measured again/,
    );
    expect(existsSync(marker)).toBe(false);
    const rec = JSON.parse(readFileSync(join(s.out, CELL, "cell.json"), "utf8"));
    expect(rec.settings["tasks.splits.test"]).not.toEqual(old.settings["tasks.splits.test"]);
    expect(rec.identity.measurement.task.content).not.toBe(old.identity.measurement.task.content);
  }, 600_000);
});

describe("a QA row's settings", () => {
  it("change with its data files, split_seed and limits", async () => {
    const dir = tempDir("hone-cells-probe4-qa-");
    const data = join(dir, "data");
    const gsm = copyOf(GSM8K_FIXTURE);
    const file = join(dir, "qa.yaml");
    const exp = (o: { seed?: number; test?: number }) => {
      write(
        file,
        stringify({
          name: "q",
          benchmarks: [
            {
              benchmark: "gsm8k",
              data_dir: data,
              split_seed: o.seed ?? 0,
              splits: { train: { limit: 2 }, test: { limit: o.test ?? 3 } },
            },
          ],
          harnesses: [{ name: "h", path: INITIAL_HARNESS }],
          methods: [{ method: "random" }],
          seeds: [0],
          budget: { unit: "evaluator_calls", size: 100 },
        }),
      );
      const e = readExperiment(file);
      return cellSettings(e, planCells(e)[0] as never);
    };
    cpSync(gsm, join(data, "gsm8k"), { recursive: true });
    const a = await exp({});
    expect(await exp({})).toEqual(a);
    expect((await exp({ seed: 1 }))["benchmarks.split_seed"]).toBe(1);
    expect((await exp({ test: 4 }))["benchmarks.splits.test"]).toBe(4);
    const test = join(data, "gsm8k", "test.jsonl");
    writeFileSync(test, `${readFileSync(test, "utf8")}\n`);
    expect((await exp({}))["benchmarks.data_dir"]).not.toBe(a["benchmarks.data_dir"]);
    // A FIFO in a data file's place is refused naming it, never waited on (the digest reads as the readers do).
    rmSync(test);
    execFileSync("mkfifo", [test]);
    await expect(exp({})).rejects.toThrow(/test\.jsonl.*FIFO/);
  });
});
