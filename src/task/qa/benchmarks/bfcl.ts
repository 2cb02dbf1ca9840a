import type { BenchmarkDef, Gold, QATask } from "../benchmark.ts";
import { bfclAccuracy, type Category } from "../bfcl.ts";
import { type PyValue, parsePyJson, toPyJson } from "../py-json.ts";
import { field, readDataFile, readJsonl } from "../readers.ts";

/** The last commit of gorilla with BFCL v3's files (BFCL v4 renamed them). */
const COMMIT = "cd9429ccf3d4d04156affe883c495b3b047e6b64";
const base = `https://raw.githubusercontent.com/ShishirPatil/gorilla/${COMMIT}/berkeley-function-call-leaderboard/bfcl_eval/data`;

interface BfclGold {
  functions: string;
  ground_truth: string;
}
function bfclGold(id: string, gold: Gold): BfclGold {
  const g = gold as Partial<BfclGold> | null;
  if (!g || typeof g !== "object" || typeof g.functions !== "string" || typeof g.ground_truth !== "string")
    throw new Error(`${id}: the gold answer is {functions, ground_truth} as JSON text`);
  return g as BfclGold;
}

/** The question's turns and the functions, then how to answer. */
function questionText(r: Record<string, unknown>): string {
  const turns = Array.isArray(r.question) ? (r.question as { role?: string; content?: string }[][]).flat() : [];
  const said = turns.map((m) => (m.role === "user" ? String(m.content ?? "") : `(${m.role}) ${String(m.content ?? "")}`));
  return `${said.join("\n")}\n\nFunctions you can call (JSON Schema):\n${JSON.stringify(r.function, null, 1)}`;
}

/** Possible answers by id, each ground truth kept as Python would read it (5 is not 5.0). */
function possibleAnswers(file: string): Map<string, string> {
  const out = new Map<string, string>();
  readDataFile(file)
    .toString("utf8")
    .split("\n")
    .filter((l) => l.trim())
    .forEach((line) => {
      const row = parsePyJson(line);
      if (row.t !== "dict") throw new Error(`${file}: a line is not an object`);
      const id = row.v.get("id");
      const truth = row.v.get("ground_truth");
      if (id?.t !== "str" || !truth) throw new Error(`${file}: a line has no id or ground_truth`);
      out.set(id.v, toPyJson(truth));
    });
  return out;
}

const isEmpty = (o: PyValue) => o.t === "str" && o.v === "";
const firstOption = (options: PyValue) => (options.t === "list" ? options.v.find((o) => !isEmpty(o)) : undefined);

/** A dict-typed answer holds acceptable values per key: the oracle takes each key's first one. */
function firstOfEach(d: PyValue): PyValue {
  if (d.t !== "dict") return d;
  const out = new Map<string, PyValue>();
  for (const [k, options] of d.v) {
    const first = firstOption(options);
    if (first) out.set(k, first);
  }
  return { t: "dict", v: out };
}

/** The calls an oracle makes: each parameter's first acceptable value ("" marks an optional one: left out). */
export function oracleCalls(groundTruth: string, functionsJson: string): PyValue {
  const truth = parsePyJson(groundTruth);
  const functions = JSON.parse(functionsJson) as {
    name: string;
    parameters?: { properties?: Record<string, { type?: string; items?: { type?: string } }> };
  }[];
  if (truth.t !== "list") throw new Error("ground_truth is a list");
  return {
    t: "list",
    v: truth.v.map((call) => {
      if (call.t !== "dict") throw new Error("a ground-truth call is an object");
      const [[name, params]] = [...call.v] as [[string, PyValue]];
      const schema = functions.find((f) => f.name === name)?.parameters?.properties ?? {};
      const args = new Map<string, PyValue>();
      if (params.t === "dict")
        for (const [p, options] of params.v) {
          const first = firstOption(options);
          if (!first) continue;
          const type = schema[p]?.type;
          if (type === "dict") args.set(p, firstOfEach(first));
          else if (type === "array" && schema[p]?.items?.type === "dict" && first.t === "list")
            args.set(p, { t: "list", v: first.v.map(firstOfEach) });
          else args.set(p, first);
        }
      return { t: "dict", v: new Map([[name, { t: "dict", v: args }]]) } as PyValue;
    }),
  };
}

