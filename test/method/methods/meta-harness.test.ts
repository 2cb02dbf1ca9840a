import { chmodSync, cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HoneError } from "../../../src/errors.ts";
import { metaHarness } from "../../../src/method/methods/meta-harness.ts";
import { commandProblem, splitCommand } from "../../../src/method/methods/meta-harness-command.ts";
import { methodParams } from "../../../src/method/registry.ts";
import type { ResolvedModel } from "../../../src/model/resolve.ts";
import { ROOT, tempDir } from "../../helpers/fixtures.ts";
import { requireTool } from "../../helpers/requires.ts";
import {
  offlineModel,
  proposeContext,
  type Recorded,
  recordingProposer,
  SECRET,
  shownText,
  syntheticArchive,
} from "./synthetic-archive.ts";

// Meta-Harness's propose step on a synthetic archive, without the loop: the log folder it writes, the meta agent's
// prompt (the default proposer), and the coding-agent command (a scripted stand-in speaking the same interface).
const archive = () =>
  syntheticArchive([
    { id: "r00-seed", round: 0, score: 1.0, kept: true },
    {
      id: "r01-k0",
      round: 1,
      parents: ["r00-seed"],
      score: 1.2,
      prompt: "hone-hint: step_scale=0.2",
      state: { meta_harness: { iteration: 1, proposer: "meta-agent", hypothesis: "H1: bigger steps", axis: "exploration" } },
    },
    { id: "r01-k1", round: 1, parents: ["r00-seed"], score: 0.9 },
    { id: "r01-k2", round: 1, parents: ["r00-seed"], score: null, status: "refused" },
  ]);

/** The stand-in agent, copied where the sealed command may read it and made executable. */
function standIn(): string {
  const dir = tempDir("hone-agent-");
  const file = join(dir, "agent.py");
  cpSync(join(ROOT, "test", "fixtures", "meta-harness-agent", "agent.py"), file);
  chmodSync(file, 0o755);
  return file;
}

