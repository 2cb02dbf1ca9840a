import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { PYTHON_DIR } from "../../src/task/python-env.ts";
import { checkPythonTool } from "../../src/task/python-tool-gate.ts";

// Routes past the Python tool gate found by probing from outside, each checked by running the accepted code directly
// first: numpy views of raw memory (read and write any object in the tool's process, the gate's rules with it), a
// class hook numpy calls by name (`__getattr__` answering `__array_interface__` with an array at any address), the
// road to `type` (typing.get_origin), classes built from strings (make_dataclass), and a dataclass field renamed after
// the fact, which dataclasses compiles into source text (arbitrary code: the payload ran).

const tool = (body: string, prelude = "") => `${prelude}\ndef run(ctx, args):\n${body}\n`;

/** A payload that, if dataclasses compiles it, raises an error naming itself. */
const PAYLOAD = "a,)==()\\n raise ValueError('PWNED')\\n if 1:\\n  (self.a";

describe("the Python tool gate against raw memory, class hooks and classes from strings", () => {
  const refused: [string, string, RegExp][] = [
    [
      "numpy's as_strided reading past its array",
      tool(
        "    a = np.zeros(8, dtype=np.uint8)\n    s = 'hidden'\n    v = np.lib.stride_tricks.as_strided(a, shape=(2,), strides=(id(s) - id(a),))\n    return int(v[1])",
        "import numpy as np",
      ),
      /views raw memory: \.as_strided/,
    ],
    [
      // A bytearray holding any address, read by numpy as an object pointer: any object, or a forged one.
      "np.ndarray over a buffer of object pointers",
      tool(
        "    s = 'hidden'\n    return np.ndarray((1,), 'O', bytearray(id(s).to_bytes(8, 'little')))[0] is s",
        "import numpy as np",
      ),
      /ndarray is named only as isinstance's or issubclass's class/,
    ],
    [
      "numpy.typing.NDArray called as the ndarray it aliases",
      tool("    return npt.NDArray((1,), 'O', bytearray(8))[0]", "import numpy.typing as npt"),
      /NDArray is named only as isinstance's or issubclass's class/,
    ],
    [
      "ndarray reached as a base class through mro()",
      tool("    return np.ma.MaskedArray.mro()[1]((1,), 'O', bytearray(8))[0]", "import numpy as np"),
      /views raw memory: \.mro/,
    ],
    [
      "a subclass of ndarray",
      tool("    return M((1,), 'O', bytearray(8))[0]", "import numpy as np\nclass M(np.ndarray):\n    pass"),
      /ndarray is named only/,
    ],
    [
      "ndarray as a dataclass field's type, read back with dataclasses.fields",
      tool(
        "    @dataclasses.dataclass\n    class C:\n        x: np.ndarray\n    return dataclasses.fields(C)[0].type((1,), 'O', bytearray(8))[0]",
        "import dataclasses\nimport numpy as np",
      ),
      /forbidden \.type: a dataclass field's type is the class it names/,
    ],
    [
      "numpy.rec building object records from bytes",
      tool("    return np.rec.fromstring(bytes(8), dtype=[('a', 'O')])[0][0]", "import numpy as np"),
      /np\.rec is the module numpy\.rec/,
    ],
    [
      "np.recarray over a buffer",
      tool("    return np.recarray((1,), [('a', 'O')], buf=bytearray(8))[0][0]", "import numpy as np"),
      /views raw memory: \.recarray/,
    ],
    // pandas (checked by name: the gate needs no pandas for these): a plotting backend is a module imported by name,
    // an accessor is a class attribute of any name, to_string given a path writes a file.
    [
      "a pandas plotting backend imported by name",
      tool("    return pd.DataFrame({'a': [1]}).plot(backend='antigravity')", "import pandas as pd"),
      /turns strings into code or attribute access: \.plot/,
    ],
    [
      "a pandas accessor registered under a dunder name",
      tool("    return pd.api.extensions.register_dataframe_accessor('__array_interface__')", "import pandas as pd"),
      /\.register_dataframe_accessor/,
    ],
    [
      "DataFrame.to_string writing a file",
      tool("    return pd.DataFrame({'a': [1]}).to_string('/tmp/x.txt')", "import pandas as pd"),
      /\.to_string with a buffer or path/,
    ],
    [
      "DataFrame.to_string taken as a value",
      tool("    f = pd.DataFrame({'a': [1]}).to_string\n    return f(buf='/tmp/x')", "import pandas as pd"),
      /\.to_string as a value/,
    ],
    [
      "pandas' Excel writer",
      tool("    return pd.ExcelWriter('/tmp/x.xlsx')", "import pandas as pd"),
      /I\/O-capable attribute: \.ExcelWriter/,
    ],
    [
      "as_strided imported by name",
      tool("    return 0", "from numpy.lib.stride_tricks import as_strided"),
      /forbidden name imported: as_strided/,
    ],
    [
      "numpy's byte_bounds telling an array's address",
      tool("    return np.lib.array_utils.byte_bounds(np.zeros(2))", "import numpy as np"),
      /views raw memory: \.byte_bounds/,
    ],
    [
      // np.asarray asks the instance for __array_interface__: an array over any address, writable.
      "a __getattr__ answering numpy's __array_interface__",
      tool(
        "    s = 'hidden'\n    return bytes(np.asarray(Raw(id(s)))).hex()",
        "import numpy as np\nclass Raw:\n    def __init__(self, addr):\n        self.addr = addr\n    def __getattr__(self, key):\n        if key != '__array_interface__':\n            raise AttributeError(key)\n        return {'data': (self.addr, False), 'shape': (64,), 'typestr': '|u1', 'version': 3}",
      ),
      /may not define __getattr__/,
    ],
    [
      "a descriptor's __get__",
      tool("    return 0", "class D:\n    def __get__(self, obj, owner):\n        return obj"),
      /may not define __get__/,
    ],
    [
      "__init_subclass__",
      tool("    return 0", "class B:\n    def __init_subclass__(cls, **kw):\n        pass"),
      /may not define __init_subclass__/,
    ],
    [
      "__reduce__",
      tool("    return 0", "class P:\n    def __reduce__(self):\n        return (print, ('x',))"),
      /may not define __reduce__/,
    ],
    [
      // typing.get_origin(typing.Type) is the builtin type: a class from a dict of any names.
      "typing.get_origin handing out type",
      tool("    T = typing.get_origin(typing.Type)\n    return str(T('X', (), {'__getattr__': run}))", "import typing"),
      /turns strings into code or attribute access: \.get_origin/,
    ],
    [
      // typing re-exports abc.ABCMeta: a metaclass builds a class from a dict, here with a __getattr__ hook that numpy
      // asks for __array_interface__ (the gate refused the def, not the dict key).
      "typing.ABCMeta building a class with a __getattr__ hook from a dict",
      tool(
        "    Raw = typing.ABCMeta('Raw', (), {'__getattr__': hook})\n    r = Raw()\n    r.addr = id(args)\n    return bytes(np.asarray(r)).hex()",
        "import typing\nimport numpy as np\ndef hook(self, key):\n    if key != '__array_interface__':\n        raise AttributeError(key)\n    return {'data': (self.addr, False), 'shape': (64,), 'typestr': '|u1', 'version': 3}",
      ),
      /typing\.ABCMeta is a metaclass/,
    ],
    ["a metaclass imported by name", tool("    return M", "from typing import ABCMeta as M"), /typing\.ABCMeta is a metaclass/],
    [
      "dataclasses.make_dataclass with a namespace of any names",
      tool("    return str(dataclasses.make_dataclass('X', [], namespace={'__getattr__': run}))", "import dataclasses"),
      /turns strings into code or attribute access: \.make_dataclass/,
    ],
  ];
  it.each(refused)("refuses %s, naming the line", async (_name, code, reason) => {
    const problems = await checkPythonTool(code);
    expect(problems.map((p) => p.message).join("\n")).toMatch(reason);
    for (const p of problems) expect(p.line).toBeGreaterThanOrEqual(1);
  });

  it("still accepts DataFrame.to_string called bare or with formatting options", async () => {
    const code = tool(
      "    df = pd.DataFrame(args)\n    return df.to_string() + df.to_string(index=False, max_rows=5)",
      "import pandas as pd",
    );
    expect(await checkPythonTool(code)).toEqual([]);
  });

  it("still accepts ndarray in isinstance, issubclass, a def's annotations and a local variable's", async () => {
    const code = tool(
      "    a: np.ndarray = np.zeros(3)\n    return [isinstance(a, np.ndarray), isinstance(a, (list, ndarray)), issubclass(list, np.ndarray), f(a).shape]",
      "import typing\nimport numpy as np\nimport numpy.typing as npt\nfrom numpy import ndarray\n" +
        "class Shape(typing.Protocol):\n    def area(self) -> float:\n        ...\n" +
        "def f(x: np.ndarray, y: npt.NDArray[np.float64] | None = None) -> np.ndarray:\n    return x",
    );
    expect(await checkPythonTool(code)).toEqual([]);
  });

  it("still accepts array-typed dataclass fields, typing.cast, .view, text fromstring and more protocol methods", async () => {
    // Ordinary generated code the first version of these rules refused (found by review).
    const code = tool(
      "    r = R(np.zeros(2), np.ones(2))\n    x = typing.cast(np.ndarray, r.values).view(np.ndarray)\n" +
        "    return [x.shape, np.fromstring('1 2 3', sep=' ').tolist(), format(V(2), '>4'), [0, 1, 2][V(1)]]",
      "import dataclasses\nimport typing\nimport numpy as np\nimport numpy.typing as npt\n" +
        "@dataclasses.dataclass\nclass R:\n    values: np.ndarray\n    w: npt.NDArray[np.float64]\n" +
        "class V:\n    def __init__(self, v):\n        self.v = v\n    def __format__(self, spec):\n        return format(self.v, spec)\n" +
        "    def __index__(self):\n        return self.v\n",
    );
    expect(await checkPythonTool(code)).toEqual([]);
  });

  it("refuses np.fromstring over bytes (no text separator)", async () => {
    const code = tool("    return np.fromstring(bytes(8), dtype='O')", "import numpy as np");
    expect(JSON.stringify(await checkPythonTool(code))).toMatch(/views raw memory: \.fromstring/);
  });

  it("still accepts classes with ordinary protocol methods, dataclasses and sliding windows", async () => {
    const code = tool(
      "    w = np.lib.stride_tricks.sliding_window_view(np.arange(5), 2)\n    return [repr(V(1) + V(2)), V(1) < V(2), P(1.0).x, w.shape]",
      "import dataclasses\nimport numpy as np\n" +
        "class V:\n    def __init__(self, x):\n        self.x = x\n    def __add__(self, o):\n        return V(self.x + o.x)\n" +
        "    def __lt__(self, o):\n        return self.x < o.x\n    def __repr__(self):\n        return 'V(%d)' % self.x\n" +
        "@dataclasses.dataclass(order=True)\nclass P:\n    x: float\n    tags: list = dataclasses.field(default_factory=list)",
    );
    expect(await checkPythonTool(code)).toEqual([]);
  });
});

