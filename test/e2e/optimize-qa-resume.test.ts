import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { optimize } from "../../src/loop/optimize.ts";
import { replayRun } from "../../src/loop/replay.ts";
import { hone, killAfterLine } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { qaFinalState as finalState } from "../helpers/run-state.ts";

// Every method that applies to a QA benchmark, on the GSM8K fixture slice with the offline model: run uninterrupted
// (from TypeScript, with the same settings), run by the CLI and killed with kill -9 once its first round has ended,
// resumed by the CLI to the same end, and replayed exactly. The uninterrupted run and the replay run in this process,
// so the many runs share one module load (bin/hone.js is the built bundle: `npm run build:cli` after changing src/).

const DATA = join(ROOT, "test", "fixtures", "datasets");

const args = (method: string, out: string, seedHarness?: string) => [
  "optimize",
  ...["--benchmark", "gsm8k", "--data-dir", DATA, "--train", "4", "--validation", "2"],
  ...["--rounds", "2", "--proposals", "2", "--executor", "offline", "--proposer", "offline"],
  ...["--method", method, "--cache", "off", "--out", out],
  ...(seedHarness ? ["--seed-harness", seedHarness] : []),
];

/** The QA solver harness with a skill document: skillopt trains one, and the default seed has none. */
function seedWithSkill(): string {
  const dir = join(tempDir(), "qa-with-skill");
  cpSync(join(ROOT, "harnesses", "qa"), dir, { recursive: true });
  mkdirSync(join(dir, "skills", "arithmetic"), { recursive: true });
  writeFileSync(
    join(dir, "skills", "arithmetic", "SKILL.md"),
    "---\nname: arithmetic\ndescription: Careful arithmetic for word problems.\n---\n\nWrite every quantity with its unit; compute each step with the calculator.\n",
  );
  writeFileSync(join(dir, "agent.yaml"), `${readFileSync(join(dir, "agent.yaml"), "utf8")}skills:\n  - skills/arithmetic\n`);
  return dir;
}

let methods: string[] = [];
beforeAll(async () => {
  const r = await hone(["methods", "--json"]);
  methods = (JSON.parse(r.stdout) as { name: string }[]).map((m) => m.name);
});

const EVERY = [
  "harnessttt",
  "greedy",
  "random",
  "opro",
  "evoprompt-ga",
  "evoprompt-de",
  "gepa",
  "ace",
  "skillopt",
  "dgm",
  "adas",
  "meta-harness",
];

describe("hone optimize --benchmark: every method resumes after kill -9 to the same end and replays exactly", () => {
  it("the list covers every method hone lists (none refuses a QA benchmark)", () => {
    expect([...methods].sort()).toEqual([...EVERY].sort());
  });

  for (const method of EVERY)
    it.concurrent(method, { timeout: 120_000 }, async () => {
      const dir = tempDir();
      const seed = method === "skillopt" ? seedWithSkill() : undefined;
      const benchmark = { id: "gsm8k", train: 4, validation: 2, dataDir: DATA };
      const models = { executor: { model: "offline" }, proposer: { model: "offline" } };
      const settings = { benchmark, ...models, rounds: 2, proposals: 2, method, cache: { mode: "off" as const } };
      await optimize(seed ? { ...settings, seedHarness: seed } : settings, { outDir: join(dir, "full") });
      const want = finalState(join(dir, "full"));
      expect(want.rounds).toHaveLength(3);
      expect(want.summary.validation).toMatchObject({ tasks: 2 });

      const out = join(dir, "killed");
      await killAfterLine(args(method, out, seed), /^round 1 done/);
      const resumed = await hone(["optimize", "--resume", out, "--json"]);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(finalState(out)).toEqual(want);
      if (method === "harnessttt") {
        // A setting other than --rounds and --concurrency cannot change on resume: refused, naming the flag.
        const changed = await hone(["optimize", "--resume", out, "--train", "8"]);
        expect(changed.code).toBe(2);
        expect(changed.stderr).toMatch(/--train 8 differs from the run's benchmark\.train \(4\)/);
      }

      const replay = await replayRun(out, join(dir, "replay"));
      expect(replay.differences).toEqual([]);
      expect(finalState(join(dir, "replay"))).toEqual(want);
    });
});
