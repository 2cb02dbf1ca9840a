import { execFile } from "node:child_process";
import { join } from "node:path";
import { PYTHON_DIR } from "./python-env.ts";

/** One refusal of the static gate on a generated Python tool, with its place in the source. */
export interface PythonGateProblem {
  line: number;
  col: number;
  rule: string;
  message: string;
}

/**
 * The static gate on a generated Python tool (hone_tool_gate.py: Python's own parser, HarnessTTT's rules and a
 * few more). It only parses, never runs, the code; [] means accepted.
 */
export function checkPythonTool(code: string, python = "python3"): Promise<PythonGateProblem[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      python,
      [join(PYTHON_DIR, "hone_tool_gate.py")],
      { timeout: 20_000, maxBuffer: 1 << 20, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } },
      (err, stdout) => {
        if (err) return reject(new Error(`the Python tool gate could not run (${python}): ${err.message}`));
        try {
          resolve(JSON.parse(stdout) as PythonGateProblem[]);
        } catch {
          reject(new Error("the Python tool gate gave no verdict"));
        }
      },
    );
    child.stdin?.end(JSON.stringify({ code }));
  });
}
