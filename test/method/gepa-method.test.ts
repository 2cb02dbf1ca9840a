import { describe, expect, it } from "vitest";
import type { Candidate } from "../../src/method/method.ts";
import { gepa } from "../../src/method/methods/gepa.ts";
import { componentTexts } from "../../src/method/methods/reflective/components.ts";
import { INITIAL_HARNESS } from "../helpers/fixtures.ts";
import { candidate, folderFiles, proposeContext, trajectory } from "../helpers/method-archive.ts";

// GEPA's propose step over a synthetic archive (no loop): the parent drawn from the Pareto frontier of the accepted
// pool, the component chosen by its round-robin pointer, the reflection prompt built from the parent's trajectory and
// evaluator feedback, the minibatch keep rule, and a merge of two frontier candidates over their common ancestor.
const seedFiles = folderFiles(INITIAL_HARNESS);
const components = Object.keys(componentTexts(seedFiles));
const withPrompt = { ...seedFiles, "prompt.md": `${seedFiles["prompt.md"]}\nAlways evaluate before editing.\n` };
const skillFile = seedFiles["skills/discovery/SKILL.md"] as string;
const withSkill = { ...seedFiles, "skills/discovery/SKILL.md": skillFile.replace("step_scale=0.08", "step_scale=0.2") };

const memo = (pointer: number, component: string) => ({
  gepa: {
    kind: "reflective",
    iteration: 0,
    pointer,
    component,
    minibatch: ["circle-packing", "circle-packing", "circle-packing"],
    before: [1, 1, 1],
    schedule: { due: 0, accepted: 0, foundNew: false, max: 5 },
    frontier: { "circle-packing": ["r00-seed"] },
  },
});

function archive(tie = false): Candidate[] {
  const seed = candidate({ id: "r00-seed", score: 1.0, kept: { keep: true, rule: "seed", reason: "" } });
  const a = candidate({
    id: "r01-k0",
    round: 1,
    parents: ["r00-seed"],
    score: 1.2,
    kept: { keep: true, rule: "gepa_minibatch_strict", reason: "" },
    state: memo(2, "system_prompt"),
    feedback: ["circles 3 and 7 overlap by 0.01"],
    trajectory: trajectory(
      1.0,
      [
        { valid: false, reason: "circles 3 and 7 overlap" },
        { valid: true, score: 1.2, improved: true },
      ],
      1.2,
    ),
  });
  const b = candidate({
    id: "r01-k1",
    round: 1,
    parents: ["r00-seed"],
    score: tie ? 1.2 : 0.8,
    kept: { keep: tie, rule: "gepa_minibatch_strict", reason: "" },
    state: memo(2, "skill_body.discovery"),
  });
  return [seed, a, b];
}

const files = { "r00-seed": seedFiles, "r01-k0": withPrompt, "r01-k1": withSkill };

describe("gepa's propose step", () => {
  it("rewrites the frontier parent's next components from its trajectory and feedback", async () => {
    const { ctx, calls } = proposeContext(gepa, archive(), files, { round: 2, k: 2 });
    const ps = await gepa.propose(ctx);
    // r01-k0 alone wins the only key; r01-k1 was rejected and never entered the pool.
    expect(ps.map((p) => p.parents)).toEqual([["r01-k0"], ["r01-k0"]]);
    const chosen = ps.map((p) => (p.state?.gepa as { component?: string } | undefined)?.component);
    expect(chosen).toEqual([components[2], components[3]]);
    expect(calls).toHaveLength(2);
    const [system, user] = (calls[0]?.messages ?? []).map((m) => String(m.content)) as [string, string];
    expect(system).toMatch(/^hone-role: rewrite\n/);
    const current = componentTexts(withPrompt)[chosen[0] as string] as string;
    expect(user).toContain(`\`\`\`component ${chosen[0]}\n${current}\n\`\`\``);
    expect(user).toMatch(/# Example 1\n## Inputs\nPack 26 circles/);
    expect(user).toContain("## Generated Outputs");
    expect(user).toContain("- evaluation 1: invalid: circles 3 and 7 overlap");
    expect(user).toContain("Evaluator: circles 3 and 7 overlap by 0.01");
    const [kind, name] = (chosen[0] as string).split(".") as ["tool_descriptions", string];
    expect(ps[0]?.spec?.[kind]?.[name]).toMatch(/hone-hint: /);
    const g = ps[0]?.state?.gepa as { minibatch: string[]; before: number[]; frontier: Record<string, string[]> };
    expect(g.minibatch).toEqual(["circle-packing", "circle-packing", "circle-packing"]);
    expect(g.before).toEqual([1.2, 1.2, 1.2]);
    expect(g.frontier).toEqual({ "circle-packing": ["r01-k0"] });
  });

  it("accepts a child only when its minibatch sum beats its parent's", () => {
    const cs = archive();
    const p = gepa.params.parse({});
    const child = (score: number) =>
      candidate({
        id: "r02-k0",
        round: 2,
        parents: ["r01-k0"],
        score,
        state: { gepa: { ...memo(3, components[2] as string).gepa, before: [1.2, 1.2, 1.2] } },
      });
    const a = { candidates: cs, direction: "maximize" as const };
    expect(gepa.keep(a, child(1.3), p)).toMatchObject({ keep: true, rule: "gepa_minibatch_strict" });
    expect(gepa.keep(a, child(1.2), p).keep).toBe(false);
    expect(gepa.keep(a, child(1.2), { ...p, acceptance: "improvement_or_equal" }).keep).toBe(true);
  });

  it("merges two frontier candidates that win different keys, over their common ancestor", async () => {
    // Merges need per-key scores: on one key (a discovery task) one candidate dominates and no pair can merge.
    const measured = (perTask: Record<string, number>) => ({
      split: "train" as const,
      score: (Object.values(perTask).reduce((x, y) => x + y, 0) as number) / 2,
      perTask,
      repeats: 1,
      feedback: [],
      trajectories: [],
    });
    const cs = archive(true);
    (cs[0] as Candidate).measured = measured({ a: 1, b: 1 });
    (cs[1] as Candidate).measured = measured({ a: 2, b: 1 });
    (cs[2] as Candidate).measured = measured({ a: 1, b: 2 });
    const params = { use_merge: true, merge_val_overlap_floor: 2 };
    const { ctx, calls } = proposeContext(gepa, cs, files, { round: 2, k: 2, params });
    const ps = await gepa.propose(ctx);
    expect(calls).toHaveLength(0);
    expect(ps).toHaveLength(1);
    const m = ps[0]?.state?.gepa as { kind: string; merge: { ancestor: string; subsample: string[]; before: number[] } };
    expect(m.kind).toBe("merge");
    expect(m.merge.ancestor).toBe("r00-seed");
    expect(new Set(m.merge.subsample)).toEqual(new Set(["a", "b"]));
    expect(ps[0]?.parents).toEqual(["r01-k0", "r01-k1"]);
    // Over r01-k0 (which changed the prompt), the merge takes r01-k1's skill: one component from each side.
    expect(ps[0]?.spec).toEqual({ skill_body: { discovery: componentTexts(withSkill)["skill_body.discovery"] } });
    const child = candidate({ id: "r02-k0", round: 2, parents: ["r01-k0", "r01-k1"], state: ps[0]?.state });
    child.measured = measured({ a: 2, b: 2 });
    const keep = gepa.keep({ candidates: [...cs, child], direction: "maximize" }, child, gepa.params.parse(params));
    expect(keep).toMatchObject({ keep: true, rule: "gepa_merge_subsample" });
  });
});
