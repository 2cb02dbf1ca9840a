import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { GSM8K_FIXTURE, tempDir } from "../helpers/fixtures.ts";

// `hone receipt` explains a run's numbers to someone who was not there. For `hone optimize --benchmark` that means
// naming who scored it, not calling a finished run "still going", and not listing a discovery search's evaluator
// budget and pairing, which a QA search does not use.
describe("newcomer probe 2: the receipt of a QA optimize run", () => {
  it("names the benchmark's scorer and the run's real settings", async () => {
    const dir = tempDir();
    const run = join(dir, "run");
    const args = ["optimize", "--benchmark", "gsm8k", "--train", "4", "--validation", "4", "--method", "greedy"];
    const o = await hone(
      [...args, "--executor", "offline", "--proposer", "offline", "--rounds", "1", "--proposals", "2"].concat([
        "--data-dir",
        join(GSM8K_FIXTURE, ".."),
        "--out",
        run,
        "--json",
      ]),
      { env: { HONE_CACHE_DIR: join(dir, "cache") } },
    );
    expect(o.code, o.stderr).toBe(0);
    const r = await hone(["receipt", run]);
    expect(r.code, r.stderr).toBe(0);
    const line = (label: string) => r.stdout.split("\n").find((l) => l.startsWith(`${label} `)) ?? "";
    expect(line("run")).toMatch(/optimize, finished/);
    expect(line("scorer")).toMatch(/gsm8k's official scorer: a candidate's score is its mean over the train questions/);
    expect(line("hone")).not.toMatch(/still going/);
    expect(line("settings")).toMatch(/rounds 1, proposals 2/);
    expect(line("settings")).not.toMatch(/max evals|paired/);
    // its noise repeats choose its keep rule (a paired t interval from 2, strictly better at 1): shown (review)
    expect(line("settings")).toMatch(/noise repeats/);
    const json = JSON.parse((await hone(["receipt", run, "--json"])).stdout);
    expect(json.benchmark).toBe("gsm8k");
    expect(json.settings.max_evals).toBeUndefined();
    // The incumbent is named by its commit and by the candidate it is (the seed's harness is named by its content
    // hash): a seed kept to the end must not read as a changed harness.
    const best = json.run.summary.best_candidate as string;
    expect(json.harnesses.incumbent_candidate).toBe(best);
    expect(line("harnesses")).toContain(`(commit of ${best}`);
  });
});
