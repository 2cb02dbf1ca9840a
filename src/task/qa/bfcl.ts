import { type PyValue, parsePyJson, pyEquals, pyIn } from "./py-json.ts";

/**
 * BFCL v3's AST checker for its non-live Python categories (ShishirPatil/gorilla,
 * berkeley-function-call-leaderboard/bfcl_eval/eval_checker/ast_eval/ast_checker.py and eval_runner.py), written
 * from its rules: the calls decoded as a list of `{function: {parameter: value}}`; required parameters present,
 * no parameter outside the function's or the answer's; Python types (an int passes for a float, never the
 * reverse; a bool is not an int); strings compared after removing " ,./-_*^", lower-casing and ' → "; lists,
 * dicts and lists of dicts compared to each acceptable value; an optional parameter is one whose acceptable
 * values include ""; parallel calls matched in any order; irrelevance passes when no call is made. Function names
 * are compared as given (BFCL renames "." to "_" only for providers that cannot take dots).
 */

export type Category = "simple" | "multiple" | "parallel" | "parallel_multiple" | "irrelevance";

const TYPES: Record<string, PyValue["t"]> = {
  string: "str",
  integer: "int",
  float: "float",
  boolean: "bool",
  array: "list",
  tuple: "list",
  dict: "dict",
  any: "str",
};
const NESTED = new Set(["array", "tuple"]);

type Dict = Map<string, PyValue>;
const dict = (x: PyValue | undefined): Dict => {
  if (x?.t !== "dict") throw new Error("expected a JSON object");
  return x.v;
};
const list = (x: PyValue | undefined): PyValue[] => {
  if (x?.t !== "list") throw new Error("expected a JSON array");
  return x.v;
};
const str = (x: PyValue | undefined): string => {
  if (x?.t !== "str") throw new Error("expected a string");
  return x.v;
};
const EMPTY: PyValue = { t: "str", v: "" };

/** `get_possible_answer_type`: the type of the first acceptable value that is not "". */
function possibleAnswerType(answers: PyValue[]): PyValue["t"] | undefined {
  return answers.find((a) => !pyEquals(a, EMPTY))?.t;
}

/** `type_checker`: valid, and whether the value stands for a variable (its type is the answer's, not the schema's). */
function typeCheck(value: PyValue, answers: PyValue[], expected: PyValue["t"], nested?: PyValue["t"]) {
  const answerType = possibleAnswerType(answers);
  const isVariable = answerType !== undefined && answerType !== expected;
  if (value.t === expected) {
    if (nested === undefined) return { valid: true, isVariable };
    for (const item of answers) {
      const ok = item.t !== "list" || (value as { v: PyValue[] }).v.every((v) => typeCheck(v, item.v, nested).valid);
      if (ok) return { valid: true, isVariable };
    }
    return { valid: false, isVariable };
  }
  if (answerType !== undefined && value.t === answerType) return { valid: true, isVariable: true };
  return { valid: false, isVariable };
}

/** `standardize_string` */
const standardize = (s: string) =>
  s
    .replace(/[ ,./\-_*^]/g, "")
    .toLowerCase()
    .split("'")
    .join('"');
const std = (x: PyValue): PyValue => (x.t === "str" ? { t: "str", v: standardize(x.v) } : x);

/** Python's iteration of an acceptable value for list_checker: a list's items, or a string's characters. */
const items = (x: PyValue): PyValue[] =>
  x.t === "list" ? x.v : x.t === "str" ? Array.from(x.v).map((c) => ({ t: "str", v: c })) : [];

function listCheck(value: PyValue[], answers: PyValue[]): boolean {
  const v: PyValue = { t: "list", v: value.map(std) };
  return answers.some((a) => pyEquals(v, { t: "list", v: items(a).map(std) }));
}

function dictCheck(value: Dict, answers: PyValue[]): boolean {
  for (const answer of answers) {
    if (pyEquals(answer, EMPTY)) continue;
    const expected = dict(answer);
    let ok = true;
    for (const [key, v] of value) {
      const accepted = expected.get(key);
      if (accepted === undefined || !pyIn(std(v), items(accepted).map(std))) {
        ok = false;
        break;
      }
    }
    if (ok)
      for (const [key, accepted] of expected)
        if (!value.has(key) && !(accepted.t === "str" || pyIn(EMPTY, items(accepted)))) {
          ok = false;
          break;
        }
    if (ok) return true;
  }
  return false;
}

function listDictCheck(value: PyValue[], answers: PyValue[]): boolean {
  return answers.some((answer) => {
    const options = items(answer);
    return options.length === value.length && value.every((v, k) => dictCheck(dict(v), [options[k] as PyValue]));
  });
}

