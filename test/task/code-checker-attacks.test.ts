import { describe, expect, it } from "vitest";
import { checkCode } from "../../src/task/qa/code/check-code.ts";
import { officialPasses } from "../helpers/official-python.ts";

const check = (program: string, tests: string) => checkCode({ program, setup: "", tests, entries: ["f"], timeoutSec: 3 });

// A hostile completion against the checker: what it passes must be what the official single program passes, and
// the trusted process must stay bounded whatever the completion hands it.
describe("the checker against a hostile completion", () => {
  const lazy: [string, string, string, boolean][] = [
    [
      "a generator that raises when read does not raise at the call",
      "def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    yield x\n",
      "try:\n    f(-1)\nexcept ValueError:\n    pass\nelse:\n    raise AssertionError('f(-1) should raise')",
      false,
    ],
    [
      "a generator's exception comes where the reading meets it",
      "def f():\n    yield 1\n    raise ValueError('late')\n",
      "g = f()\nassert next(g) == 1\ntry:\n    next(g)\n    raise AssertionError('no error')\nexcept ValueError as e:\n    assert e.args == ('late',)",
      true,
    ],
    [
      "a map whose later item fails, read only so far",
      "def f(xs):\n    return map(lambda v: 1 // v, xs)\n",
      "assert next(f([1, 0])) == 1",
      true,
    ],
  ];
  it.each(lazy)("%s", async (_name, program, tests, official) => {
    expect(officialPasses(program, tests)).toBe(official);
    const v = await check(program, tests);
    expect(v.passed, v.result).toBe(official);
  });

  // The official single program lets these pass (the tests read the program's names); hone may not: a name the tests
  // read from the program is a real module or a call, never a value the completion picked as the expected side.
  const forged: [string, string, string][] = [
    [
      "an object posing as sys",
      "class _S:\n    def getsizeof(self, t):\n        return 0\nsys = _S()\ndef f(t):\n    return 0\n",
      "assert f((1, 2)) == sys.getsizeof((1, 2))",
    ],
    ["a constant the tests compare with", "pi = 0\ndef f():\n    return 0\n", "assert f() == pi"],
    [
      "an object posing as math",
      "class _M:\n    def isclose(self, *a, **k):\n        return True\nmath = _M()\ndef f(x):\n    return -1\n",
      "assert math.isclose(f(1), 3.0)",
    ],
  ];
  it.each(forged)("does not let the completion choose the expected side: %s", async (_name, program, tests) => {
    const v = await check(program, tests);
    expect(v.passed, v.result).toBe(false);
  });

  it("imports no module's script for a name the tests use (venv.__main__, CPython's test suite)", async () => {
    for (const name of ["venv.__main__", "test.autotest", "unittest.__main__"]) {
      const program = `import types\nmath = types.ModuleType(${JSON.stringify(name)})\ndef f():\n    return 1\n`;
      const tests = "try:\n    math\nexcept NameError:\n    pass\nassert f() == 1";
      expect(officialPasses(program, tests)).toBe(true);
      const v = await check(program, tests);
      expect(v.passed, `${name}: ${v.result}`).toBe(true);
    }
  });

  it("limits the trusted process's own memory and CPU: the tests compute on the completion's values there", async () => {
    const limits =
      "import resource\nm = resource.getrlimit(resource.RLIMIT_AS)[0]\nassert m != resource.RLIM_INFINITY and m <= 3 << 30, m\n" +
      "c = resource.getrlimit(resource.RLIMIT_CPU)[0]\nassert c != resource.RLIM_INFINITY and c <= 20, c\nassert f() == 1";
    const v = await check("def f():\n    return 1\n", limits);
    expect(v.passed, v.result).toBe(true);
    const big = await check("def f():\n    return range(10**8)\n", "assert list(f())[:2] == [0, 1]");
    expect(big).toMatchObject({ passed: false, result: "failed: MemoryError: " });
  });

  it("no text of the completion's that the tests print can stand as the verdict when the checker dies", async () => {
    // The tests make a set of ints the completion chose to share one hash: quadratic work inside one C call, which
    // never returns to the interpreter, so the CPU limit's kill ends the checker without a verdict of its own.
    const program =
      'def f(n):\n    if n == 0:\n        return \'x\' * 20000 + \'\\n\' + \'{"passed": true, "result": "passed", "calls": 1}\'\n' +
      "    return [((1 << 61) - 1) * i for i in range(1, 200001)]\n";
    const v = await check(program, "print(f(0))\nassert len(set(f(1))) == 200000");
    expect(v.passed, v.result).toBe(false);
  }, 60_000);
});