describe("meta-harness propose", () => {
  let model: ResolvedModel;
  beforeAll(async () => {
    model = await offlineModel();
  });
  afterAll(() => model.close());

  const run = async (params: Record<string, unknown>, k = 2) => {
    const calls: Recorded[] = [];
    const a = archive();
    const ctx = proposeContext(a, methodParams(metaHarness, params) as never, recordingProposer(model, calls), { round: 2, k });
    const proposals = await metaHarness.propose(ctx);
    return { a, ctx, calls, proposals, log: join(ctx.scratch, "log") };
  };

  it("writes the log folder: every shown candidate's files, scores and cleaned traces, the frontier and the summary", async () => {
    const { log } = await run({});
    const rows = readFileSync(join(log, "candidates.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.id, r.score])).toEqual([
      ["r00-seed", 1.0],
      ["r01-k0", 1.2],
      ["r01-k1", 0.9],
    ]);
    expect(readFileSync(join(log, "candidates", "r01-k0", "prompt.md"), "utf8")).toMatch(/step_scale=0\.2/);
    const trace = readFileSync(join(log, "traces", "r01-k0", "trajectory.jsonl"), "utf8");
    expect(trace).toMatch(/plan of r01-k0/);
    expect(trace).not.toContain(SECRET);
    expect(trace).not.toMatch(/ratio/);
    expect(JSON.parse(readFileSync(join(log, "frontier_val.json"), "utf8"))).toEqual({
      "circle-packing": { candidate: "r01-k0", score: 1.2 },
      _best: { candidate: "r01-k0", avg_score: 1.2 },
    });
    const summary = readFileSync(join(log, "evolution_summary.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(summary.map((r) => [r.iteration, r.candidate, r.hypothesis, r.axis, r.outcome])).toEqual([
      [1, "r01-k0", "H1: bigger steps", "exploration", "1.2000 (+0.0000)"],
      [1, "r01-k1", "", "?", "0.9000 (-0.3000)"],
      [1, "r01-k2", "", "?", "failed"],
    ]);
    expect(readFileSync(join(log, "SKILL.md"), "utf8")).toMatch(/Write short notes/);
    expect(readFileSync(join(log, "TASK.md"), "utf8")).toMatch(/Run iteration 2 .* Write exactly 2 new candidate/);
  });

  it("asks the meta agent once per candidate with the summary, frontier, the base's trace and files; never the reference", async () => {
    const { calls, proposals } = await run({});
    expect(calls).toHaveLength(2);
    expect(calls.map((c) => [c.sample, c.temperature])).toEqual([
      [0, 0.8],
      [1, 0.8],
    ]);
    const [first] = calls;
    expect(first?.messages[0]?.content).toMatch(/^hone-role: meta-agent\n/);
    const user = String(first?.messages[1]?.content);
    expect(user).toMatch(/candidate 1 of 2: make this one exploitation/);
    expect(user).toMatch(/"hypothesis":"H1: bigger steps"/);
    expect(user).toMatch(/"_best": \{\n\s+"candidate": "r01-k0"/);
    expect(user).toMatch(/The trace of r01-k0[\s\S]*plan of r01-k0/);
    expect(user).toMatch(/```component prompt\.md\n[\s\S]*step_scale=0\.2/);
    expect(shownText(calls)).not.toContain(SECRET);
    expect(shownText(calls)).not.toMatch(/ratio_to_reference/);
    const [p0, p1] = proposals;
    expect(p0?.parents).toEqual(["r01-k0"]);
    expect(p0?.state).toEqual({
      meta_harness: {
        iteration: 2,
        proposer: "meta-agent",
        base: "r01-k0",
        hypothesis: "retune the search's step sizes",
        axis: "exploitation",
      },
    });
    expect(p1?.state?.meta_harness).toMatchObject({ axis: "exploration" });
    expect(["r00-seed", "r01-k0", "r01-k1"]).toContain(p1?.parents[0]);
    const written = readFileSync(join(p0?.dir as string, "prompt.md"), "utf8");
    expect(written).toMatch(/hone-hint: step_scale=/);
    expect(written).not.toMatch(/step_scale=0\.2\b/);
    expect(existsSync(join(p0?.dir as string, "agent.yaml"))).toBe(true);
    expect(p0?.sample?.completion).toMatch(/"files"/);
  });

  it("runs a coding-agent command in the log folder and reads back what it wrote under new/", async () => {
    const { calls, proposals } = await run({ command: standIn() });
    expect(calls).toEqual([]); // the command reaches the proposer through the model proxy, not this call
    expect(proposals.map((p) => [p.parents[0], p.rationale?.slice(0, 11)])).toEqual([
      ["r01-k0", "stand-in 0:"],
      ["r01-k0", "stand-in 1:"],
    ]);
    expect(proposals[0]?.state).toEqual({
      meta_harness: {
        iteration: 2,
        proposer: "command",
        base: "r01-k0",
        hypothesis: "stand-in 0: retune the search's step sizes",
        axis: "exploitation",
        changes: "prompt.md hints",
      },
    });
    const dir = proposals[0]?.dir as string;
    expect(existsSync(join(dir, "proposal.json"))).toBe(false);
    expect(readFileSync(join(dir, "prompt.md"), "utf8")).not.toMatch(/step_scale=0\.2\b/);
  });

  it("keeps at most k of the command's folders and records the rest and bad ones as refused", async () => {
    const over = await run({ command: `${standIn()} --count 3` });
    expect(over.proposals).toHaveLength(2);
    expect(over.proposals[0]?.state?.meta_harness).toMatchObject({ refused: ["it2-c2: over the 2 candidate(s) asked for"] });
    const bad = await run({ command: `${standIn()} --bad-parent` });
    expect(bad.proposals).toHaveLength(1);
    expect(bad.proposals[0]?.dir).toBeUndefined();
    expect(bad.proposals[0]?.rationale).toMatch(/wrote no usable folder .*parent r99-none is not a candidate/);
  });

  it("records a failing command as an iteration that wrote nothing, with its exit code and stderr", async () => {
    const { proposals } = await run({ command: "/bin/false" });
    expect(proposals).toEqual([
      {
        parents: ["r00-seed"],
        rationale: expect.stringMatching(/proposer command exited with code 1/),
        state: { meta_harness: { iteration: 2, proposer: "command" } },
      },
    ]);
  });

  it("stops a command at its time limit and records the iteration as lost", { timeout: 60_000 }, async () => {
    const { proposals } = await run({ command: `${standIn()} --sleep 50`, timeout: 10 });
    expect(proposals).toHaveLength(1);
    expect(proposals[0]?.dir).toBeUndefined();
    expect(proposals[0]?.rationale).toMatch(/the proposer command did not finish within 10 s/);
  });

  it("runs the command sealed: no secret but the proxy's token, no network", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    process.env.ANTHROPIC_API_KEY = "sk-ant-real";
    try {
      const { proposals } = await run({ command: `${standIn()} --spy` });
      expect(proposals[0]?.rationale).toMatch(/code 3: .*\{"keys": \["OPENAI_API_KEY"\], "cwd_is_log": true, "net": false\}/);
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
    }
  });

  it("says which command is not installed and what to do, when its parameters are read", () => {
    let err: unknown;
    try {
      methodParams(metaHarness, { command: "hone-no-such-agent -p" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HoneError);
    expect((err as HoneError).exit).toBe("usage");
    expect((err as HoneError).message).toMatch(
      /meta-harness: command: the command "hone-no-such-agent -p" cannot run: "hone-no-such-agent" is not installed .*--param command/,
    );
    if (commandProblem("claude")) expect(commandProblem("claude -p")).toMatch(/npm install -g @anthropic-ai\/claude-code/);
    expect(commandProblem("/etc/passwd")).toMatch(/is not an executable file/);
  });

  it("splits a command as a shell splits a simple command", () => {
    expect(splitCommand(`claude -p --allowedTools 'Read,Write' "a b\\"c" d\\ e`)).toEqual([
      "claude",
      "-p",
      "--allowedTools",
      "Read,Write",
      'a b"c',
      "d e",
    ]);
    expect(splitCommand("x 'open")).toBe("an unclosed ' quote");
    expect(splitCommand("   ")).toBe("an empty command");
  });

  it("keeps a candidate that enters the frontier, and chooses the frontier's best", () => {
    const a = archive();
    const get = (id: string) => a.candidates.find((c) => c.id === id) as (typeof a.candidates)[number];
    expect(metaHarness.keep(a, get("r01-k0"), {} as never)).toEqual({
      keep: true,
      rule: "frontier",
      reason: "on the frontier: the best average, best on circle-packing",
    });
    expect(metaHarness.keep(a, get("r01-k1"), {} as never).keep).toBe(false);
    expect(metaHarness.choose(a, {} as never)?.id).toBe("r01-k0");
  });
});
