import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// A harness program (harness.json, any language) is changed by the methods that write folders: their proposals are
// whole folders, gated as harness programs and measured like any candidate. Spec methods cannot change one: their
// proposals are refused at the gate, saying why. The example program reads its instructions from prompt.md, the file
// the offline meta agent rewrites.

const EXAMPLE = join(ROOT, "harnesses", "examples", "program-harness");
const root = tempDir("hone-program-methods-");

function candidates(out: string) {
  const db = new Database(join(out, "hone.db"), { readonly: true });
  const rows = db.prepare("SELECT id, status, gate_error, score FROM candidates ORDER BY id").all() as {
    id: string;
    status: string;
    gate_error: string | null;
    score: number | null;
  }[];
  db.close();
  return rows;
}

const run = (method: string, out: string) =>
  hone(
    optimizeArgs({
      rounds: 1,
      proposals: 2,
      maxEvals: 3,
      seed: 1,
      out,
      extra: ["--seed-harness", EXAMPLE, "--method", method, "--executor", "offline", "--proposer", "offline"],
    }),
    { timeoutMs: 240_000 },
  );

describe("methods that write folders improve a harness program", () => {
  it.each(["meta-harness", "adas", "dgm", join(ROOT, "examples", "methods", "prompt-tweak")])(
    "%s: its folders pass the gate as harness programs and are measured",
    {
      timeout: 240_000,
    },
    async (method) => {
      const out = join(root, method);
      const r = await run(method, out);
      expect(r.code, r.stderr).toBe(0);
      const proposed = candidates(out).filter((c) => c.id !== "r00-seed");
      expect(proposed.length).toBeGreaterThan(0);
      for (const c of proposed) {
        expect(c.status, `${c.id}: ${c.gate_error}`).toBe("valid");
        expect(c.score).not.toBeNull();
        // The candidate is a harness program whose instructions the method rewrote.
        const dir = join(out, "candidates", c.id);
        expect(readdirSync(dir)).toEqual(expect.arrayContaining(["harness.json", "harness.py", "prompt.md"]));
        expect(readFileSync(join(dir, "prompt.md"), "utf8")).not.toBe(readFileSync(join(EXAMPLE, "prompt.md"), "utf8"));
      }
      // Whatever the search chose is a harness program the CLI runs as one.
      const best = join(out, "best");
      expect(readdirSync(best)).toContain("harness.json");
      const again = await hone([
        "run",
        "--task",
        "circle-packing",
        "--harness",
        best,
        "--max-evals",
        "2",
        "--out",
        join(out, "rerun"),
        "--json",
      ]);
      expect(again.code, again.stderr).toBe(0);
    },
  );

  it("a spec method's proposals are refused at the gate, naming why", { timeout: 240_000 }, async () => {
    const out = join(root, "greedy");
    const r = await run("greedy", out);
    expect(r.code, r.stderr).toBe(0);
    const proposed = candidates(out).filter((c) => c.id !== "r00-seed");
    expect(proposed.length).toBeGreaterThan(0);
    for (const c of proposed) expect(c.gate_error).toMatch(/harness is a program .* a spec cannot change it/);
  });
});
