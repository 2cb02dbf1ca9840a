import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { runnableProblems } from "../../src/compare/cell-settings.ts";
import { type ExperimentInput, readExperiment } from "../../src/compare/experiment.ts";
import { planCells } from "../../src/compare/plan.ts";
import { HoneError } from "../../src/errors.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";

const DEMO = join(ROOT, "experiments", "demo.yaml");
const METHODS = ["random", "greedy", "harnessttt"];

/** A valid experiment in a temporary folder beside its own harness folder, with one change applied. */
function experimentFile(change: (e: Record<string, unknown>) => void = () => {}): string {
  const dir = tempDir("hone-exp-");
  write(join(dir, "harnesses", "mine", "harness.json"), '{"name":"mine","entrypoint":"python3 h.py"}');
  const e: Record<string, unknown> = {
    name: "t",
    tasks: [{ name: "cp", splits: { train: ["circle-packing"] } }],
    harnesses: [{ name: "mine", path: "harnesses/mine" }],
    methods: [{ method: "random" }, { method: "greedy", params: { proposals: 2 } }],
    seeds: [0, 1],
    budget: { unit: "evaluator_calls", size: 10 },
  } satisfies ExperimentInput;
  change(e);
  const file = join(dir, "exp.yaml");
  write(file, stringify(e));
  return file;
}

function refusal(change: (e: Record<string, unknown>) => void, o = { methods: METHODS }): HoneError {
  const file = experimentFile(change);
  try {
    readExperiment(file, o);
  } catch (err) {
    expect(err).toBeInstanceOf(HoneError);
    expect((err as HoneError).file).toBe(file);
    expect((err as HoneError).exit).toBe("badConfig");
    return err as HoneError;
  }
  throw new Error("the experiment was accepted");
}

