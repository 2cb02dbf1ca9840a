import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { evaluatorRuntime, parseRuntime } from "../../src/task/evaluator-runtime.ts";
import { tempDir, write } from "../helpers/fixtures.ts";

describe("the evaluator's Python and numpy versions", () => {
  it("are read from the task's Python, numpy from the task's python_path first", async () => {
    const lib = tempDir("hone-lib-");
    write(join(lib, "numpy-9.9.9.dist-info", "METADATA"), "Metadata-Version: 2.1\nName: numpy\nVersion: 9.9.9\n");
    const dir = tempDir("hone-task-");
    const r = await evaluatorRuntime({ python: "python3", pythonPath: [lib], dir });
    expect(r?.python).toMatch(/^3\.\d+\.\d+/);
    expect(r?.numpy).toBe("9.9.9");
  });

  it("follow a PYTHONPATH the task's env: sets, which replaces the python_path its evaluations search", async () => {
    const lib = tempDir("hone-lib-");
    write(join(lib, "numpy-9.9.9.dist-info", "METADATA"), "Metadata-Version: 2.1\nName: numpy\nVersion: 9.9.9\n");
    const other = tempDir("hone-envlib-");
    write(join(other, "numpy-7.7.7.dist-info", "METADATA"), "Metadata-Version: 2.1\nName: numpy\nVersion: 7.7.7\n");
    const dir = tempDir("hone-task-");
    const r = await evaluatorRuntime({ python: "python3", pythonPath: [lib], dir, env: { PYTHONPATH: other } });
    expect(r?.numpy).toBe("7.7.7");
  });

  it("run none of the task's code: a module in the task folder that shadows the probe's is never imported", async () => {
    const dir = tempDir("hone-task-");
    const marker = join(tempDir(), "ran");
    const code = `open(${JSON.stringify(marker)}, "w").write("x")\n`;
    for (const m of ["json", "importlib/__init__", "sys"]) write(join(dir, `${m}.py`), code);
    const r = await evaluatorRuntime({ python: "python3", pythonPath: [dir], dir });
    expect(r?.python).toMatch(/^3\./);
    expect(existsSync(marker)).toBe(false);
  });

  it("are undefined for an interpreter that cannot be started, and refuse output that is not versions", async () => {
    expect(await evaluatorRuntime({ python: "/nonexistent/python", pythonPath: [], dir: tempDir() })).toBeUndefined();
    expect(parseRuntime('{"python": "3.11.2", "numpy": "1.26.4"}')).toEqual({ python: "3.11.2", numpy: "1.26.4" });
    expect(parseRuntime('{"python": "3.11.2\\u0007 evil", "numpy": null}')).toBeUndefined();
    expect(parseRuntime('{"python": "3.11.2", "numpy": {"x": 1}}')).toEqual({ python: "3.11.2", numpy: null });
    expect(parseRuntime("not json")).toBeUndefined();
  });
});
