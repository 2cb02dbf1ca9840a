import { describe, expect, it } from "vitest";
import { opro } from "../../../src/method/methods/opro.ts";
import { exemplarLines, taskMisses } from "../../../src/method/methods/opro-exemplars.ts";
import { pyRound } from "../../../src/method/rules/pyfmt.ts";
import { rng } from "../../../src/rng.ts";
import { archiveOf, blocksIn, contextOf, lastUser, SEED_PROMPT, type Synthetic, systemOf } from "./archive.ts";

const params = (raw: Record<string, unknown> = {}) => opro.params.parse(raw);
const fenced = (text: string) => `\`\`\`component system_prompt\n${text}\n\`\`\``;

/** The (text, score) pairs of a meta-prompt, in the order shown. */
function pairs(user: string): { text: string; score: string }[] {
  return [...user.matchAll(/\ntext:\n```component system_prompt\n([\s\S]*?)\n```\nscore:\n(\S+)\n/g)].map((m) => ({
    text: m[1] ?? "",
    score: m[2] ?? "",
  }));
}

describe("opro: the meta-prompt from a synthetic archive", () => {
  // 25 scored versions with accuracies; ids r01-k00 … in archive order, scores not sorted.
  const rows: Synthetic[] = [
    { id: "r00-seed", score: 0.5 },
    ...Array.from({ length: 24 }, (_, i) => ({
      id: `r01-k${String(i).padStart(2, "0")}`,
      round: 1,
      score: ((i * 7) % 24) / 24,
      prompt: `version ${i}`,
    })),
  ];

  it("shows the best 20 ascending, then drops those under the 0.3 threshold, scores as round(score·100)", async () => {
    const archive = archiveOf(rows);
    const ctx = contextOf(archive, params(), { k: 2, replies: (c) => fenced(`new ${c.sample}`) });
    const proposals = await opro.propose(ctx);
    const user = lastUser(ctx.calls[0] as never);
    const scored = rows.map((r) => ({ text: r.prompt ?? SEED_PROMPT, score: r.score as number }));
    const want = scored
      .map((s, i) => [s, i] as const)
      .sort((a, b) => a[0].score - b[0].score || a[1] - b[1])
      .slice(-20)
      .map(([s]) => s)
      .filter((s) => s.score >= 0.3);
    expect(pairs(user)).toEqual(want.map((s) => ({ text: s.text, score: String(pyRound(s.score * 100)) })));
    expect(want.length).toBeLessThan(20); // the threshold removed some of the best 20
    expect(user).toContain("the score ranges from 0 to 100");
    expect(user).toContain("Pack 26 circles");
    // Each proposal records which versions were shown, worst first.
    const ids = rows.filter((r) => (r.score as number) >= 0.3).sort((a, b) => (a.score as number) - (b.score as number));
    expect((proposals[0]?.state?.opro as { shown: string[] } | undefined)?.shown).toEqual(
      ids.slice(-want.length).map((r) => r.id),
    );
  });

  it("asks K samples of the one meta-prompt at OPRO's temperature, each its own sample index", async () => {
    const archive = archiveOf(rows);
    const ctx = contextOf(archive, params(), { k: 3, replies: (c) => fenced(`new ${c.sample}`) });
    const proposals = await opro.propose(ctx);
    expect(ctx.calls.map((c) => c.sample)).toEqual([0, 1, 2]);
    expect(ctx.calls.map((c) => c.temperature)).toEqual([1, 1, 1]);
    expect(new Set(ctx.calls.map((c) => JSON.stringify(c.messages))).size).toBe(1);
    expect(systemOf(ctx.calls[0] as never)).toMatch(/^hone-role: optimize$/m);
    const best = rows.reduce((b, r) => ((r.score as number) > (b.score as number) ? r : b));
    expect(proposals.map((p) => [p.parents, p.spec?.system_prompt, p.sample?.completion])).toEqual(
      [0, 1, 2].map((i) => [[best.id], `New ${i}`, fenced(`new ${i}`)]),
    );
  });

  it("drops a sample already scored, one repeated within the step, one over the length limit or holding a block opening", async () => {
    const archive = archiveOf(rows);
    const replies = [
      fenced("version 3"),
      fenced("Fresh"),
      fenced("fresh"),
      fenced("x".repeat(50)),
      "```component system_prompt\nUse ```component x``` blocks\n```",
    ];
    const ctx = contextOf(archive, params({ max_length: 40 }), { k: 5, replies: (c) => replies[c.sample ?? 0] as string });
    const proposals = await opro.propose(ctx);
    // "version 3" polishes to "Version 3", which is new (as upstream, the scored text is compared as it was scored);
    // "fresh" polishes to "Fresh", a repeat within the step.
    expect(proposals.map((p) => p.spec?.system_prompt)).toEqual(["Version 3", "Fresh"]);
    expect(proposals.map((p) => (p.state?.opro as { sample: number } | undefined)?.sample)).toEqual([0, 1]);
  });

  it("on a discovery score shows every version (no threshold) as round(score, 3), higher is better", async () => {
    const archive = archiveOf([
      { id: "r00-seed", score: 1.002519718 },
      { id: "r01-k0", score: 0.2, prompt: "low" },
    ]);
    const ctx = contextOf(archive, params(), { k: 1, replies: () => fenced("x") });
    await opro.propose(ctx);
    const user = lastUser(ctx.calls[0] as never);
    expect(pairs(user)).toEqual([
      { text: "low", score: "0.2" },
      { text: SEED_PROMPT, score: "1.003" },
    ]);
    expect(user).toContain("(higher is better)");
  });

  it("on a minimised metric shows the worst first with the task's own values, and no threshold", async () => {
    const archive = archiveOf(
      [
        { id: "r00-seed", score: 0.25 },
        { id: "r01-k0", score: 0.9, prompt: "worse" },
        { id: "r01-k1", score: 0.1, prompt: "better" },
      ],
      "minimize",
    );
    const ctx = contextOf(archive, params(), { k: 1, replies: () => fenced("x") });
    const [p] = await opro.propose(ctx);
    const user = lastUser(ctx.calls[0] as never);
    expect(pairs(user)).toEqual([
      { text: "worse", score: "0.9" },
      { text: SEED_PROMPT, score: "0.25" },
      { text: "better", score: "0.1" },
    ]);
    expect(user).toContain("(lower is better)");
    expect(p?.parents).toEqual(["r01-k1"]);
  });

  it("with the offline model, every new version differs from each version shown", async () => {
    const archive = archiveOf([
      { id: "r00-seed", score: 1 },
      { id: "r01-k0", score: 1.1, prompt: `${SEED_PROMPT}\nhone-hint: literals_per_edit=1` },
    ]);
    const ctx = contextOf(archive, params(), { k: 4 });
    const proposals = await opro.propose(ctx);
    expect(proposals.length).toBeGreaterThan(0);
    const shown = new Set(blocksIn(lastUser(ctx.calls[0] as never)).map((b) => b.body.trim()));
    for (const p of proposals) {
      expect(shown.has(p.spec?.system_prompt ?? "")).toBe(false);
      expect(p.spec?.system_prompt).toContain(SEED_PROMPT.split("\n")[0]);
    }
  });

  it("keeps every scored version and chooses the best", () => {
    const archive = archiveOf(rows);
    const c = archive.candidates[3];
    expect(c && opro.keep(archive, c, params())).toMatchObject({ keep: true, rule: "opro_scored" });
    expect(opro.choose(archive, params())?.measured?.score).toBe(Math.max(...rows.map((r) => r.score as number)));
  });
});