describe("the experiment file", () => {
  it("ships a demo that validates: two discovery tasks, three methods with random, greedy and harnessttt, three seeds, offline", () => {
    const e = readExperiment(DEMO, { methods: METHODS });
    expect(e.benchmarks.length + e.tasks.length).toBeGreaterThanOrEqual(2);
    expect(e.methods.map((m) => m.method)).toEqual(["random", "greedy", "harnessttt"]);
    expect(e.seeds).toHaveLength(3);
    expect([e.executor.model, e.proposer.model]).toEqual(["offline", "offline"]);
    expect(e.harnesses.map((h) => h.path)).toEqual([join(ROOT, "harnesses", "initial")]);
    expect(runnableProblems(e)).toEqual([]);
    // 2 task groups × 1 harness × 3 methods × 3 seeds.
    const plan = planCells(e);
    expect(plan).toHaveLength(18);
    expect(plan[0]).toMatchObject({
      cell: "circle-packing+initial+random",
      dir: "circle-packing+initial+random/seed-0",
      test_seen_by_method: true,
    });
    expect(plan.map((c) => c.benchmark).filter((b, i, a) => a.indexOf(b) === i)).toEqual(["circle-packing", "txn-scheduling"]);
  });

  it("validates against the generated JSON Schema, which refuses an unknown key", () => {
    const schema = JSON.parse(readFileSync(join(ROOT, "schemas", "experiment.schema.json"), "utf8"));
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const demo = parse(readFileSync(DEMO, "utf8"));
    expect(validate(demo), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...demo, budgets: [] })).toBe(false);
  });

  it("ships a QA grid that validates and runs: GSM8K and the test-only MATH-500 from the shipped fixtures", () => {
    const file = join(ROOT, "experiments", "qa.yaml");
    const e = readExperiment(file, { methods: METHODS });
    expect(e.benchmarks.map((b) => [b.benchmark, b.data_dir])).toEqual([
      ["gsm8k", join(ROOT, "test", "fixtures", "datasets")],
      ["math500", join(ROOT, "test", "fixtures", "datasets")],
    ]);
    expect(runnableProblems(e)).toEqual([]);
    expect(planCells(e)).toHaveLength(18);
    const schema = JSON.parse(readFileSync(join(ROOT, "schemas", "experiment.schema.json"), "utf8"));
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(validate(parse(readFileSync(file, "utf8"))), JSON.stringify(validate.errors)).toBe(true);
  });

  it("resolves every relative path against the file, not the working directory", () => {
    const file = experimentFile((e) => {
      e.tasks = [{ name: "cp", splits: { train: ["./harnesses"], test: ["circle-packing"] } }];
      e.out = "../runs/x";
    });
    const e = readExperiment(file);
    const dir = join(file, "..");
    expect(e.harnesses[0]?.path).toBe(join(dir, "harnesses", "mine"));
    expect(e.tasks[0]?.splits.train).toEqual([join(dir, "harnesses")]);
    expect(e.tasks[0]?.splits.test).toEqual(["circle-packing"]);
    expect(e.out).toBe(join(dir, "..", "runs", "x"));
    expect(planCells(e)[0]?.test_seen_by_method).toBe(false);
  });

  it.each([
    ["an unknown key", (e: Record<string, unknown>) => (e.budgets = 1), "(top level)", /budgets/],
    ["a budget unit", (e: Record<string, unknown>) => (e.budget = { unit: "rounds", size: 3 }), "budget.unit", /evaluator_calls/],
    ["a budget size", (e: Record<string, unknown>) => (e.budget = { unit: "seconds", size: 0 }), "budget.size", /0/],
    ["two budgets", (e: Record<string, unknown>) => (e.budget = [{ unit: "seconds", size: 9 }]), "budget", /object/],
    ["a seed", (e: Record<string, unknown>) => (e.seeds = [0, -1]), "seeds.1", />=0/],
    ["no seeds", (e: Record<string, unknown>) => (e.seeds = []), "seeds", /1/],
    [
      "a model setting",
      (e: Record<string, unknown>) => (e.executor = { model: "offline", temprature: 1 }),
      "executor",
      /temprature/,
    ],
    [
      "a proposer URL",
      (e: Record<string, unknown>) => (e.proposer = { model: "m", base_url: "not a url" }),
      "proposer.base_url",
      /URL/i,
    ],
    [
      "a method's params",
      (e: Record<string, unknown>) => (e.methods = [{ method: "random", params: [1] }]),
      "methods.0.params",
      /record|object/,
    ],
    [
      "a harness name",
      (e: Record<string, unknown>) => (e.harnesses = [{ name: "a+b", path: "x" }]),
      "harnesses.0.name",
      /letters/,
    ],
    [
      "a split",
      (e: Record<string, unknown>) => (e.tasks = [{ name: "cp", splits: { test: ["x"] } }]),
      "tasks.0.splits.train",
      /expected array/,
    ],
    ["repeats", (e: Record<string, unknown>) => (e.repeats = 1.5), "repeats", /int/],
  ])("names the field of a bad %s", (_what, change, field, message) => {
    const err = refusal(change);
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
  });

  it.each([
    [
      "an unknown method, listing the known ones",
      (e: Record<string, unknown>) => (e.methods = [{ method: "opro" }]),
      "methods.0.method",
      /no method "opro"; hone knows random, greedy, harnessttt/,
    ],
    [
      "a baseline that is not a method",
      (e: Record<string, unknown>) => (e.baseline = "opro"),
      "baseline",
      /not one of the methods/,
    ],
    [
      "a method twice under one name",
      (e: Record<string, unknown>) => (e.methods = [{ method: "random" }, { method: "random" }]),
      "methods",
      /appears twice/,
    ],
    [
      "a missing harness folder",
      (e: Record<string, unknown>) => (e.harnesses = [{ name: "h", path: "nowhere" }]),
      "harnesses.0.path",
      /nowhere is not a folder/,
    ],
    [
      "a folder that is no harness",
      (e: Record<string, unknown>) => (e.harnesses = [{ name: "h", path: "." }]),
      "harnesses.0.path",
      /neither agent.yaml/,
    ],
    [
      "an unknown built-in task",
      (e: Record<string, unknown>) => (e.tasks = [{ name: "cp", splits: { train: ["circle-pack"] } }]),
      "tasks.0.splits.train.0",
      /no built-in task "circle-pack"/,
    ],
    [
      "a missing task folder",
      (e: Record<string, unknown>) => (e.tasks = [{ name: "cp", splits: { train: ["circle-packing"], test: ["./gone"] } }]),
      "tasks.0.splits.test.0",
      /gone is not a task folder/,
    ],
    [
      "an unknown benchmark",
      (e: Record<string, unknown>) => (e.benchmarks = [{ benchmark: "gsm9k", splits: { train: {}, test: {} } }]),
      "benchmarks.0.benchmark",
      /no benchmark "gsm9k"/,
    ],
    [
      "a harness a benchmark names but the file does not",
      (e: Record<string, unknown>) =>
        (e.benchmarks = [{ benchmark: "gsm8k", splits: { train: {}, test: {} }, harnesses: ["qa"] }]),
      "benchmarks.0.harnesses.0",
      /no harness named "qa"/,
    ],
    ["no benchmark at all", (e: Record<string, unknown>) => (e.tasks = []), "benchmarks", /at least one/],
  ])("refuses %s", (_what, change, field, message) => {
    const err = refusal(change);
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
  });

  it("accepts any method name when no registry is given", () => {
    expect(readExperiment(experimentFile((e) => (e.methods = [{ method: "opro" }, { method: "random" }])))).toBeTruthy();
  });
});
