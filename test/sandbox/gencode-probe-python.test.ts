import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../../src/harness/types.ts";
import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import { defaultLimits } from "../../src/sandbox/isolate.ts";
import { pythonTools } from "../../src/sandbox/python-tool-host.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { checkPythonTool } from "../../src/task/python-tool-gate.ts";
import { coldToolChannel } from "../../src/task/tool-channel.ts";
import { makeTask } from "../helpers/fixtures.ts";

// Attacks on generated Python tools found by probing from outside: routes past the static gate (hone_tool_gate.py)
// that reach the interpreter's builtins, run strings as code or write files, and a tool that outlives its rollout.
// Each one ran arbitrary code in a tool process before the gate refused it (checked by running the code directly).

const tool = (body: string, prelude = "") => `${prelude}\ndef run(ctx, args):\n${body}\n`;

describe("the Python tool gate against routes the AST does not show as attributes", () => {
  const refused: [string, string, RegExp][] = [
    [
      // `case C(__globals__=g)` reads run.__globals__, whose __builtins__ hands out __import__.
      "a class pattern reading a function's globals",
      tool(
        "    o = int.mro()[-1]\n    match run:\n        case o(__globals__=g):\n            return g['__builtins__']['__import__']('os').getpid()\n    return 0",
      ),
      /private attribute access: \.__globals__/,
    ],
    [
      "a class pattern reading an exception's traceback",
      tool(
        "    o = int.mro()[-1]\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n        match e:\n            case o(__traceback__=t):\n                return 1\n    return 0",
      ),
      /private attribute access: \.__traceback__/,
    ],
    [
      "a class pattern reading a generator's frame",
      tool(
        "    o = int.mro()[-1]\n    g = (i for i in [1])\n    match g:\n        case o(gi_frame=f):\n            return 1\n    return 0",
      ),
      /reaches a module or a frame: \.gi_frame/,
    ],
    [
      "a class pattern taking str.format off a template",
      tool("    match '{0.__class__}':\n        case str(format=f):\n            return f(ctx)\n    return 0"),
      /\.format read by a class pattern/,
    ],
    [
      // singledispatch's register() evaluates the annotation string with the function's globals.
      "functools.singledispatch evaluating an annotation string",
      tool(
        "    @functools.singledispatch\n    def f(x):\n        return 0\n    def g(x: \"__import__('os').getpid()\"):\n        return 1\n    f.register(g)\n    return 0",
        "import functools",
      ),
      /turns strings into code or attribute access: \.singledispatch/,
    ],
    [
      "singledispatch imported by name",
      tool("    return 0", "from functools import singledispatch"),
      /forbidden name imported: singledispatch/,
    ],
    [
      // dataclasses compiles source text from the annotation names; TypedDict's functional form takes any string.
      "dataclasses compiling a TypedDict's field names",
      tool(
        "    n = \"a,)==()\\n raise ValueError(__import__('os').getcwd())\\n if 1:\\n  (self.a\"\n    return str(dataclasses.dataclass(typing.TypedDict('X', {n: int}), init=False, repr=False))",
        "import dataclasses\nimport typing",
      ),
      /turns strings into code or attribute access: \.TypedDict/,
    ],
    [
      // update_wrapper copies __annotations__ (and __dict__) from any object, a __getattr__ answering with strings.
      "functools.wraps copying annotations from a hostile object",
      tool(
        "    class W:\n        def __getattr__(self, name):\n            return {}\n    return functools.wraps(W())(run)",
        "import functools",
      ),
      /turns strings into code or attribute access: \.wraps/,
    ],
    [
      "numpy's pickle writer on an array",
      tool("    np.zeros(3).dump('/tmp/x.pkl')\n    return 0", "import numpy as np"),
      /I\/O-capable attribute: \.dump/,
    ],
  ];
  it.each(refused)("refuses %s, naming the line", async (_name, code, reason) => {
    const problems = await checkPythonTool(code);
    expect(problems.map((p) => p.message).join("\n")).toMatch(reason);
    for (const p of problems) expect(p.line).toBeGreaterThanOrEqual(1);
  });

  it("still accepts match statements whose class patterns read plain attributes", async () => {
    const code = tool(
      "    match args:\n        case {'n': int(real=n)}:\n            return n\n        case dict():\n            return 0\n    return 1",
    );
    expect(await checkPythonTool(code)).toEqual([]);
  });
});

describe("a Python tool and its rollout's deadline", () => {
  it("ends at the deadline: no further ctx call is answered and the executor sees the call cancelled", async () => {
    const task = loadTaskFolder(makeTask("def evaluate(program_path):\n    return {'combined_score': 1.0}\n"));
    const deadline = new AbortController();
    let probes = 0;
    // The host's work for the tool is not its running time: a tool probing without end would run on past the
    // rollout's end, up to the probe cap and the ctx-call cap, each probe a full evaluation.
    const evaluate = async (): Promise<Evaluation> => {
      probes++;
      if (probes === 3) deadline.abort();
      return { valid: true, score: 1, metrics: { combined_score: 1 }, artifacts: {}, seconds: 0 };
    };
    const env = new DiscoveryEnvironment({
      task: { metric: "combined_score", direction: "maximize" },
      startProgram: task.seedProgram,
      maxEvals: 3,
      evaluate,
    });
    const spec = {
      name: "prober",
      kind: "custom",
      language: "python",
      source: "def run(ctx, args):\n    while True:\n        ctx.probe()\n",
    } as unknown as ToolSpec;
    const tools = pythonTools([spec], {
      env,
      trajectory: new MemoryTrajectory(),
      limits: defaultLimits,
      maxProbes: 500,
      python: { task, channel: coldToolChannel(task) },
    });
    const out = await tools.get("prober")?.({}, deadline.signal);
    expect(out?.error).toBe(true);
    expect(out?.output).toMatch(/cancelled/);
    expect(probes).toBe(3);
  });
});