describe("opro: exemplars from per-task scores (a QA benchmark's archive)", () => {
  const qa = archiveOf([
    { id: "r00-seed", score: 0.5, perTask: { q1: 1, q2: 0, q3: 1, q4: 0 }, feedback: ["q2: said 7, the answer differs"] },
    { id: "r01-k0", score: 0.75, prompt: "a", perTask: { q1: 1, q2: 0, q3: 1, q4: 1 } },
    { id: "r01-k1", score: 0.75, prompt: "b", perTask: { q1: 0, q2: 1, q3: 1, q4: 1 } },
  ]);

  it("counts per task how many scored versions missed it (score 0)", () => {
    expect([...taskMisses(qa)]).toEqual([
      ["q1", { missed: 1, scored: 3 }],
      ["q2", { missed: 2, scored: 3 }],
      ["q3", { missed: 0, scored: 3 }],
      ["q4", { missed: 1, scored: 3 }],
    ]);
  });

  it("most_wrong (accumulative_most_frequent): all missed tasks when they fit, else that many drawn from them", () => {
    const all = exemplarLines(qa, 3, "most_wrong", rng(1));
    expect(all.map((l) => l.split(":")[0])).toEqual(["task q1", "task q2", "task q4"]);
    expect(all[1]).toBe("task q2: missed by 2 of 3 scored versions\n  q2: said 7, the answer differs");
    for (let seed = 0; seed < 10; seed++) {
      const two = exemplarLines(qa, 2, "most_wrong", rng(seed)).map((l) => l.split(":")[0]);
      expect(two).toHaveLength(2);
      expect(two.every((t) => ["task q1", "task q2", "task q4"].includes(t as string))).toBe(true);
    }
  });

  it("random: that many of every task, in archive order, in the meta-prompt", async () => {
    const ctx = contextOf(qa, params({ exemplars: 2 }), { k: 1, replies: () => fenced("x") });
    await opro.propose(ctx);
    const user = lastUser(ctx.calls[0] as never);
    const shown = [...user.matchAll(/^- task (q\d):/gm)].map((m) => m[1]);
    expect(shown).toHaveLength(2);
    expect([...shown].sort()).toEqual(shown);
    // Accuracies: bucketed to 0–100 and the 0.3 threshold applies (all pass here).
    expect(pairs(user).map((p) => p.score)).toEqual(["50", "75", "75"]);
  });
});
