import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scoreAnswer, scoreAnswerAsync } from "../../src/index.ts";
import { BENCHMARKS, loadSplit, searchPool, splitsOf } from "../../src/task/qa/benchmarks.ts";
import { aimeAnswer, readBoolean } from "../../src/task/qa/exact-answers.ts";
import { parsePyJson, pyEquals, toPyJson } from "../../src/task/qa/py-json.ts";
import { ROOT } from "../helpers/fixtures.ts";

const FIXTURES = join(ROOT, "test", "fixtures", "datasets");
interface AliasCase {
  response: string;
  gold: string[];
  expected: Record<string, Record<string, number>>;
}
interface BfclTable {
  entries: Record<string, { category: string; functions: string; ground_truth: string }>;
  cases: { id: string; why: string; response: string; expected: Record<string, number> }[];
}
const table = <T>(name: string): T =>
  JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "scorers", `${name}.json`), "utf8")) as T;
const ids = Object.keys(BENCHMARKS);
// τ-bench's oracles act in their environment: test/task/tau-bench.test.ts.
const answered = ids.filter((id) => !BENCHMARKS[id]!.conversation);

describe("the benchmark registry", () => {
  it("has at least 12 benchmarks, each with files, sizes, metrics and a licence", () => {
    expect(ids.length).toBeGreaterThanOrEqual(12);
    for (const b of Object.values(BENCHMARKS)) {
      expect(b.files.length, b.id).toBeGreaterThan(0);
      expect(b.scorer.metrics.length, b.id).toBeGreaterThan(0);
      expect(b.licence, b.id).not.toBe("");
      for (const f of b.files) {
        expect(f.url, `${b.id} ${f.name}`).toMatch(/^https?:\/\//);
        if (f.sha256) expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);
        // A pinned file names a commit, a release or a content-addressed store in its URL.
        if (f.sha256 && f.url.includes("githubusercontent")) expect(f.url).toMatch(/\/[0-9a-f]{40}\//);
      }
    }
  });

  it.each(ids)("%s: its fixture is a data folder with the benchmark's own file names and a licence or note", (id) => {
    const b = BENCHMARKS[id]!;
    for (const f of b.files) expect(existsSync(join(FIXTURES, id, f.name)), f.name).toBe(true);
    expect(existsSync(join(FIXTURES, id, "LICENSE")) || existsSync(join(FIXTURES, id, "README.md"))).toBe(true);
  });

  it.each(answered)("%s: on its fixture the oracle's answer scores 1 and the wrong oracle's 0 on every metric", async (id) => {
    const b = BENCHMARKS[id]!;
    const split = splitsOf(b).includes("test") ? "test" : "train";
    const tasks = await loadSplit(id, split, { dir: FIXTURES });
    expect(tasks.length).toBeGreaterThan(0);
    for (const t of tasks) {
      const right = await scoreAnswerAsync(id, b.oracleAnswer(t.gold), t.gold);
      const wrong = await scoreAnswerAsync(id, b.wrongAnswer(t.gold), t.gold);
      expect(Object.keys(right)).toEqual([...b.scorer.metrics]);
      for (const m of b.scorer.metrics) {
        expect(right[m], `${t.id} ${m}`).toBe(1);
        expect(wrong[m], `${t.id} ${m}`).toBe(0);
      }
    }
  });

  it("names a missing split and an absent dataset", async () => {
    await expect(loadSplit("strategyqa", "test", { dir: FIXTURES })).rejects.toThrow(
      /strategyqa has no test split; it has train, validation/,
    );
    await expect(loadSplit("math500", "test", { dir: join(FIXTURES, "nowhere") })).rejects.toThrow(/hone datasets fetch math500/);
  });
});

// Verdicts computed by running each benchmark's official script (test/fixtures/scorers/README.md).
describe("TriviaQA, NQ-open, MuSiQue and 2WikiMultihopQA agree with their official scripts", () => {
  const t = table<{ cases: AliasCase[] }>("alias-qa");
  it.each(t.cases.map((c, i) => [i, c] as const))("case %i", (_i, c) => {
    for (const [b, expected] of Object.entries(c.expected)) expect(scoreAnswer(b, c.response, c.gold), b).toEqual(expected);
  });
});

describe("BFCL's AST checker agrees with the official ast_checker", () => {
  const t = table<BfclTable>("bfcl");
  it("on real BFCL v3 entries with varied calls", () => expect(t.cases.length).toBeGreaterThanOrEqual(300));
  it.each(t.cases.map((c, i) => [i, c.id, c.why, c] as const))("case %i: %s, %s", (_i, _id, _why, c) => {
    const e = t.entries[c.id]!;
    const got = scoreAnswer(`bfcl-${e.category.replace("_", "-")}`, c.response, {
      functions: e.functions,
      ground_truth: e.ground_truth,
    });
    expect(got).toEqual(c.expected);
  });
});

describe("Python's JSON, for BFCL", () => {
  it("keeps ints apart from floats, key order and the last of a repeated key", () => {
    const v = parsePyJson('{"b": 5, "a": 5.0, "b": 1e2, "n": NaN}');
    expect(toPyJson(v)).toBe('{"b": 100.0, "a": 5.0, "n": NaN}');
    expect(pyEquals(parsePyJson("5"), parsePyJson("5.0"))).toBe(true);
    expect(pyEquals(parsePyJson("true"), parsePyJson("1"))).toBe(true);
    expect(parsePyJson("123456789012345678901234567890")).toEqual({ t: "int", v: 123456789012345678901234567890n });
  });
  it("refuses deep nesting and junk without stalling", () => {
    expect(() => parsePyJson("[".repeat(100) + "]".repeat(100))).toThrow(/nested too deeply/);
    expect(() => parsePyJson('[1, 2] {"x"')).toThrow(/extra data/);
    expect(() => parsePyJson(`"${"a".repeat(2_000_000)}"`)).toThrow(/longer than/);
  });
});

describe("closed answers", () => {
  it("StrategyQA reads yes/no and true/false only", () => {
    expect([readBoolean("Yes."), readBoolean(" false "), readBoolean("yes, because")]).toEqual([true, false, undefined]);
  });
  it("AIME takes the last boxed answer, else the text between dollar signs, else the response (lm-eval's aime)", () => {
    expect([aimeAnswer("so \\boxed{033}"), aimeAnswer("33"), aimeAnswer("is $33.0$"), aimeAnswer("about 33")]).toEqual([
      "033",
      "33",
      "33.0",
      "about 33",
    ]);
  });
});

describe("a test-only benchmark's search pool", () => {
  const ids = (ts: { id: string }[]) => ts.map((t) => t.id);
  it("is a seed-independent quarter of the test file; train and validation are drawn from it, test-heldout is the rest", async () => {
    const load = (split: "train" | "validation" | "test" | "test-heldout", seed = 0) =>
      loadSplit("math500", split, { dir: FIXTURES, seed });
    const test = await load("test");
    const pool = searchPool(test).pool;
    expect(pool).toHaveLength(Math.ceil(test.length / 4));
    // test stays the official whole file; the held-out rest is test without the pool, in the file's order.
    expect(ids(await load("test-heldout"))).toEqual(ids(test).filter((id) => !ids(pool).includes(id)));
    for (const seed of [0, 1, 7]) {
      const train = ids(await load("train", seed));
      const validation = ids(await load("validation", seed));
      expect([...train, ...validation].sort()).toEqual(ids(pool).sort());
      expect(train.length).toBeGreaterThan(0);
      expect(validation.length).toBeGreaterThan(0);
      expect(ids(await load("test-heldout", seed))).toEqual(ids(await load("test-heldout", 0)));
    }
    expect(splitsOf(BENCHMARKS.math500!)).toEqual(["train", "validation", "test"]);
  });

  it("depends on the question ids only, not their order; a file with a train split keeps it", async () => {
    const tasks = Array.from({ length: 12 }, (_, i) => ({ id: `q${i}`, question: "?", gold: "1" }));
    const a = ids(searchPool(tasks).pool);
    expect(ids(searchPool([...tasks].reverse()).pool).sort()).toEqual([...a].sort());
    expect(a).toHaveLength(3);
    expect(searchPool(tasks.slice(0, 2)).pool).toEqual([]); // too small to carve
    expect(ids(await loadSplit("gsm8k", "test-heldout", { dir: FIXTURES }))).toEqual(
      ids(await loadSplit("gsm8k", "test", { dir: FIXTURES })),
    );
  });
});
