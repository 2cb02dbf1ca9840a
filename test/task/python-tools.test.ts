import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { isolationSupport, pythonInfo } from "../../src/task/python-env.ts";
import { checkPythonTool } from "../../src/task/python-tool-gate.ts";
import {
  type CtxHandler,
  coldToolChannel,
  type PythonToolCall,
  runPythonTool,
  type ToolChannelSource,
} from "../../src/task/tool-channel.ts";
import { SURVIVOR_MARK, survivors } from "../helpers/attacks.ts";
import { makeTask, ROOT } from "../helpers/fixtures.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// Generated Python tools (custom_tools/<name>.py, `def run(ctx, args)`): the static gate refuses what HarnessTTT's
// refuses and more, each with its line; and the code runs contained whatever it does, gate or no gate — each
// runtime attack below is code the gate would refuse, run anyway to prove the second wall.

const tool = (body: string, prelude = "") => `${prelude}\ndef run(ctx, args):\n${body}\n`;

describe("the static gate on Python tools", () => {
  const refused: [string, string, RegExp][] = [
    ["import os", tool("    return 1", "import os"), /forbidden import: os/],
    ["from os import system", tool("    return 1", "from os import system"), /forbidden import: os/],
    ["an import outside the whitelist", tool("    return 1", "import urllib3"), /import not in whitelist: urllib3/],
    ["a relative import", tool("    return 1", "from . import x"), /relative imports/],
    ["a star import", tool("    return 1", "from math import *"), /star imports/],
    ["importing numpy's loader by name", tool("    return 1", "from numpy import load"), /forbidden name imported: load/],
    ["__import__", tool("    return __import__('os')"), /forbidden builtin: __import__/],
    ["open", tool("    return open('/etc/passwd').read()"), /forbidden builtin: open/],
    ["eval", tool("    return eval('1+1')"), /forbidden builtin: eval/],
    ["exec", tool("    exec('x=1')"), /forbidden builtin: exec/],
    ["compile", tool("    return compile('1', 'f', 'eval')"), /forbidden builtin: compile/],
    ["getattr with a string", tool("    return getattr(ctx, 'evaluate')()"), /forbidden builtin: getattr/],
    ["vars", tool("    return vars(ctx)"), /forbidden builtin: vars/],
    ["type", tool("    return type(ctx)"), /forbidden builtin: type/],
    ["a dunder attribute", tool("    return ctx.__class__"), /private attribute access: \.__class__/],
    ["a private attribute", tool("    return ctx._call('evaluate')"), /private attribute access: \._call/],
    ["a walk to object's subclasses", tool("    return ().__class__.__bases__[0].__subclasses__()"), /\.__class__/],
    ["a format string that walks attributes", tool("    return '{0.__class__}'.format(ctx)"), /\.format/],
    ["typing's evaluation of strings", tool("    return typing.get_type_hints(run)", "import typing"), /get_type_hints/],
    ["numpy's file loader", tool("    return np.load('x.npy')", "import numpy as np"), /I\/O-capable attribute: \.load/],
    ["pandas' CSV reader", tool("    return pd.read_csv('x')", "import pandas as pd"), /\.read_csv/],
    ["numpy's ctypes loader", tool("    return np.ctypeslib", "import numpy as np"), /\.ctypeslib/],
    ["global", tool("    global X\n    X = 1"), /global\/nonlocal/],
    ["an async run", "async def run(ctx, args):\n    return 1\n", /exactly one top-level/],
    ["two run functions", `${tool("    return 1")}${tool("    return 2")}`, /exactly one top-level/],
    ["a wrong signature", "def run(a, b):\n    return 1\n", /signature must be \(ctx, args\)/],
    ["a syntax error", "def run(ctx, args)\n    return 1\n", /syntax error/],
    ["code over 6,000 characters", tool(`    return ${"1 + ".repeat(1600)}1`), /exceeds 6000 chars/],
    [
      "nesting deep enough to break a parser",
      tool(`    return ${"(".repeat(250)}1${")".repeat(250)}`),
      /syntax error|nested too deeply/,
    ],
    ["a dunder name", tool("    return __builtins__"), /forbidden builtin: __builtins__|dunder/],
  ];
  it.each(refused)("refuses %s, naming the line", async (_name, code, reason) => {
    const problems = await checkPythonTool(code);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.map((p) => p.message).join("\n")).toMatch(reason);
    for (const p of problems) expect(p.line).toBeGreaterThanOrEqual(1);
  });

  it("accepts a plain tool with numpy, math and json", async () => {
    const code = tool(
      "    xs = np.array(args.get('xs', [1, 2]))\n    return json.dumps({'m': float(xs.mean()), 'pi': math.pi})",
      "import json, math\nimport numpy as np",
    );
    expect(await checkPythonTool(code)).toEqual([]);
  });
});

