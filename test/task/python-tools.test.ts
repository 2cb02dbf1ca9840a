import { execFileSync, spawnSync } from "node:child_process";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { isolationSupport, PYTHON_DIR, pythonInfo } from "../../src/task/python-env.ts";
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
    // Modules reached as attributes of whitelisted modules, and frames reached as attributes of generators.
    [
      "sys through typing",
      tool("    return typing.sys.modules['os'].getpid()", "import typing"),
      /typing\.sys is the module sys/,
    ],
    ["sys.modules on any receiver", tool("    m = args['m']\n    return m.modules"), /reaches a module or a frame: \.modules/],
    [
      "builtins through dataclasses",
      tool("    return dataclasses.builtins.open('/etc/passwd')", "import dataclasses"),
      /dataclasses\.builtins is the module builtins/,
    ],
    [
      "inspect through dataclasses",
      tool("    return dataclasses.inspect.currentframe()", "import dataclasses"),
      /the module inspect/,
    ],
    [
      "sys through statistics",
      tool("    return statistics.sys.modules", "import statistics"),
      /statistics\.sys is the module sys/,
    ],
    [
      "codecs through json",
      tool("    return json.codecs.open('/etc/passwd').read()", "import json"),
      /json\.codecs is the module codecs/,
    ],
    ["copyreg through re", tool("    return re.copyreg.dispatch_table", "import re"), /re\.copyreg is the module copyreg/],
    [
      "operator's attrgetter through typing",
      tool("    return typing.operator.attrgetter('x')", "import typing"),
      /the module operator/,
    ],
    [
      "numpy.testing's tempdir",
      tool("    return np.testing.tempdir()", "import numpy as np"),
      /np\.testing is the module numpy\.testing/,
    ],
    [
      "importing a module re-exported by a whitelisted one",
      tool("    return 1", "from typing import sys"),
      /typing\.sys is the module sys/,
    ],
    [
      "importing a submodule outside the allowed ones",
      tool("    return 1", "import numpy.testing"),
      /module not allowed in a tool: numpy\.testing/,
    ],
    [
      "importing numpy's extension builder",
      tool("    return 1", "from numpy.testing._private.extbuild import build_and_import_extension"),
      /module not allowed in a tool: numpy\.testing\._private\.extbuild/,
    ],
    ["a module passed around as a value", tool("    t = typing\n    return t.sys", "import typing"), /not as a value: typing/],
    ["a module inside a container", tool("    return [dataclasses][0].sys", "import dataclasses"), /not as a value: dataclasses/],
    ["a generator's frame", tool("    g = (i for i in [1])\n    return g.gi_frame.f_globals"), /\.gi_frame/],
    ["a frame's caller", tool("    return args['frame'].f_back"), /\.f_back/],
    [
      "numpy's ctypes view of a bit generator",
      tool("    return np.random.default_rng(0).bit_generator.ctypes", "import numpy as np"),
      /\.ctypes/,
    ],
    // str.format on anything but a literal with plain fields.
    ["a format string that indexes", tool("    return '{0[k]}'.format(args)"), /forbidden \.format/],
    ["an attribute walk in a nested format spec", tool("    return '{0:{1.real}}'.format(1, 2)"), /forbidden \.format/],
    ["format_map walking attributes", tool("    return '{a.b}'.format_map(args)"), /forbidden \.format_map/],
    ["format on a template that is not a literal", tool("    t = args['t']\n    return t.format(ctx)"), /forbidden \.format/],
  ];
  it.each(refused)("refuses %s, naming the line", async (_name, code, reason) => {
    const problems = await checkPythonTool(code);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.map((p) => p.message).join("\n")).toMatch(reason);
    for (const p of problems) expect(p.line).toBeGreaterThanOrEqual(1);
  });

  // The gate runs on the host: a module the tool names and may not import is never imported there to be followed
  // (`this` prints on import, which would also leave the gate's answer unreadable).
  it.each([
    ["import this as t", "    return t.x"],
    ["from this import s", "    return s"],
    ["import this", "    return this.s"],
  ])("refuses %s without importing it on the host", async (imports, body) => {
    const problems = await checkPythonTool(tool(body, imports));
    expect(problems.map((p) => p.message).join("\n")).toMatch(/this/);
  });

  it("accepts format strings whose fields neither walk attributes nor index", async () => {
    const code = tool(
      "    left = ctx.budget_left()\n    head = 'best={:.6f} evals_left={}'.format(ctx.best_score(), left)\n" +
        "    return head + '{name!r:>{w}}'.format(name='x', w=6) + '{a}'.format_map({'a': 1})",
    );
    expect(await checkPythonTool(code)).toEqual([]);
  });

  it("accepts the allowed submodules, reached as attributes or imported", async () => {
    const code = tool(
      "    r = np.random.default_rng(0).random(3)\n    w = np.lib.stride_tricks.sliding_window_view(r, 2)\n" +
        "    return [float(np.linalg.norm(r)), npr.rand(), isinstance({}, abc.Mapping), collections.abc.Sized, w.shape]",
      "import collections\nimport numpy as np\nfrom numpy import random as npr\nfrom collections import abc",
    );
    expect(await checkPythonTool(code)).toEqual([]);
  });

  it("refuses every module that a whitelisted module holds outside the allowed ones", () => {
    // Walks what this Python's whitelisted modules really hold, two attributes deep, and puts each chain that ends on
    // a module a tool may not reach through the gate: a new numpy or Python that imports one more module is covered.
    const script = [
      "import json, sys, types, warnings",
      "warnings.simplefilter('ignore')",
      "from hone_tool_gate import check, ALLOWED_IMPORTS",
      "from hone_tool_modules import ALLOWED_MODULES, load, step",
      "found, passed = [], []",
      "def walk(root, value, path, depth):",
      "    for a in dir(value):",
      "        w = step(value, a)",
      "        if a.startswith('_') or not isinstance(w, types.ModuleType):",
      "            continue",
      "        if w.__name__ not in ALLOWED_MODULES:",
      "            found.append('%s.%s' % (path, a))",
      "        elif depth < 2:",
      "            walk(root, w, '%s.%s' % (path, a), depth + 1)",
      "for root in sorted(ALLOWED_IMPORTS):",
      "    if load(root) is not None:",
      "        walk(root, load(root), root, 1)",
      "for chain in found:",
      "    code = 'import %s\\ndef run(ctx, args):\\n    return %s.x\\n' % (chain.split('.')[0], chain)",
      "    if not check(code):",
      "        passed.append(chain)",
      "print(json.dumps({'found': len(found), 'passed': passed}))",
    ].join("\n");
    const out = execFileSync("python3", ["-c", script], { cwd: PYTHON_DIR, encoding: "utf8", timeout: 60_000 });
    const { found, passed } = JSON.parse(out) as { found: number; passed: string[] };
    expect(found).toBeGreaterThan(10);
    expect(passed).toEqual([]);
  });

  it("accepts a plain tool with numpy, math and json", async () => {
    const code = tool(
      "    xs = np.array(args.get('xs', [1, 2]))\n    return json.dumps({'m': float(xs.mean()), 'pi': math.pi})",
      "import json, math\nimport numpy as np",
    );
    expect(await checkPythonTool(code)).toEqual([]);
  });
});

