import { describe, expect, it } from "vitest";
import type { Candidate } from "../../src/method/method.ts";
import { ace } from "../../src/method/methods/ace.ts";
import { parsePlaybook } from "../../src/method/rules/ace.ts";
import { INITIAL_HARNESS } from "../helpers/fixtures.ts";
import { candidate, folderFiles, proposeContext, trajectory } from "../helpers/method-archive.ts";

// ACE's propose step over a synthetic archive (no loop): the reflector prompt (trace, feedback, the playbook's bullets),
// the tags applied to the counters, the curator prompt (statistics, token budget, the reflection) and its ADD delta
// appended under a new id, the playbook created as a skill in the first step, and the keep rule.
const seedFiles = folderFiles(INITIAL_HARNESS);
const PLAYBOOK = [
  "## STRATEGIES & INSIGHTS",
  "[sai-00001] helpful=2 harmful=0 :: hone-hint: step_scale=0.05",
  "",
  "## COMMON MISTAKES TO AVOID",
  "[cmta-00002] helpful=0 harmful=1 :: never rewrite the whole program",
].join("\n");
const withPlaybook = {
  ...seedFiles,
  "agent.yaml": (seedFiles["agent.yaml"] as string).replace(
    "  - skills/discovery\n",
    "  - skills/discovery\n  - skills/playbook\n",
  ),
  "skills/playbook/SKILL.md": `---\nname: playbook\ndescription: ACE playbook\n---\n${PLAYBOOK}\n`,
};
const files = { "r00-seed": seedFiles, "r01-k0": withPlaybook };

function archive(): Candidate[] {
  return [
    candidate({
      id: "r00-seed",
      score: 1.0,
      kept: { keep: true, rule: "seed", reason: "" },
      trajectory: trajectory(1.0, [{ valid: true, score: 0.99 }], 1.0),
    }),
    candidate({
      id: "r01-k0",
      round: 1,
      parents: ["r00-seed"],
      score: 1.1,
      kept: { keep: true, rule: "ace_step", reason: "" },
      feedback: ["circle 4 lies outside the square"],
      trajectory: trajectory(
        1.0,
        [
          { valid: false, reason: "circle 4 lies outside the square" },
          { valid: true, score: 1.1, improved: true },
        ],
        1.1,
      ),
      state: { ace: { step: 1, next_id: 3 } },
    }),
  ];
}

describe("ace's propose step", () => {
  it("reflects on the last rollout with the playbook, tags its bullets and curates one delta", async () => {
    const { ctx, calls } = proposeContext(ace, archive(), files, { round: 2, k: 2 });
    const ps = await ace.propose(ctx);
    expect(ps).toHaveLength(1);
    expect(ps[0]?.parents).toEqual(["r01-k0"]);
    expect(calls.map((c) => String(c.messages[0]?.content).split("\n")[0])).toEqual([
      "hone-role: reflect",
      "hone-role: ace-curator",
    ]);
    const reflector = String(calls[0]?.messages[1]?.content);
    expect(reflector).toContain(`\`\`\`component playbook\n${PLAYBOOK}\n\`\`\``);
    expect(reflector).toContain("- evaluation 1: invalid: circle 4 lies outside the square");
    expect(reflector).toContain("Evaluator: circle 4 lies outside the square");
    expect(reflector).toContain("The attempt improved on its starting score.");
    const curator = String(calls[1]?.messages[1]?.content);
    expect(curator).toContain('"total_bullets": 2');
    expect(curator).toContain('"problematic": 1');
    expect(curator).toContain("Token budget of the playbook: 2500 tokens. Training progress: step 2.");
    expect(curator).toContain(calls[0]?.reply.slice(0, 40));

    const state = ps[0]?.state?.ace as {
      counters: Record<string, number[]>;
      added: string[];
      tags: { helpful: string[]; harmful: string[] };
    };
    const tagged = [...state.tags.helpful, ...state.tags.harmful].sort();
    expect(tagged).toEqual(["cmta-00002", "sai-00001"]);
    // Each tag adds one to its counter: 2/0 and 0/1 before.
    expect((state.counters["sai-00001"] as number[]).reduce((a, b) => a + b)).toBe(3);
    expect((state.counters["cmta-00002"] as number[]).reduce((a, b) => a + b)).toBe(2);
    expect(state.added).toHaveLength(1);
    expect(state.added[0]).toMatch(/^sai-00003$/);
    const body = ps[0]?.spec?.skill_body?.playbook as string;
    const pb = parsePlaybook(body);
    const bullets = pb.sections.flatMap((s) => s.bullets);
    expect(bullets.map((b) => b.id)).toEqual(["sai-00001", "sai-00003", "cmta-00002"]);
    expect(bullets.find((b) => b.id === "sai-00003")).toMatchObject({ helpful: 0, harmful: 0 });
    expect(bullets.find((b) => b.id === "sai-00003")?.content).toMatch(/^hone-hint: /);
  });

  it("creates the playbook skill in the first step, with ACE's empty sections", async () => {
    const { ctx } = proposeContext(ace, archive().slice(0, 1), files, { round: 1, k: 1 });
    const [p] = await ace.propose(ctx);
    const skill = p?.spec?.new_skills?.[0];
    expect(skill?.name).toBe("playbook");
    expect(skill?.body).toContain("## STRATEGIES & INSIGHTS");
    expect(skill?.body).toContain("## OTHERS");
    expect(skill?.body).toMatch(/\[sai-00001\] helpful=0 harmful=0 :: hone-hint: /);
  });

  it("runs the curator only every curator_frequency steps", async () => {
    const { ctx, calls } = proposeContext(ace, archive(), files, { round: 3, k: 1, params: { curator_frequency: 2 } });
    const [p] = await ace.propose(ctx);
    expect(calls).toHaveLength(1);
    expect((p?.state?.ace as { curated?: boolean } | undefined)?.curated).toBe(false);
  });

  it("evicts the weakest bullets to fit the token budget", async () => {
    const { ctx } = proposeContext(ace, archive(), files, { round: 2, k: 1, params: { token_budget: 200 } });
    ctx.proposer.complete = async (messages) => {
      const curator = String(messages[0]?.content).includes("ace-curator");
      const long = "x".repeat(700);
      const text = curator
        ? JSON.stringify({ reasoning: "r", operations: [{ type: "ADD", section: "others", content: long }] })
        : JSON.stringify({ bullet_tags: [] });
      return { text, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
    };
    const [p] = await ace.propose(ctx);
    const state = p?.state?.ace as { evicted: string[]; tokens: number };
    // Lowest helpful − harmful first: the harmful bullet, then the new one; the helpful bullet stays.
    expect(state.evicted).toEqual(["cmta-00002", "misc-00003"]);
    expect(p?.spec?.skill_body?.playbook).toContain("[sai-00001] helpful=2 harmful=0");
    expect(state.tokens).toBeLessThanOrEqual(200);
  });

  it("keeps every step (the playbook moves on) and says whether it is a new best", () => {
    const cs = archive();
    const child = candidate({ id: "r02-k0", round: 2, parents: ["r01-k0"], score: 1.05 });
    const d = ace.keep({ candidates: [...cs, child], direction: "maximize" }, child, ace.params.parse({}));
    expect(d).toMatchObject({ keep: true, rule: "ace_step" });
    expect(d.reason).toContain("not a new best_playbook");
  });
});