/** `simple_function_checker` for one call against one `{function: {parameter: acceptable values}}`. */
function checkCall(description: Dict, call: Dict, expectedCall: Dict): boolean {
  const answer = dict([...expectedCall.values()][0]);
  const name = str(description.get("name"));
  const parameters = dict(description.get("parameters"));
  const details = dict(parameters.get("properties"));
  const required = list(parameters.get("required") ?? { t: "list", v: [] }).map(str);
  const args = call.get(name);
  if (args === undefined) return false;
  const params = dict(args);
  if (required.some((p) => !params.has(p))) return false;
  for (const [param, raw] of params) {
    const accepted = answer.get(param);
    const detail = details.get(param);
    if (detail === undefined || accepted === undefined) return false;
    const typeName = str(dict(detail).get("type"));
    const expected = TYPES[typeName];
    if (expected === undefined) throw new Error(`unknown parameter type ${typeName}`);
    const nested = NESTED.has(typeName) ? TYPES[str(dict(dict(detail).get("items")).get("type"))] : undefined;
    if (NESTED.has(typeName) && nested === undefined) throw new Error("unknown item type");
    const value: PyValue = typeName === "float" && raw.t === "int" ? { t: "float", v: Number(raw.v) } : raw;
    const acceptedValues = items(accepted);
    const t = typeCheck(value, acceptedValues, expected, nested);
    if (!t.valid) return false;
    if (!t.isVariable) {
      if (expected === "dict") {
        if (!dictCheck(dict(value), acceptedValues)) return false;
        continue;
      }
      if (expected === "list" && nested === "dict") {
        if (!listDictCheck(list(value), acceptedValues)) return false;
        continue;
      }
      if (expected === "str") {
        if (!acceptedValues.filter((a) => a.t === "str").some((a) => pyEquals(std(value), std(a)))) return false;
        continue;
      }
      if (expected === "list") {
        if (!listCheck(list(value), acceptedValues)) return false;
        continue;
      }
    }
    if (!pyIn(value, acceptedValues)) return false;
  }
  for (const [param, accepted] of answer)
    if (!params.has(param) && !(accepted.t === "str" || pyIn(EMPTY, items(accepted)))) return false;
  return true;
}

const descriptionOf = (descriptions: PyValue[], name: string): Dict => {
  const d = descriptions.map(dict).find((x) => x.get("name")?.t === "str" && str(x.get("name")) === name);
  if (!d) throw new Error(`no description for ${name}`);
  return d;
};
const expectedName = (expectedCall: Dict) => [...expectedCall.keys()][0] as string;

/** `is_function_calling_format_output`: a list of one-key objects whose value is an object. */
function asCalls(decoded: PyValue): Dict[] | undefined {
  if (decoded.t !== "list") return undefined;
  const calls = decoded.v.map((c) => (c.t === "dict" && c.v.size === 1 && [...c.v.values()][0]?.t === "dict" ? c.v : undefined));
  return calls.every((c) => c !== undefined) ? (calls as Dict[]) : undefined;
}

/** 1 when the response passes BFCL's checker for its category, else 0. */
export function bfclAccuracy(category: Category, response: string, functionsJson: string, groundTruthJson: string): 0 | 1 {
  let decoded: PyValue;
  try {
    decoded = parsePyJson(response.trim());
  } catch {
    return category === "irrelevance" ? 1 : 0;
  }
  const calls = asCalls(decoded);
  if (category === "irrelevance") {
    const empty = !calls || calls.length === 0 || (calls.length === 1 && calls[0]?.size === 0);
    return empty ? 1 : 0;
  }
  if (!calls) return 0;
  try {
    const descriptions = list(parsePyJson(functionsJson));
    const expected = list(parsePyJson(groundTruthJson)).map(dict);
    return checkCalls(category, descriptions, calls, expected) ? 1 : 0;
  } catch {
    return 0;
  }
}

function checkCalls(category: Category, descriptions: PyValue[], calls: Dict[], expected: Dict[]): boolean {
  if (category === "parallel" || category === "parallel_multiple") {
    if (calls.length !== expected.length) return false;
    const used = new Set<number>();
    return expected.every((want) => {
      const description = descriptionOf(descriptions, expectedName(want));
      const k = calls.findIndex((c, idx) => !used.has(idx) && checkCall(description, c, want));
      if (k < 0) return false;
      used.add(k);
      return true;
    });
  }
  if (category === "multiple") {
    if (calls.length !== expected.length) return false;
    const want = expected[0] as Dict;
    return checkCall(descriptionOf(descriptions, expectedName(want)), calls[0] as Dict, want);
  }
  if (calls.length !== 1) return false;
  return checkCall(dict(descriptions[0]), calls[0] as Dict, expected[0] as Dict);
}
