import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dgm, dgmEntries } from "../../../src/method/methods/dgm.ts";
import { methodParams } from "../../../src/method/registry.ts";
import type { ResolvedModel } from "../../../src/model/resolve.ts";
import {
  offlineModel,
  proposeContext,
  type Recorded,
  recordingProposer,
  SECRET,
  shownText,
  syntheticArchive,
  TASK_ID,
} from "./synthetic-archive.ts";

// DGM's propose step on a synthetic archive, without the loop: which parents it may draw with which probabilities,
// the diagnosis and self-improvement requests it makes, and the state it records; then its keep rules.
const sigmoid = (s: number) => 1 / (1 + Math.exp(-10 * (s - 0.5)));

const archive = () =>
  syntheticArchive([
    { id: "r00-seed", round: 0, score: 1.0, kept: true },
    { id: "r01-k0", round: 1, parents: ["r00-seed"], score: 1.2, kept: true, prompt: "hone-hint: step_scale=0.2" },
    { id: "r01-k1", round: 1, parents: ["r00-seed"], score: 0.5, kept: false },
  ]);

describe("dgm propose", () => {
  let model: ResolvedModel;
  beforeAll(async () => {
    model = await offlineModel();
  });
  afterAll(() => model.close());

  it("puts the archive's kept agents on DGM's scale (relative: the seed at 0.5, +20% at 0.6)", () => {
    expect(dgmEntries(archive(), "relative")).toEqual([
      { id: "r00-seed", parent: null, score: 0.5 },
      { id: "r01-k0", parent: "r00-seed", score: 0.6 },
    ]);
  });

  it("draws parents ∝ sigmoid(10(s−0.5))/(1+children), diagnoses each from its log, then rewrites its harness", async () => {
    const calls: Recorded[] = [];
    const a = archive();
    const ctx = proposeContext(a, methodParams(dgm, {}) as never, recordingProposer(model, calls), { round: 2, k: 2 });
    const proposals = await dgm.propose(ctx);
    expect(proposals).toHaveLength(2);
    const [w0, w1] = [sigmoid(0.5) / 2, sigmoid(0.6) / 1];
    const state = proposals[0]?.state?.dgm as Record<string, unknown>;
    expect(state.archive).toEqual(["r00-seed", "r01-k0"]);
    expect(state.children).toEqual({ "r00-seed": 1, "r01-k0": 0 });
    const probs = state.probabilities as Record<string, number>;
    expect(probs["r00-seed"]).toBeCloseTo(w0 / (w0 + w1), 12);
    expect(probs["r01-k0"]).toBeCloseTo(w1 / (w0 + w1), 12);
    expect(state).toMatchObject({ generation: 2, scale: "relative", selection: "score_child_prop" });
    // Two calls per child: the diagnosis (its own role, the parent's files in the system message), then the rewrite.
    expect(calls).toHaveLength(4);
    for (const [slot, p] of proposals.entries()) {
      const [diag, rewrite] = [calls[slot * 2], calls[slot * 2 + 1]];
      const parent = p.parents[0] as string;
      expect(["r00-seed", "r01-k0"]).toContain(parent);
      expect(p.state?.dgm).toMatchObject({ parent, target: { instance: TASK_ID } });
      expect([diag?.sample, rewrite?.sample]).toEqual([slot * 10, slot * 10 + 9]);
      expect(diag?.messages[0]?.content).toMatch(/^hone-role: diagnose\n/);
      if (parent === "r01-k0") expect(diag?.messages[0]?.content).toMatch(/step_scale=0\.2/);
      expect(diag?.messages[1]?.content).toMatch(new RegExp(`task instance ${TASK_ID}[\\s\\S]*plan of ${parent}`));
      expect(rewrite?.messages[0]?.content).toMatch(/^hone-role: meta-agent\n/);
      expect(rewrite?.messages[1]?.content).toMatch(/# To Implement[\s\S]*```component prompt\.md/);
      const statement = String((p.state?.dgm as { diagnosis?: { statement?: string } } | undefined)?.diagnosis?.statement);
      expect(rewrite?.messages[1]?.content).toContain(statement.slice(-200));
      expect(existsSync(join(p.dir as string, "agent.yaml"))).toBe(true);
      expect(readFileSync(join(p.dir as string, "prompt.md"), "utf8")).toMatch(/hone-hint: /);
    }
    expect(shownText(calls)).not.toContain(SECRET);
    expect(shownText(calls)).not.toMatch(/ratio_to_reference/);
  });

  it("with selection=best, the children come from the k best agents, best first", async () => {
    const calls: Recorded[] = [];
    const ctx = proposeContext(archive(), methodParams(dgm, { selection: "best" }) as never, recordingProposer(model, calls), {
      round: 2,
      k: 2,
    });
    const proposals = await dgm.propose(ctx);
    expect(proposals.map((p) => p.parents[0])).toEqual(["r01-k0", "r00-seed"]);
  });

  it("keeps every compiled child (keep_all), or only those within the leeway of the initial score (keep_better)", () => {
    const a = syntheticArchive([
      { id: "r00-seed", round: 0, score: 1.0 },
      { id: "r01-k0", round: 1, parents: ["r00-seed"], score: 0.85, state: { dgm: { scale: "relative" } } },
      { id: "r01-k1", round: 1, parents: ["r00-seed"], score: 0.75, state: { dgm: { scale: "relative" } } },
      { id: "r01-k2", round: 1, parents: ["r00-seed"], score: null, state: { dgm: { scale: "relative" } } },
    ]);
    const [, k0, k1, k2] = a.candidates;
    const all = methodParams(dgm, {}) as never;
    const better = methodParams(dgm, { archive_update: "keep_better" }) as never;
    expect(dgm.keep(a, k1 as never, all)).toMatchObject({ keep: true, rule: "keep_all" });
    expect(dgm.keep(a, k2 as never, all)).toMatchObject({ keep: false, rule: "not_compiled" });
    // relative scale: 0.85 → 0.425 ≥ 0.5 − 0.1; 0.75 → 0.375 < 0.4.
    expect(dgm.keep(a, k0 as never, better)).toEqual({
      keep: true,
      rule: "keep_better",
      reason: "normalised 0.425 ≥ initial 0.500 − leeway 0.1",
    });
    expect(dgm.keep(a, k1 as never, better)).toMatchObject({ keep: false, rule: "keep_better" });
  });
});
