import { describe, expect, it } from "vitest";
import type { Method } from "../../../src/method/method.ts";
import { dePopulation, evopromptDe } from "../../../src/method/methods/evoprompt-de.ts";
import { evopromptGa, gaPopulation } from "../../../src/method/methods/evoprompt-ga.ts";
import { deDonors } from "../../../src/method/rules/evoprompt-de.ts";
import { gaParentPairs, gaSurvivors } from "../../../src/method/rules/evoprompt-ga.ts";
import { seedFrom } from "../../../src/model/offline/rng.ts";
import { rng } from "../../../src/rng.ts";
import { archiveOf, blocksIn, contextOf, lastUser, SEED_PROMPT, type Synthetic, systemOf } from "./archive.ts";

const ga = (raw: Record<string, unknown> = {}) => evopromptGa.params.parse(raw);
const de = (raw: Record<string, unknown> = {}) => evopromptDe.params.parse(raw);
const fenced = (text: string) => `\`\`\`component system_prompt\n${text}\n\`\`\``;
/** The draws the method makes in a round: contextOf seeds its rng as the loop does (run seed 1). */
const roundRng = (round: number) => rng(seedFrom(1, round, "method"));

/** The seed and three measured variations of it: a full initial population of 4. */
const INIT: Synthetic[] = [
  { id: "r00-seed", score: 0.5 },
  { id: "r01-k0", score: 0.7, prompt: "p1", state: { evo: "init" } },
  { id: "r01-k1", score: 0.2, prompt: "p2", state: { evo: "init" } },
  { id: "r01-k2", score: 0.4, prompt: "p3", state: { evo: "init" } },
];
const TEXT: Record<string, string> = { "r00-seed": SEED_PROMPT, "r01-k0": "p1", "r01-k1": "p2", "r01-k2": "p3" };

describe("evoprompt: the initial population (seed and variations of it)", () => {
  // biome-ignore lint/suspicious/noExplicitAny: both variants, each with its own parameter type
  for (const method of [evopromptGa, evopromptDe] as Method<any>[]) {
    it(`${method.name}: asks for variations of the seed until the population is full, never more than K`, async () => {
      const archive = archiveOf([{ id: "r00-seed", score: 0.5 }]);
      const ctx = contextOf(archive, method.params.parse({}), { k: 5, round: 1, replies: (c) => fenced(`v${c.sample}`) });
      const proposals = await method.propose(ctx);
      expect(proposals.map((p) => [p.parents, p.spec?.system_prompt, p.state])).toEqual(
        [0, 1, 2].map((i) => [["r00-seed"], `v${i}`, { evo: "init" }]),
      );
      for (const c of ctx.calls) {
        expect(systemOf(c)).toMatch(/^hone-role: rewrite$/m);
        expect(blocksIn(lastUser(c))).toEqual([{ name: "system_prompt", body: SEED_PROMPT }]);
        expect(c.temperature).toBe(0.5);
      }
      // Three of four filled (one still pending): the next round writes the fourth.
      const later = archiveOf([...INIT.slice(0, 3), { id: "r01-k2", status: "pending", prompt: "p3", state: { evo: "init" } }]);
      const more = await method.propose(contextOf(later, method.params.parse({}), { k: 5, replies: () => fenced("v") }));
      expect(more).toHaveLength(1);
    });
  }
});

describe("evoprompt-ga: one generation per round", () => {
  it("draws K parent pairs by the roulette wheel and asks one crossover-then-mutation call per child", async () => {
    const archive = archiveOf(INIT);
    const ctx = contextOf(archive, ga(), { k: 3, round: 2, replies: (c) => fenced(`child ${c.sample}`) });
    const proposals = await evopromptGa.propose(ctx);
    const members = INIT.map((r) => ({ id: r.id, text: `h:${TEXT[r.id]}`, score: r.score }));
    const pairs = gaParentPairs(members as never, "wheel", roundRng(2), 3) as unknown as [{ id: string }, { id: string }][];
    expect(proposals.map((p) => p.state?.parents)).toEqual(pairs.map(([a, b]) => [a.id, b.id]));
    expect(proposals.map((p) => p.state)).toEqual(
      pairs.map(([a, b], slot) => ({
        evo: "ga",
        generation: 1,
        slot,
        population: INIT.map((r) => r.id),
        parents: [a.id, b.id],
      })),
    );
    for (const [i, c] of ctx.calls.entries()) {
      const [a, b] = pairs[i] as [{ id: string }, { id: string }];
      expect(systemOf(c)).toMatch(/^hone-role: crossover$/m);
      expect(blocksIn(lastUser(c)).map((x) => x.body)).toEqual([TEXT[a.id], TEXT[b.id]]);
      expect(c.messages).toHaveLength(4); // the system, the one-shot demonstration (user, assistant), the request
      expect(c.sample).toBe(i);
    }
    expect(proposals.map((p) => p.spec?.system_prompt)).toEqual(["child 0", "child 1", "child 2"]);
  });

  it("keeps the best popsize of parents ∪ children (top_n_survive), and the next generation breeds from them", async () => {
    const population = INIT.map((r) => r.id);
    const kid = (slot: number, score: number, prompt: string): Synthetic => ({
      id: `r02-k${slot}`,
      score,
      prompt,
      state: { evo: "ga", generation: 1, slot, population, parents: ["r01-k0", "r00-seed"] },
    });
    const archive = archiveOf([...INIT, kid(0, 0.9, "c0"), kid(1, 0.3, "c1"), kid(2, 0.6, "c2")]);
    const decisions = archive.candidates.slice(4).map((c) => evopromptGa.keep(archive, c, ga()));
    expect(decisions.map((d) => [d.keep, d.rule])).toEqual([
      [true, "top_n_survive"],
      [false, "top_n_survive"],
      [true, "top_n_survive"],
    ]);
    const pop = gaPopulation(archive, ga());
    expect(pop.generation).toBe(1);
    expect(pop.members.map((m) => m.id)).toEqual(["r02-k0", "r01-k0", "r02-k2", "r00-seed"]);
    expect(pop.members.map((m) => m.score)).toEqual(
      gaSurvivors(
        INIT.map((r) => ({ text: r.id, score: r.score as number })),
        [0.9, 0.3, 0.6].map((s, i) => ({ text: `k${i}`, score: s })),
      ).map((m) => m.score),
    );
    expect(evopromptGa.choose(archive, ga())?.id).toBe("r02-k0");
    const ctx = contextOf(archive, ga(), { k: 2, round: 3, replies: () => fenced("g2") });
    const next = await evopromptGa.propose(ctx);
    expect(next.map((p) => p.state?.generation)).toEqual([2, 2]);
    expect(next[0]?.state?.population).toEqual(["r02-k0", "r01-k0", "r02-k2", "r00-seed"]);
  });

  it("std survival: child j replaces member j", () => {
    const population = INIT.map((r) => r.id);
    const archive = archiveOf([
      ...INIT,
      { id: "r02-k0", score: 0.1, prompt: "c0", state: { evo: "ga", generation: 1, slot: 0, population } },
      { id: "r02-k1", score: 0.05, prompt: "c1", state: { evo: "ga", generation: 1, slot: 1, population } },
    ]);
    const p = ga({ survival: "std" });
    expect(gaPopulation(archive, p).members.map((m) => m.id)).toEqual(["r02-k0", "r02-k1", "r01-k1", "r01-k2"]);
    expect(evopromptGa.keep(archive, archive.candidates[5] as never, p)).toMatchObject({
      keep: true,
      rule: "child_replaces_member",
    });
  });
});

