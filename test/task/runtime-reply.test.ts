import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { PYTHON_DIR } from "../../src/task/python-env.ts";

// hone_runtime's reading of a call's reply, the rules alone: what the evaluator gets back, or the ProgramError it
// raises. The program's own process writes the reply, so only what hone's call writes may pass.
const RUN = `
import json, sys
sys.path.insert(0, sys.argv[1])
import hone_runtime as rt
out = []
for case in json.loads(sys.stdin.read()):
    try:
        kind, arg = case
        if kind == "decode":
            out.append(["value", rt._decode(arg[0].encode(), arg[1])])
        else:
            out.append(["value", rt.finite_array(json.loads(arg)).tolist()])
    except rt.ProgramError as e:
        out.append(["error", str(e)])
print(json.dumps(out))
`;
const run = (cases: [string, unknown][]) =>
  JSON.parse(execFileSync("python3", ["-c", RUN, PYTHON_DIR], { input: JSON.stringify(cases), encoding: "utf8" }));
const FORGED = ["error", "the program's process returned a reply that hone's call never writes"];

describe("hone_runtime: a call's reply", () => {
  it("passes what hone's call writes: a value, a failure's text, one result per call", () => {
    const many = JSON.stringify({
      ok: true,
      value: [
        { ok: true, value: [1, 2] },
        { ok: false, error: "ValueError: x" },
      ],
    });
    expect(
      run([
        ["decode", ['{"ok": true, "value": {"__nonfinite__": "nan"}}', null]],
        ["decode", ['{"ok": false, "error": "ZeroDivisionError: division by zero"}', null]],
        ["decode", [many, 2]],
      ]),
    ).toEqual([
      ["value", { __nonfinite__: "nan" }],
      ["error", "ZeroDivisionError: division by zero"],
      [
        "value",
        [
          { ok: true, value: [1, 2] },
          { ok: false, error: "ValueError: x" },
        ],
      ],
    ]);
  });

  it("refuses anything else: a count that is not the calls', bare non-finite tokens, fields of its own", () => {
    const results = (n: number) => JSON.stringify({ ok: true, value: Array(n).fill({ ok: true, value: 1 }) });
    expect(
      run([
        ["decode", [results(1), 2]],
        ["decode", [results(3), 2]],
        ["decode", [JSON.stringify({ ok: true, value: [1, 2] }), 2]],
        ["decode", [JSON.stringify({ ok: true, value: 1 }), 2]],
        ["decode", ['{"ok": true, "value": NaN}', null]],
        ["decode", ['{"ok": true, "value": [-Infinity]}', null]],
        ["decode", ['{"ok": true, "value": [1e999]}', null]],
        ["decode", ['{"ok": true, "value": [{"ok": true, "value": -1e400}]}', 1]],
        ["decode", [JSON.stringify({ ok: true, value: 1, score: 5 }), null]],
        ["decode", [JSON.stringify({ ok: true }), null]],
        ["decode", [JSON.stringify({ ok: 1, value: 1 }), null]],
        ["decode", [JSON.stringify({ ok: false, error: 7 }), null]],
        ["decode", [JSON.stringify([{ ok: true, value: 1 }]), null]],
      ]),
    ).toEqual(Array(13).fill(FORGED));
  });

  it("finite_array refuses non-finite floats as well as the markers", () => {
    expect(run([["finite", "[1.5, 2]"]])).toEqual([["value", [1.5, 2]]]);
    for (const bad of ["[1.0, NaN]", "[[Infinity]]", '[{"__nonfinite__": "nan"}]'])
      expect(run([["finite", bad]])[0][0]).toBe("error");
  });
});
