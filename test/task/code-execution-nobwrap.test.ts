// The same containment where bubblewrap is not available (HONE_NO_BWRAP=1, read once per process): the checker runs as
// a plain process and the completion gets hone_sandbox's namespaces, a read-only root and the hidden folders.
process.env.HONE_NO_BWRAP = "1";

import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { scoreAnswerAsync } from "../../src/index.ts";
import { isolationSupport, PYTHON_DIR } from "../../src/task/python-env.ts";
import { loadSplit } from "../../src/task/qa/benchmarks.ts";
import { CODE_DIR, checkCode } from "../../src/task/qa/code/check-code.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

describe("code checks without bubblewrap", () => {
  it("is really the fallback", () => expect(isolationSupport().bwrap).toBe(false));

  it("still passes a right program and fails a wrong one", async () => {
    const base = { setup: "", tests: "assert f(3) == 9", entries: ["f"], timeoutSec: 2 };
    expect((await checkCode({ ...base, program: "def f(x):\n    return x * x\n" })).passed).toBe(true);
    expect((await checkCode({ ...base, program: "def f(x):\n    return x\n" })).passed).toBe(false);
  });

  it("hides the data folder and keeps the host's files unwritten", async () => {
    const data = tempDir("hone-code-data-");
    writeFileSync(join(data, "gold.txt"), "hone-gold-1234");
    chmodSync(data, 0o755);
    const out = tempDir("hone-code-host-");
    chmodSync(out, 0o777);
    const program = `def f():\n    try:\n        open(${JSON.stringify(join(out, "x"))}, "w").write("x")\n    except OSError:\n        pass\n    try:\n        return open(${JSON.stringify(join(data, "gold.txt"))}).read()\n    except OSError:\n        return "hidden"\n`;
    const v = await checkCode({ program, setup: "", tests: "assert f() == 'hone-gold-1234'", entries: ["f"], hide: [data] });
    expect(v.passed).toBe(false);
    expect(readdirSync(out)).toEqual([]);
    const seen = await checkCode({ program, setup: "", tests: "assert f() == 'hidden'", entries: ["f"], hide: [data] });
    expect(seen.passed).toBe(true);
  });

  it("a completion that copies the gold from the data folder scores 0: the benchmark hides its folder", async () => {
    // The data folder lives outside /tmp, as hone's data folder does: under /tmp every contained call's private /tmp
    // would hide it anyway, and neither the hiding nor the control below would show anything.
    const dir = mkdtempSync("/var/tmp/hone-code-data-");
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    cpSync(join(ROOT, "test", "fixtures", "datasets", "humaneval"), join(dir, "humaneval"), { recursive: true });
    for (const d of [dir, join(dir, "humaneval")]) chmodSync(d, 0o755);
    const task = (await loadSplit("humaneval", "test", { dir }))[0]!;
    const file = join(dir, "humaneval", "HumanEval.jsonl.gz");
    chmodSync(file, 0o644);
    const thief = `    import gzip, json
    try:
        rows = [json.loads(l) for l in gzip.open(${JSON.stringify(file)}, "rt")]
    except OSError:
        return None
    ns = {}
    exec(rows[0]["prompt"] + rows[0]["canonical_solution"], ns)
    return ns["has_close_elements"](numbers, threshold)
`;
    expect(await scoreAnswerAsync("humaneval", thief, task.gold)).toEqual({ "pass@1": 0 });
    // The same theft where the folder is not hidden passes: the attack is real.
    const g = task.gold as { prompt: string; test: string };
    const open = await checkCode({
      program: g.prompt + thief,
      setup: g.prompt,
      tests: g.test,
      entries: ["has_close_elements"],
      after: "check(has_close_elements)",
    });
    expect(open.passed).toBe(true);
  });

  it("works from a checkout under /tmp, which each contained call's private /tmp hides", () => {
    const root = tempDir("hone-checkout-");
    const code = join(root, "code");
    const py = join(root, "python");
    mkdirSync(code);
    mkdirSync(py);
    for (const f of ["hone_code_checker.py", "hone_code_server.py", "hone_code_values.py"])
      copyFileSync(join(CODE_DIR, f), join(code, f));
    copyFileSync(join(PYTHON_DIR, "hone_sandbox.py"), join(py, "hone_sandbox.py"));
    const check = (program: string) => {
      const request = {
        program,
        setup: "",
        tests: "assert f(3) == 9",
        entries: ["f"],
        after: "",
        timeout: 2,
        limits: { readonly_root: true },
      };
      const p = spawnSync("python3", ["-I", join(code, "hone_code_checker.py"), py], {
        input: JSON.stringify(request),
        encoding: "utf8",
        cwd: root,
      });
      return JSON.parse(p.stdout) as { passed: boolean; result: string };
    };
    expect(root.startsWith("/tmp/")).toBe(true);
    expect(check("def f(x):\n    return x * x\n")).toMatchObject({ passed: true, result: "passed" });
    expect(check("def f(x):\n    return x\n").passed).toBe(false);
  });
});