describe("evoprompt-de: one child per member, a generation spanning rounds when K < popsize", () => {
  it("donors from the other members, c the best so far; the call shows best, current and both donors", async () => {
    const archive = archiveOf(INIT);
    const ctx = contextOf(archive, de(), { k: 2, round: 2, replies: (c) => fenced(`child ${c.sample}`) });
    const proposals = await evopromptDe.propose(ctx);
    const members = INIT.map((r) => ({ id: r.id, text: `h:${TEXT[r.id]}`, score: r.score as number }));
    const best = members[1] as (typeof members)[number]; // r01-k0 scores 0.7
    const draws = roundRng(2);
    const donors = [0, 1].map((i) => deDonors(members, i, best, draws) as unknown as Record<"a" | "b" | "c", { id: string }>);
    expect(proposals.map((p) => p.state)).toEqual(
      donors.map((d, slot) => ({
        evo: "de",
        generation: 1,
        slot,
        population: INIT.map((r) => r.id),
        target: INIT[slot]?.id,
        donors: { a: d.a.id, b: d.b.id, c: "r01-k0" },
      })),
    );
    for (const [i, c] of ctx.calls.entries()) {
      const d = donors[i] as Record<"a" | "b", { id: string }>;
      expect(systemOf(c)).toMatch(/^hone-role: crossover$/m);
      expect(blocksIn(lastUser(c)).map((x) => x.body)).toEqual(["p1", TEXT[INIT[i]?.id as string], TEXT[d.a.id], TEXT[d.b.id]]);
    }
    expect(proposals[0]?.parents[0]).toBe("r00-seed"); // the spec merges over its target p_i
  });

  it("the next round writes the remaining slots; then the next generation keeps each child only if strictly better", async () => {
    const population = INIT.map((r) => r.id);
    const kid = (round: number, slot: number, score: number): Synthetic => ({
      id: `r0${round}-k${slot}`,
      round,
      score,
      prompt: `c${slot}`,
      state: { evo: "de", generation: 1, slot, population, target: population[slot], donors: {} },
    });
    const half = archiveOf([...INIT, kid(2, 0, 0.5), kid(2, 1, 0.95)]);
    const mid = dePopulation(half, de());
    expect([mid.generation, [...mid.done], mid.best?.id]).toEqual([1, [0, 1], "r02-k1"]);
    const ctx = contextOf(half, de(), { k: 4, round: 3, replies: () => fenced("x") });
    expect((await evopromptDe.propose(ctx)).map((p) => p.state?.slot)).toEqual([2, 3]);
    // Slot 0's child ties its member (0.5 = 0.5): the member stays. Slot 1's child beats its member's 0.7.
    expect(half.candidates.slice(4).map((c) => evopromptDe.keep(half, c, de()))).toMatchObject([
      { keep: false, rule: "replace_if_better" },
      { keep: true, rule: "replace_if_better" },
    ]);
    const full = archiveOf([...INIT, kid(2, 0, 0.5), kid(2, 1, 0.95), kid(3, 2, 0.1), kid(3, 3, 0.45)]);
    const next = dePopulation(full, de());
    expect(next.generation).toBe(2);
    expect(next.members.map((m) => m.id)).toEqual(["r00-seed", "r02-k1", "r01-k1", "r03-k3"]);
    expect(next.best?.id).toBe("r02-k1");
    expect(evopromptDe.choose(full, de())?.id).toBe("r02-k1");
  });

  it("needs four members (popsize below 4 is refused by its schema)", () => {
    expect(evopromptDe.params.safeParse({ popsize: 3 }).success).toBe(false);
  });
});