describe("ctx.read_input_df, HarnessTTT's CSV reader", () => {
  // The tool's ctx without a host: read_input_sample answers from a table, pandas is a stand-in (or absent).
  const script = (body: string) =>
    [
      "import json, sys, types",
      "import hone_tool_runner as r",
      "class Ctx(r.ToolContext):",
      "    __slots__ = ('sent',)",
      "    def __init__(self):",
      "        self.sent = []",
      "    def _call(self, name, *args):",
      "        self.sent.append([name] + list(args))",
      "        return 'a,b\\n1,2\\n3,4\\n' if args[0] == 'in.csv' else r.NOT_ALLOWED",
      "fake = types.ModuleType('pandas')",
      "fake.read_csv = lambda buf, nrows: {'text': buf.read(), 'nrows': nrows}",
      body,
    ].join("\n");
  const py = (body: string) =>
    JSON.parse(execFileSync("python3", ["-c", script(body)], { cwd: PYTHON_DIR, encoding: "utf8", timeout: 30_000 }));

  it("parses the header and nrows rows of a listed input that it reads through read_input_sample", () => {
    const out = py(
      "sys.modules['pandas'] = fake\nc = Ctx()\nprint(json.dumps([c.read_input_df('in.csv', nrows=2), c.read_input_df('in.csv', 10**6), c.sent]))",
    );
    expect(out).toEqual([
      { text: "a,b\n1,2\n3,4\n", nrows: 2 },
      { text: "a,b\n1,2\n3,4\n", nrows: 4999 },
      [
        ["read_input_sample", "in.csv", 3],
        ["read_input_sample", "in.csv", 5000],
      ],
    ]);
  });

  it("refuses an input that is not listed, as HarnessTTT does (ValueError)", () => {
    const out = py(
      "sys.modules['pandas'] = fake\ntry:\n    Ctx().read_input_df('../evaluator.py')\nexcept ValueError as e:\n    print(json.dumps(str(e)))",
    );
    expect(out).toBe("input not allowed or missing: ../evaluator.py");
  });

  it("says it needs pandas where the task's Python has none (an ImportError, as HarnessTTT's)", () => {
    const out = py(
      "sys.modules['pandas'] = None\ntry:\n    Ctx().read_input_df('in.csv')\nexcept ImportError as e:\n    print(json.dumps(str(e)))",
    );
    expect(out).toMatch(/read_input_df needs pandas, which the task's Python does not have/);
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
    if (method === "read_input_sample") return "a,b\n1,2\n3,4\n";
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

  it("offers ctx.read_input_df: a DataFrame where the task's Python has pandas, else an error that says so", async () => {
    const hasPandas = spawnSync("python3", ["-c", "import pandas"]).status === 0;
    const code = tool("    df = ctx.read_input_df('in.csv', nrows=1)\n    return [len(df), [str(c) for c in df.columns]]");
    for (const r of await both(code))
      expect(r).toEqual(
        hasPandas
          ? { ok: true, value: [1, ["a", "b"]] }
          : expect.objectContaining({ ok: false, error: expect.stringMatching(/needs pandas/) }),
      );
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
