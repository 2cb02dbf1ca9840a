import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readdirSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mbppEntries } from "../../src/task/qa/benchmarks/mbpp.ts";
import { type CodeCheck, checkCode } from "../../src/task/qa/code/check-code.ts";
import { completionText } from "../../src/task/qa/code/code-scorer.ts";
import { PY_DAEMON, survivors } from "../helpers/attacks.ts";
import { tempDir } from "../helpers/fixtures.ts";

const check = (program: string, tests: string, more: Partial<CodeCheck> = {}) =>
  checkCode({ program, setup: "", tests, entries: ["f"], timeoutSec: 2, ...more });

/** How the official harnesses run a check: everything exec'd in one interpreter; passed when nothing raises. */
function naivePasses(program: string, tests: string): boolean {
  const code = `import sys\nsrc = sys.stdin.read()\ntry:\n    exec(src, {})\nexcept BaseException:\n    sys.exit(1)\nprint("passed")`;
  try {
    return execFileSync("python3", ["-c", code], { input: `${program}\n${tests}\n`, timeout: 20_000 })
      .toString()
      .includes("passed");
  } catch {
    return false;
  }
}

describe("a completion against its tests, across the process boundary", () => {
  it("passes a right program and fails a wrong one, with the official harness's words", async () => {
    expect(await check("def f(x):\n    return x * 2\n", "assert f(2) == 4\nassert f(-1) == -2")).toMatchObject({
      passed: true,
      result: "passed",
      calls: 2,
    });
    const wrong = await check("def f(x):\n    return x + 2\n", "assert f(2) == 4\nassert f(-1) == -2");
    expect(wrong).toMatchObject({ passed: false, calls: 2 });
    expect(wrong.result).toMatch(/^failed: AssertionError/);
  });

  it("keeps 1, True and 1.0 apart, both ways, and carries every plain type", async () => {
    const tests = "r = f()\nassert type(r) is int and r == 1";
    expect((await check("def f():\n    return 1\n", tests)).passed).toBe(true);
    expect((await check("def f():\n    return True\n", tests)).passed).toBe(false);
    expect((await check("def f():\n    return 1.0\n", tests)).passed).toBe(false);
    const names = "int bool float tuple list dict set frozenset bytes NoneType int float complex str range";
    const args = "1, True, 1.0, (1,), [1], {1: 'a'}, {1}, frozenset([2]), b'x', None, 2**200, float('nan'), 1j, 'é', range(3)";
    const echo = `def f(*a):\n    return " ".join(type(x).__name__ for x in a)\n`;
    expect((await check(echo, `assert f(${args}) == ${JSON.stringify(names)}`)).passed).toBe(true);
    const back = `def f():\n    return [2**200, -7, 0.1, {'k': (1, 2)}, {3}, None, float('inf')]\n`;
    expect((await check(back, "assert f() == [2**200, -7, 0.1, {'k': (1, 2)}, {3}, None, float('inf')]")).passed).toBe(true);
  });

  it("gives a generator back as an iterator (list() works, == a list does not, as with the real one)", async () => {
    const gen = "def f(n):\n    return (i * i for i in range(n))\n";
    expect((await check(gen, "assert list(f(3)) == [0, 1, 4]")).passed).toBe(true);
    expect((await check(gen, "assert f(3) == [0, 1, 4]")).passed).toBe(false);
  });

  it("re-raises the completion's exception as the same built-in type, so tests that expect one still work", async () => {
    const raising = "def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x\n";
    const tests = "try:\n    f(-1)\n    raise AssertionError('no error')\nexcept ValueError:\n    pass";
    expect((await check(raising, tests)).passed).toBe(true);
  });

  it("fails a program that does not load, or lacks the function", async () => {
    expect((await check("def f(:\n", "assert f() == 1")).result).toMatch(/failed: the program raised SyntaxError at import/);
    expect((await check("def g():\n    return 1\n", "assert f() == 1")).result).toMatch(/NameError/);
  });

  it("reads MBPP's functions under test from the gold code and its asserts", () => {
    const code = "def rev(num):\n    return 0\ndef check(n):\n    return rev(n)\n";
    expect(mbppEntries(code, ["assert check(70) == False"])).toEqual(["check"]);
    expect(completionText("```python\ndef f():\n    return 1\n```\n")).toBe("def f():\n    return 1");
    expect(completionText("    return 1\n")).toBe("    return 1\n");
  });
});