const sealedHere = isolationSupport().bwrap && pythonInfo("python3").namespaces;

describe("Python tools run contained, gate or no gate", () => {
  // Skipped with the reason where bubblewrap (or namespaces for Python) is missing; a failure on CI.
  beforeEach((ctx) =>
    requireTool(ctx, "bubblewrap", sealedHere ? undefined : (missing("bubblewrap") ?? "python3 cannot create namespaces here")),
  );
  let task: DiscoveryTask;
  let pool: EvaluatorPool;
  let evaluateDelayMs = 0;
  const ctx: CtxHandler = async (method) => {
    if (method === "get_program") return "PROGRAM";
    if (method === "evaluate") {
      await new Promise((r) => setTimeout(r, evaluateDelayMs));
      return { combined_score: 1 };
    }
    return null;
  };
  beforeAll(async () => {
    if (!sealedHere) return;
    task = loadTaskFolder(makeTask("def evaluate(program_path):\n    return {'combined_score': 1.0}\n"));
    pool = await EvaluatorPool.start(task, { size: 1 });
  });
  afterAll(() => pool?.close());
  const call = (code: string, o: Partial<PythonToolCall> = {}): PythonToolCall => ({
    code,
    args: {},
    timeoutSec: 5,
    cpuSeconds: 1,
    memoryMb: 256,
    ...o,
  });
  const sources = (): [string, ToolChannelSource][] => [
    ["warm", pool.toolChannel()],
    ["cold", coldToolChannel(task)],
  ];
  const both = async (code: string, o: Partial<PythonToolCall> = {}) => {
    const out = [];
    for (const [, s] of sources()) out.push(await runPythonTool(s, call(code, o), ctx));
    return out;
  };

  it("runs a released-style tool with HarnessTTT's ctx names", async () => {
    for (const r of await both(tool("    return {'program': ctx.get_program(), 'score': ctx.evaluate(), 'args': args}"), {
      args: { k: 2 },
    }))
      expect(r).toEqual({ ok: true, value: { program: "PROGRAM", score: { combined_score: 1 }, args: { k: 2 } } });
  });

  it("counts only its own running time: a slow ctx.evaluate on the host is not a timeout", async () => {
    // The host takes 1.5 s to answer; the tool's own limit is 1 s.
    evaluateDelayMs = 1500;
    try {
      for (const r of await both(tool("    return ctx.evaluate()"), { timeoutSec: 1 })) expect(r.ok).toBe(true);
    } finally {
      evaluateDelayMs = 0;
    }
  });

  // CPU limits are checked with a wall-clock limit far above them, so a loaded machine cannot reach it first.
  const cpuOnly = { timeoutSec: 120 };
  const runtime: [string, string, Record<string, unknown>, Partial<PythonToolCall>?][] = [
    [
      "reads no host file",
      tool(
        `    import os\n    return [os.path.exists(p) for p in ('/etc/shadow', ${JSON.stringify(`${ROOT}/package.json`)}, '/var/tmp')]`,
      ),
      { ok: true, value: [false, false, false] },
    ],
    [
      "writes no host file",
      tool(
        "    try:\n        open('/etc/hone-pwned', 'w')\n        return 'wrote'\n    except OSError:\n        return 'refused'",
      ),
      { ok: true, value: "refused" },
    ],
    [
      "has no network",
      tool(
        "    import socket\n    try:\n        socket.create_connection(('127.0.0.1', 22), timeout=1)\n        return 'connected'\n    except OSError:\n        return 'blocked'",
      ),
      { ok: true, value: "blocked" },
    ],
    [
      "sees no secret",
      tool("    import os\n    return sorted(k for k in os.environ if 'KEY' in k or 'TOKEN' in k)"),
      { ok: true, value: [] },
    ],
    ["stops at its CPU limit", tool("    while True:\n        pass"), { ok: false, kind: "cpu" }, cpuOnly],
    ["stops at its CPU limit inside C code", tool("    return sum(range(10 ** 13))"), { ok: false, kind: "cpu" }, cpuOnly],
    ["stops at its memory limit", tool("    x = bytearray(1 << 32)\n    return len(x)"), { ok: false, kind: "memory" }],
    ["stops at its own wall-clock limit", tool("    import time\n    time.sleep(30)"), { ok: false, kind: "timeout" }],
    [
      "cannot fork past the process limit",
      tool(
        "    import os\n    n = 0\n    for _ in range(300):\n        try:\n            if os.fork() == 0:\n                os.execv('/bin/sleep', ['sleep', '" +
          SURVIVOR_MARK +
          "'])\n        except OSError:\n            break\n        n += 1\n    return n < 64",
      ),
      { ok: true, value: true },
    ],
    [
      "breaks the protocol with junk on its channel",
      tool("    import os\n    os.write(3, b'not json\\n')\n    return 1"),
      { ok: false, kind: "protocol" },
    ],
    [
      "asks two ctx calls at once",
      tool(
        '    import os\n    os.write(3, b\'{"ctx": "evaluate", "args": []}\\n{"ctx": "evaluate", "args": []}\\n\')\n    return 1',
      ),
      { ok: false, kind: "protocol" },
    ],
    [
      "asks for an unknown ctx method",
      tool('    import os\n    os.write(3, b\'{"ctx": "read_file", "args": ["/etc/shadow"]}\\n\')\n    return 1'),
      { ok: false, kind: "protocol" },
    ],
    [
      "sends a message too large to read",
      tool("    import os\n    os.write(3, b'x' * (3 << 20))\n    return 1"),
      { ok: false, kind: "protocol" },
    ],
    [
      "floods the host with ctx calls",
      tool("    for _ in range(2000):\n        ctx.log('x')\n    return 1"),
      { ok: false, kind: "protocol" },
    ],
    [
      "closes its channel and hangs",
      tool("    import os, time\n    os.close(0)\n    time.sleep(30)"),
      { ok: false, kind: "timeout" },
    ],
    [
      "ends its call early with a result of its own making (as if it returned it)",
      tool(
        '    import os\n    os.write(3, b\'{"done": {"ok": true, "value": "forged"}}\\n\')\n    import time\n    time.sleep(30)',
      ),
      { ok: true, value: "forged" },
    ],
    ["returns something that is not data", tool("    return ctx"), { ok: false, kind: "error" }],
    [
      "returns data nested too deeply",
      tool("    v = []\n    for _ in range(10000):\n        v = [v]\n    return v"),
      { ok: false, kind: "error" },
    ],
    ["raises", tool("    raise ValueError('boom')"), { ok: false, kind: "error" }],
    ["exits the interpreter", tool("    raise SystemExit(0)"), { ok: false, kind: "error" }],
    ["kills its own process", tool("    import os\n    os._exit(0)"), { ok: false, kind: "crashed" }],
  ];
  it.each(runtime)("a tool that %s", async (_name, code, expected, options) => {
    for (const r of await both(code, options)) expect(r).toMatchObject(expected);
    expect(survivors()).toEqual([]);
  });

  it("reports a breach that overtakes the host's answer to its ctx call as a breach, not a crash", async () => {
    // The host answers the first ctx call only after the zygote has answered the breach with its final line: closed
    // from that side first, the host's write of its answer failed and ended the host's reading before that line.
    const twoAtOnce = runtime.find(([name]) => name === "asks two ctx calls at once")?.[1] as string;
    const slowToAnswer: CtxHandler = (method, args) => {
      for (const until = Date.now() + 300; Date.now() < until; );
      return ctx(method, args);
    };
    for (let i = 0; i < 3; i++)
      expect(await runPythonTool(pool.toolChannel(), call(twoAtOnce), slowToAnswer)).toMatchObject({
        ok: false,
        kind: "protocol",
      });
  });

  it("leaves nothing for the next call: files, processes", async () => {
    const leave = tool(
      `    import os\n    open('/tmp/baton', 'w').write('x')\n    if os.fork() == 0:\n        os.setsid()\n        os.execv('/bin/sleep', ['sleep', '${SURVIVOR_MARK}'])\n    return 1`,
    );
    const look = tool("    import os\n    return os.path.exists('/tmp/baton')");
    for (const [, s] of sources()) {
      expect(await runPythonTool(s, call(leave), ctx)).toMatchObject({ ok: true });
      expect(await runPythonTool(s, call(look), ctx)).toEqual({ ok: true, value: false });
    }
    expect(survivors()).toEqual([]);
  });
});
