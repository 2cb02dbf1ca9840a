import { describe, expect, it } from "vitest";
import type { Candidate } from "../../src/method/method.ts";
import { skillBodyOf } from "../../src/method/methods/reflective/components.ts";
import { skillopt } from "../../src/method/methods/skillopt.ts";
import { editBudget } from "../../src/method/rules/skillopt.ts";
import { skillAnalystReply } from "../../src/model/offline/skillopt-analyst-role.ts";
import { rng } from "../../src/rng.ts";
import { INITIAL_HARNESS } from "../helpers/fixtures.ts";
import { candidate, folderFiles, proposeContext, trajectory } from "../helpers/method-archive.ts";

// SkillOpt's propose step over a synthetic archive (no loop): the analyst prompt it builds (current skill, edit budget,
// the epoch's step buffer with the rejected edits, the failed trajectory), the edits clipped to the budget and applied
// to the current skill, and the strict gate.
const seedFiles = folderFiles(INITIAL_HARNESS);
const seedSkill = skillBodyOf(seedFiles["skills/discovery/SKILL.md"]) as string;

function archive(): Candidate[] {
  const seed = candidate({
    id: "r00-seed",
    score: 1.0,
    kept: { keep: true, rule: "seed", reason: "" },
    trajectory: trajectory(
      1.0,
      [
        { valid: false, reason: "circles 3 and 7 overlap" },
        { valid: true, score: 0.97 },
      ],
      1.0,
    ),
    feedback: ["circles 3 and 7 overlap"],
  });
  const rejected = candidate({
    id: "r01-k0",
    round: 1,
    parents: ["r00-seed"],
    score: 0.9,
    kept: { keep: false, rule: "skillopt_gate_strict", reason: "" },
    state: {
      skillopt: {
        step: 1,
        epoch: 0,
        current: "r00-seed",
        skill: "discovery",
        budget: 4,
        edits: [{ op: "replace", target: "hone-hint: step_scale=0.08", content: "hone-hint: step_scale=0.5" }],
        statuses: ["applied_replace"],
        source: "patch",
        n_total: 3,
        n_fail: 1,
        failure_patterns: [{ pattern: "circles overlap", count: 1, taskIds: ["circle-packing"] }],
      },
    },
  });
  return [seed, rejected];
}

describe("skillopt's propose step", () => {
  it("asks the error analyst with the current skill, the budget L and the epoch's rejected edits", async () => {
    const { ctx, calls } = proposeContext(skillopt, archive(), { "r00-seed": seedFiles }, { round: 2, k: 2 });
    const [p, ...more] = await skillopt.propose(ctx);
    expect(more).toEqual([]);
    expect(calls).toHaveLength(1);
    const [system, user] = (calls[0]?.messages ?? []).map((m) => String(m.content)) as [string, string];
    expect(system).toMatch(/^hone-role: skillopt-analyst\n/);
    expect(system).toMatch(/analyse failures/);
    expect(user).toContain(`\`\`\`component skill_body.discovery\n${seedSkill}\n\`\`\``);
    expect(user).toContain(`Produce at most L=${editBudget(2, 8)} edits.`);
    expect(user).toContain("## Previous Steps in This Epoch");
    expect(user).toContain("### Step 1 — REJECT (1/3 failed)");
    expect(user).toContain("Rejected edits (score 1.0 → 0.9):");
    expect(user).toContain('1. [replace] target="hone-hint: step_scale=0.08" → "hone-hint: step_scale=0.5"');
    expect(user).toContain("## Failed Trajectories (1 total)");
    expect(user).toContain("circles 3 and 7 overlap");
    expect(p?.parents).toEqual(["r00-seed"]);
    const memo = p?.state?.skillopt as {
      current: string;
      budget: number;
      edits: { op: string; target: string }[];
      statuses: string[];
    };
    expect(memo.current).toBe("r00-seed");
    expect(memo.budget).toBe(4);
    expect(memo.edits.length).toBeGreaterThan(0);
    expect(memo.statuses.every((s) => s === "applied_replace")).toBe(true);
    const body = p?.spec?.skill_body?.discovery as string;
    expect(body).not.toBe(seedSkill);
    for (const e of memo.edits) expect(body).not.toContain(e.target);
    expect(body).toContain("# Budgeted search on a scored program");
  });

  it("starts each epoch with an empty buffer", async () => {
    const { ctx, calls } = proposeContext(
      skillopt,
      archive(),
      { "r00-seed": seedFiles },
      { round: 2, k: 1, params: { steps_per_epoch: 1 } },
    );
    await skillopt.propose(ctx);
    expect(String(calls[0]?.messages[1]?.content)).not.toContain("Previous Steps");
  });

  it("applies at most L edits of a longer patch", async () => {
    const { ctx } = proposeContext(skillopt, archive(), { "r00-seed": seedFiles }, { round: 8, k: 1 });
    const edits = Array.from({ length: 6 }, (_, i) => ({ op: "append", content: `- rule ${i}` }));
    ctx.proposer.complete = async () => ({
      text: JSON.stringify({ patch: { reasoning: "x", edits } }),
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
    const [p] = await skillopt.propose(ctx);
    const body = p?.spec?.skill_body?.discovery as string;
    expect(editBudget(8, 8)).toBe(2);
    expect(body).toContain("- rule 0");
    expect(body).toContain("- rule 1");
    expect(body).not.toContain("- rule 2");
  });

  it("refuses a harness without the skill, naming the parameter", async () => {
    const { ctx } = proposeContext(skillopt, archive(), { "r00-seed": seedFiles }, { round: 2, k: 1, params: { skill: "nope" } });
    await expect(skillopt.propose(ctx)).rejects.toThrow(/no skill "nope".*--param skill=/);
  });

  it("keeps a step only when it is strictly better than the current skill", () => {
    const cs = archive();
    const child = (score: number) => candidate({ id: "r02-k0", round: 2, parents: ["r00-seed"], score, state: cs[1]?.state });
    const p = skillopt.params.parse({});
    const a = { candidates: cs, direction: "maximize" as const };
    expect(skillopt.keep(a, child(1.0), p)).toMatchObject({ keep: false, rule: "skillopt_gate_strict" });
    expect(skillopt.keep(a, child(1.01), p).reason).toMatch(/^accept_new_best/);
    expect(skillopt.keep(a, child(0.5), { ...p, use_gate: false })).toMatchObject({ keep: true, rule: "skillopt_gate_off" });
  });

  it("the offline analyst answers SkillOpt's JSON: at most L replace edits of the skill's hint lines", () => {
    const user = `## Current Skill\n\`\`\`component skill_body.discovery\n${seedSkill}\n\`\`\`\n\n## Edit Budget\nProduce at most L=1 edits.`;
    for (let seed = 0; seed < 20; seed++) {
      const reply = JSON.parse(skillAnalystReply(user, rng(seed)));
      expect(reply.patch.edits).toHaveLength(1);
      const [edit] = reply.patch.edits;
      expect(edit.op).toBe("replace");
      expect(seedSkill).toContain(edit.target);
      expect(edit.content).toMatch(/^hone-hint: (step_scale|literals_per_edit)=[0-9.]+$/);
    }
    const bare = JSON.parse(skillAnalystReply("```component skill_body.x\nno hints\n```", rng(1)));
    expect(bare.patch.edits).toEqual([{ op: "append", content: expect.stringMatching(/^hone-hint: /) }]);
  });
});
