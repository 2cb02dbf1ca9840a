import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { INITIAL_HARNESS, tempDir, write } from "../helpers/fixtures.ts";

const ESC = "\u001b";

// A method given as a program whose stderr holds a terminal's control sequences (clear the screen, retitle the window).
const METHOD = `import json, sys
json.load(sys.stdin)
sys.stderr.write("\\x1b[2Jboom\\x1b]0;owned\\x07")
sys.exit(3)
`;

// `hone compare` logs one line per cell × seed that fails, with the error's first line: a method program's stderr
// reached the terminal raw there. The report (cell-failed.json read back) writes it out; so does the log line now.
describe("a failing cell's log line shows a program's control characters, never obeys them", () => {
  it("writes them as \\uXXXX in the 'failed' line and in the report", async () => {
    const dir = tempDir("hone-probe4-log-");
    write(join(dir, "evil", "method.json"), JSON.stringify({ name: "evil", entrypoint: "python3 evil.py", timeout: 60 }));
    write(join(dir, "evil", "evil.py"), METHOD);
    write(
      join(dir, "x.yaml"),
      `name: x
tasks:
  - name: packing
    splits: { train: [circle-packing] }
harnesses:
  - name: initial
    path: ${INITIAL_HARNESS}
methods:
  - method: ./evil
    name: evil
seeds: [0]
baseline: evil
budget: { unit: evaluator_calls, size: 15 }
search: { proposals: 1, max_evals: 3, noise_repeats: 1, concurrency: 1 }
`,
    );
    const out = join(dir, "out");
    const r = await hone(["compare", join(dir, "x.yaml"), "--out", out], { timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(7);
    const line = r.stderr.split("\n").find((l) => l.startsWith("failed "));
    expect(line).toBe(
      "failed packing+initial+evil/seed-0: the method evil exited with code 3: \\u001b[2Jboom\\u001b]0;owned\\u0007",
    );
    const error = JSON.parse(readFileSync(join(out, "packing+initial+evil", "seed-0", "cell-failed.json"), "utf8")).error;
    // The program's stderr is kept in the record, written out as escapes (the method's error names its end as one line).
    expect(error).toContain("\\u001b[2Jboom");
    expect(error).not.toContain(ESC);
    const report = await hone(["compare", "--report", out]);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).not.toContain(ESC);
    expect(report.stdout).toContain(
      "FAILED packing+initial+evil/seed-0 (no result, left out of every statistic): the method evil",
    );
  });
});