/** A plausible wrong call: the first argument changed (a number plus one, a flipped bool, another string). */
function perturbed(calls: PyValue): PyValue {
  const copy = parsePyJson(toPyJson(calls));
  const first = copy.t === "list" ? copy.v[0] : undefined;
  const args = first?.t === "dict" ? [...first.v.values()][0] : undefined;
  if (args?.t !== "dict" || args.v.size === 0) {
    if (first?.t === "dict") first.v = new Map([[`${[...first.v.keys()][0]}_other`, args ?? { t: "dict", v: new Map() }]]);
    return copy;
  }
  const [key, v] = [...args.v][0] as [string, PyValue];
  const changed: PyValue =
    v.t === "int"
      ? { t: "int", v: v.v + 1n }
      : v.t === "float"
        ? { t: "float", v: v.v + 1 }
        : v.t === "bool"
          ? { t: "bool", v: !v.v }
          : v.t === "str"
            ? { t: "str", v: `${v.v}qz` }
            : { t: "list", v: [] };
  args.v.set(key, changed);
  return copy;
}

export function bfclBenchmark(category: Category, size: number): BenchmarkDef {
  const id = `bfcl-${category.replace("_", "-")}`;
  const data = `BFCL_v3_${category}.json`;
  const answers = `possible_answer/BFCL_v3_${category}.json`;
  return {
    id,
    title: `BFCL v3 ${category} (non-live, AST)`,
    licence: "Apache-2.0",
    homepage: "https://gorilla.cs.berkeley.edu/leaderboard.html",
    files: [
      { name: data, url: `${base}/${data}`, ...SHA[data] },
      ...(category === "irrelevance" ? [] : [{ name: answers, url: `${base}/${answers}`, ...SHA[answers] }]),
    ],
    sizes: { test: size },
    load: (dir) => {
      const truth = category === "irrelevance" ? new Map<string, string>() : possibleAnswers(`${dir}/${answers}`);
      const test: QATask[] = readJsonl(`${dir}/${data}`).map((r, i) => {
        const taskId = field(r, "id", `${data}:${i + 1}`);
        const ground_truth = category === "irrelevance" ? "[]" : truth.get(taskId);
        if (ground_truth === undefined) throw new Error(`${answers} has no answer for ${taskId}`);
        return { id: taskId, question: questionText(r), gold: { functions: JSON.stringify(r.function), ground_truth } };
      });
      return { test };
    },
    scorer: {
      metrics: ["accuracy"],
      score: "accuracy",
      apply: (response, gold) => {
        const g = bfclGold(id, gold);
        return { accuracy: bfclAccuracy(category, response, g.functions, g.ground_truth) };
      },
      extract: (response) => response.trim().slice(0, 200),
    },
    answerFormat: 'a JSON list of calls, [{"function_name": {"argument": value}}], or [] when no function fits',
    oracleAnswer: (gold) => {
      const g = bfclGold(id, gold);
      return toPyJson(oracleCalls(g.ground_truth, g.functions));
    },
    wrongAnswer: (gold) => {
      const g = bfclGold(id, gold);
      if (category === "irrelevance") {
        const fns = JSON.parse(g.functions) as { name: string }[];
        return JSON.stringify([{ [fns[0]?.name ?? "search"]: {} }]);
      }
      return toPyJson(perturbed(oracleCalls(g.ground_truth, g.functions)));
    },
  };
}

const SHA: Record<string, { sha256: string; bytes: number }> = {
  "BFCL_v3_simple.json": { sha256: "fbc37b2ad252bf9af985582e0e07b456173fe627d957491472ea9cef5fb83158", bytes: 280474 },
  "possible_answer/BFCL_v3_simple.json": {
    sha256: "2911a2bc00df82c4f999ffa64fedb0164cb88e96212ffa5972087eb91fd496ee",
    bytes: 60809,
  },
  "BFCL_v3_multiple.json": { sha256: "aef168155ebd74b7ac2401198b201343bc7d16d7a3d7e0d4e6d8ee82c6969b2a", bytes: 316583 },
  "possible_answer/BFCL_v3_multiple.json": {
    sha256: "244e00ce9395df948bcafc7bee64e8f9c87ef70887587d83cae45b13699f3047",
    bytes: 32254,
  },
  "BFCL_v3_parallel.json": { sha256: "fad375d68295776efb63e5aa331dd884f8635e7bb50e05908113c74f14281c3c", bytes: 172094 },
  "possible_answer/BFCL_v3_parallel.json": {
    sha256: "3af54bf04e5b7640b03a9b6a82440f52474feb24b398f94435fd2b155c7727de",
    bytes: 65905,
  },
  "BFCL_v3_parallel_multiple.json": { sha256: "8863ea8433239f55c5f016154cf0830853c89f693c6ea270396a2fa121960579", bytes: 347080 },
  "possible_answer/BFCL_v3_parallel_multiple.json": {
    sha256: "5ebf24f458c1f16300c05505d83d6f0a1b68b79be273a033febd0d4f840507e3",
    bytes: 74602,
  },
  "BFCL_v3_irrelevance.json": { sha256: "8237162db28f3cf2e3f7d0b0380333fdf829c2ff15234506b0f2205399c8c655", bytes: 160120 },
};