// Each attack below would fool a harness that execs tests and completion together (shown where it does); here each
// scores 0 and the host is untouched.
describe("adversarial completions score 0", () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => server.close());

  const attacks: [string, string, string, boolean][] = [
    [
      "reads the tests through frames",
      "import sys\ndef f():\n    g = sys._getframe(1).f_globals\n    return g.get('SECRET', 'not found')\n",
      "SECRET = 'hone-secret-7f3a'\nassert f() == SECRET",
      true,
    ],
    [
      "returns an object whose __eq__ is always true",
      "class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = None\ndef f():\n    return Yes()\n",
      "assert f() == 42\nassert f() == 'anything'",
      true,
    ],
    [
      "returns an int subclass that lies about equality",
      "class Liar(int):\n    def __eq__(self, other):\n        return True\ndef f():\n    return Liar(0)\n",
      "assert f() == 42",
      true,
    ],
    [
      "patches builtins",
      "import builtins\nbuiltins.abs = lambda x: 0\ndef f(x):\n    return 0\n",
      "assert abs(f(5) - 25) < 1e-9",
      true,
    ],
    [
      "replaces a module in sys.modules",
      "import sys, types\nm = types.ModuleType('math')\nm.isclose = lambda *a, **k: True\nsys.modules['math'] = m\ndef f():\n    return 0.0\n",
      "import math\nassert math.isclose(f(), 3.14159)",
      true,
    ],
    [
      "swallows the failure by exiting with success inside the call",
      "import sys\ndef f():\n    sys.exit(0)\n",
      "assert f() == 1",
      false,
    ],
    ["exits with status 0 at import", "import os\nos._exit(0)\n", "assert f() == 1", false],
    ["hangs", "def f():\n    while True:\n        pass\n", "assert f() == 1", false],
    ["exhausts memory", "def f():\n    x = bytearray(8 << 30)\n    return 1\n", "assert f() == 1", false],
  ];

  it.each(attacks)("%s", async (_name, program, tests, fools) => {
    if (fools) expect(naivePasses(program, tests)).toBe(true);
    const v = await check(program, tests);
    expect(v.passed).toBe(false);
  });

  it("forks daemons that do not outlive the check", async () => {
    const v = await check(`${PY_DAEMON}\n_hone_daemon()\ndef f():\n    _hone_daemon()\n    return 0\n`, "assert f() == 1");
    expect(v.passed).toBe(false);
    expect(survivors()).toEqual([]);
  });

  it("cannot reach the network", async () => {
    const program = `import socket\ndef f():\n    try:\n        socket.create_connection(("127.0.0.1", ${port}), timeout=1).close()\n        return "connected"\n    except OSError as e:\n        return str(e)\n`;
    const v = await check(program, "assert f() == 'connected'");
    expect(v.passed).toBe(false);
    expect(connections).toBe(0);
  });

  it("cannot write host files", async () => {
    const dir = tempDir("hone-code-host-");
    chmodSync(dir, 0o777);
    const target = join(dir, "escaped.txt");
    const program = `def f():\n    for p in (${JSON.stringify(target)}, "/tmp/hone-code-escape.txt"):\n        try:\n            open(p, "w").write("x")\n        except OSError:\n            pass\n    return 0\n`;
    const v = await check(program, "assert f() == 1");
    expect(v.passed).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
    expect(existsSync("/tmp/hone-code-escape.txt")).toBe(false);
  });
});