describe("a dataclass field renamed after the fact, in the tool's process", () => {
  // The gate cannot see a renamed field (`f.name = ...` is an ordinary attribute write); the tool's process refuses it.
  // hone_tool_runner's target runs here directly (the layer under test; the sandbox around it is tested elsewhere).
  const runTarget = (code: string) => {
    const script = ["import sys", "import hone_tool_runner as r", "sys.stdout.write(r.tool_target(sys.argv[1], {})(None))"].join(
      "\n",
    );
    const out = execFileSync("python3", ["-c", script, code], {
      cwd: PYTHON_DIR,
      encoding: "utf8",
      timeout: 30_000,
      stdio: ["ignore", "pipe", "pipe"],
    });
    return (JSON.parse(out) as { done: { ok: boolean; value?: unknown; kind?: string; error?: string } }).done;
  };

  const renamed: [string, string][] = [
    [
      "a field taken from dataclasses.fields",
      tool(
        `    f = dataclasses.fields(A)[0]\n    f.name = "${PAYLOAD}"\n    @dataclasses.dataclass(init=False, repr=False)\n    class B(A):\n        b: int = 0\n    return str(B)`,
        "import dataclasses\n@dataclasses.dataclass\nclass A:\n    a: int = 0",
      ),
    ],
    [
      "a field object kept from dataclasses.field",
      tool(
        `    f = dataclasses.field(default=0)\n    @dataclasses.dataclass\n    class A:\n        a: int = f\n    f.name = "${PAYLOAD}"\n    @dataclasses.dataclass(init=False, repr=False)\n    class B(A):\n        b: int = 0\n    return str(B)`,
        "import dataclasses",
      ),
    ],
    [
      "a Field subclass whose own name attribute is a plain one",
      tool(
        `    f = F(0, dataclasses.MISSING, True, True, None, True, None, False)\n    @dataclasses.dataclass\n    class A:\n        a: int = f\n    f.name = "${PAYLOAD}"\n    @dataclasses.dataclass(init=False, repr=False)\n    class B(A):\n        b: int = 0\n    return str(B)`,
        "import dataclasses\nclass F(dataclasses.Field):\n    name = None",
      ),
    ],
    [
      "a field renamed to a private name, which asdict would read with getattr",
      tool(
        "    f = dataclasses.fields(A)[0]\n    f.name = '_helper'\n    return str(dataclasses.asdict(A()))",
        "import dataclasses\n@dataclasses.dataclass\nclass A:\n    a: int = 0",
      ),
    ],
    [
      "a field renamed to a dunder, which asdict reads with getattr",
      tool(
        "    f = dataclasses.fields(A)[0]\n    f.name = '__class__'\n    return str(dataclasses.asdict(A()))",
        "import dataclasses\n@dataclasses.dataclass\nclass A:\n    a: int = 0",
      ),
    ],
  ];
  it.each(renamed)("passes the gate and is refused when the tool runs: %s", async (_name, code) => {
    expect(await checkPythonTool(code)).toEqual([]);
    const done = runTarget(code);
    expect(done.ok).toBe(false);
    expect(done.error).not.toMatch(/^ValueError: PWNED/);
    expect(done.error).toMatch(
      /dataclass field name must be an identifier not starting with __|dataclass field is named once|may not subclass dataclasses\.Field/,
    );
  });

  it("leaves ordinary dataclasses working (fields, replace, asdict, order, KW_ONLY)", () => {
    const code = tool(
      "    p = P(1.0, 2.0)\n    q = dataclasses.replace(p, x=5.0)\n    return [dataclasses.asdict(q), repr(p), p < q, [f.name for f in dataclasses.fields(P)]]",
      "import dataclasses\n@dataclasses.dataclass(order=True)\nclass P:\n    x: float\n    y: float = 0.0\n    _: dataclasses.KW_ONLY\n    z: int = 3",
    );
    expect(runTarget(code)).toEqual({
      ok: true,
      value: [{ x: 5, y: 2, z: 3 }, "P(x=1.0, y=2.0, z=3)", true, ["x", "y", "z"]],
    });
  });
});
