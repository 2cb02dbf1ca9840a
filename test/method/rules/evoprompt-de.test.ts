import { describe, expect, it } from "vitest";
import { bestOf, type Donors, deBest, deDonors, deGeneration, deSelect } from "../../../src/method/rules/evoprompt-de.ts";
import type { Member } from "../../../src/method/rules/evoprompt-ga.ts";
import { rng } from "../../../src/rng.ts";

const m = (text: string, score: number): Member => ({ text, score });
const POP = [m("A", 0.5), m("B", 0.2), m("C", 0.9), m("D", 0.1)];

describe("evoprompt-de: donors", () => {
  it("three distinct donors from the other members; c is the best so far unless donor_random", () => {
    const best = bestOf(POP);
    for (let seed = 0; seed < 20; seed++) {
      const d = deDonors(POP, 1, best, rng(seed));
      expect(d.a).not.toBe(d.b);
      expect([d.a.text, d.b.text]).not.toContain("B");
      expect(d.c).toBe(best);
      const r = deDonors(POP, 1, best, rng(seed), true);
      expect(new Set([r.a.text, r.b.text, r.c.text])).toEqual(new Set(["A", "C", "D"]));
    }
  });
  it("needs four members", () => {
    expect(() => deDonors(POP.slice(0, 3), 0, POP[0] as Member, rng(1))).toThrow(/four members/);
  });
  it("the initial best is the first maximum", () => {
    expect(bestOf([m("x", 1), m("y", 1)]).text).toBe("x");
  });
});

describe("evoprompt-de: replace p_i only if better", () => {
  it("a strictly better child replaces; a tie or a worse child keeps p_i", () => {
    expect(deSelect(m("old", 0.5), m("new", 0.6)).text).toBe("new");
    expect(deSelect(m("old", 0.5), m("new", 0.5)).text).toBe("old");
    expect(deSelect(m("old", 0.5), m("new", 0.1)).text).toBe("old");
    expect(deBest(m("b", 0.9), m("s", 0.95)).text).toBe("s");
  });
  it("a generation: the best updates as soon as a selection beats it, so later members use it as donor c", async () => {
    const seen: string[] = [];
    const child = async (member: Member, donors: Donors, i: number) => {
      seen.push(donors.c.text);
      return i === 0 ? m("A'", 0.95) : m(`${member.text}'`, member.score - 0.05);
    };
    const { population, best } = await deGeneration(POP, bestOf(POP), child, rng(3));
    expect(seen).toEqual(["C", "A'", "A'", "A'"]);
    expect(population.map((x) => x.text)).toEqual(["A'", "B", "C", "D"]);
    expect(best.text).toBe("A'");
  });
});
