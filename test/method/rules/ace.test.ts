import { describe, expect, it } from "vitest";
import {
  ACE_DEFAULTS,
  applyOperations,
  type Bullet,
  checkCuratorOutput,
  curatorDue,
  dedupe,
  duplicateGroups,
  emptyPlaybook,
  fitBudget,
  formatPlaybook,
  isNewBestPlaybook,
  nextBulletNumber,
  parsePlaybook,
  playbookTokens,
  reflectionRounds,
  sectionKey,
  sectionSlug,
  similarity,
  tagBullets,
} from "../../../src/method/rules/ace.ts";

const TEXT = [
  "## STRATEGIES & INSIGHTS",
  "[sai-00001] helpful=5 harmful=0 :: Check units before combining quantities.",
  "[sai-00002] helpful=0 harmful=2 :: Always multiply the two largest numbers.",
  "",
  "## OTHERS",
  "[misc-00007] helpful=1 harmful=1 :: Re-read the question.",
].join("\n");

describe("ace: the playbook format", () => {
  it("parses sections and bullets with ids and counters, and writes them back", () => {
    const pb = parsePlaybook(TEXT);
    expect(pb.sections.map((s) => s.title)).toEqual(["STRATEGIES & INSIGHTS", "OTHERS"]);
    expect(pb.sections[0]?.bullets[1]).toEqual({
      id: "sai-00002",
      helpful: 0,
      harmful: 2,
      content: "Always multiply the two largest numbers.",
    });
    expect(formatPlaybook(pb)).toBe(TEXT);
  });
  it("the next id number is the largest numeric suffix + 1 (7 → 8); an empty playbook starts at 1", () => {
    expect(nextBulletNumber(parsePlaybook(TEXT))).toBe(8);
    expect(nextBulletNumber(emptyPlaybook())).toBe(1);
  });
  it("section keys and slugs as ACE's get_section_slug (map, initials of up to five words, first four letters)", () => {
    expect(sectionKey("STRATEGIES & INSIGHTS")).toBe("strategies_and_insights");
    expect(sectionSlug("STRATEGIES & INSIGHTS")).toBe("sai");
    expect(sectionSlug("COMMON MISTAKES TO AVOID")).toBe("err");
    expect(sectionSlug("OTHERS")).toBe("misc");
    expect(sectionSlug("PROBLEM-SOLVING HEURISTICS")).toBe("ph"); // "problem-solving_heuristics" is not in the map
    expect(sectionSlug("general")).toBe("gene");
    expect(sectionSlug("one two three four five six")).toBe("ottff");
  });
  it("ACE's empty playbook has its seven sections", () => {
    expect(emptyPlaybook().sections.map((s) => s.title)).toHaveLength(7);
    expect(parsePlaybook("")).toEqual({ sections: [] });
  });
  it("bullets before any header belong to 'general'; other lines are dropped", () => {
    const pb = parsePlaybook("note\n[g-00003] helpful=0 harmful=0 :: tip\n## A\n");
    expect(pb.sections.map((s) => [s.title, s.bullets.length])).toEqual([
      ["general", 1],
      ["A", 0],
    ]);
  });
});

describe("ace: reflector counters", () => {
  it("helpful and harmful tags add one; neutral and unknown ids change nothing; the last tag per id wins", () => {
    const pb = tagBullets(parsePlaybook(TEXT), [
      { id: "sai-00001", tag: "helpful" },
      { bullet: "sai-00002", tag: "helpful" },
      { id: "sai-00002", tag: "harmful" },
      { id: "misc-00007", tag: "neutral" },
      { id: "nope", tag: "helpful" },
    ]);
    expect(pb.sections[0]?.bullets.map((b) => [b.helpful, b.harmful])).toEqual([
      [6, 0],
      [0, 3],
    ]);
    expect(pb.sections[1]?.bullets[0]).toMatchObject({ helpful: 1, harmful: 1 });
  });
});

describe("ace: curator delta operations", () => {
  it("ADD appends a 0/0 bullet with the next global id to its section; unknown sections go to OTHERS", () => {
    const pb = parsePlaybook(TEXT);
    const r = applyOperations(pb, [
      { type: "ADD", section: "strategies & insights", content: "Estimate first." },
      { type: "ADD", section: "Nowhere", content: "Line one\nline two" },
      { type: "DELETE", bullet_id: "sai-00002" },
    ]);
    expect(r.added).toEqual(["sai-00008", "misc-00009"]);
    expect(r.next).toBe(10);
    expect(r.ignored).toEqual(["DELETE"]); // ACE applies ADD only
    expect(r.playbook.sections[0]?.bullets.at(-1)).toEqual({
      id: "sai-00008",
      helpful: 0,
      harmful: 0,
      content: "Estimate first.",
    });
    expect(r.playbook.sections[1]?.bullets.at(-1)?.content).toBe("Line one line two");
    expect(pb.sections[0]?.bullets).toHaveLength(2); // the input is not changed
  });
  it("a playbook without OTHERS gets one for bullets whose section is missing", () => {
    const r = applyOperations({ sections: [{ title: "A", bullets: [] }] }, [{ type: "ADD", section: "B", content: "x" }]);
    expect(r.playbook.sections.map((s) => s.title)).toEqual(["A", "OTHERS"]);
    expect(r.added).toEqual(["misc-00001"]);
  });
  it("the curator's reply is checked as a whole (ACE's messages); any failure changes nothing", () => {
    expect(checkCuratorOutput({ reasoning: "r", operations: [{ type: "ADD", section: "A", content: "c" }] })).toEqual({
      operations: [{ type: "ADD", section: "A", content: "c" }],
    });
    expect(checkCuratorOutput({ operations: [] })).toEqual({ error: "JSON missing required 'reasoning' field" });
    expect(checkCuratorOutput({ reasoning: "r", operations: {} })).toEqual({ error: "'operations' field must be a list" });
    expect(checkCuratorOutput({ reasoning: "r", operations: [{ type: "ADD", section: "A" }] })).toEqual({
      error: "ADD operation 0 missing fields: content",
    });
    expect(checkCuratorOutput({ reasoning: "r", operations: ["x"] })).toEqual({ error: "Operation 0 must be a dictionary" });
    expect(checkCuratorOutput("text")).toHaveProperty("error");
    const many = Array.from({ length: ACE_DEFAULTS.maxOperations + 1 }, () => ({ type: "ADD", section: "A", content: "c" }));
    expect(checkCuratorOutput({ reasoning: "r", operations: many })).toHaveProperty("error");
  });
});

describe("ace: de-duplication (lexical stand-in for the 0.9 embedding threshold)", () => {
  it("cosine of word counts: identical texts 1, disjoint 0, 'a b' vs 'a c' = 1/2", () => {
    expect(similarity("Check the units", "check THE units!")).toBeCloseTo(1, 12);
    expect(similarity("alpha", "beta")).toBe(0);
    expect(similarity("a b", "a c")).toBeCloseTo(0.5, 12);
    expect(similarity("", "a")).toBe(0);
  });
  it("groups: each ungrouped bullet with every later one at ≥ threshold (a later bullet may join two groups, as in ACE)", () => {
    const b = (content: string): Bullet => ({ id: content, helpful: 0, harmful: 0, content });
    const table: Record<string, number> = { "a|c": 0.95, "b|c": 0.9, "a|b": 0.89 };
    const sim = (x: string, y: string) => table[`${x}|${y}`] ?? 0;
    expect(duplicateGroups([b("a"), b("b"), b("c")], 0.9, sim)).toEqual([
      [0, 2],
      [1, 2],
    ]);
    expect(duplicateGroups([], 0.9)).toEqual([]);
  });
  it("merge keeps the first id with summed counters; without merge the first is kept as it was", () => {
    const pb = parsePlaybook(
      [
        "## A",
        "[a-00001] helpful=2 harmful=1 :: Check the units first",
        "[a-00002] helpful=0 harmful=0 :: Something else entirely",
        "## B",
        "[b-00003] helpful=3 harmful=0 :: check the units FIRST",
      ].join("\n"),
    );
    const merged = dedupe(pb);
    expect(merged.sections[0]?.bullets).toEqual([
      { id: "a-00001", helpful: 5, harmful: 1, content: "Check the units first" },
      { id: "a-00002", helpful: 0, harmful: 0, content: "Something else entirely" },
    ]);
    expect(merged.sections[1]?.bullets).toEqual([]);
    expect(dedupe(pb, { merge: false }).sections[0]?.bullets[0]).toMatchObject({ helpful: 2, harmful: 1 });
  });
});

describe("ace: token budget and schedule", () => {
  it("tokens are ⌈characters / 4⌉ of the formatted playbook", () => {
    const pb = parsePlaybook(TEXT);
    expect(playbookTokens(pb)).toBe(Math.ceil(TEXT.length / 4));
  });
  it("over budget: evict the lowest helpful − harmful first (sai-00002: −2), then the tie-breaks, until it fits", () => {
    const pb = parsePlaybook(TEXT);
    const oneLess = Math.ceil(
      formatPlaybook({
        sections: pb.sections.map((s) => ({ ...s, bullets: s.bullets.filter((b) => b.id !== "sai-00002") })),
      }).length / 4,
    );
    const r = fitBudget(pb, oneLess);
    expect(r.evicted.map((b) => b.id)).toEqual(["sai-00002"]);
    expect(playbookTokens(r.playbook)).toBeLessThanOrEqual(oneLess);
    expect(fitBudget(pb, 0).evicted.map((b) => b.id)).toEqual(["sai-00002", "misc-00007", "sai-00001"]);
    expect(fitBudget(pb).evicted).toEqual([]);
  });
  it("equal net scores: the more harmful goes first, then the older id", () => {
    const pb = parsePlaybook(
      [
        "## A",
        "[a-00005] helpful=0 harmful=0 :: new",
        "[a-00002] helpful=0 harmful=0 :: old",
        "[a-00009] helpful=1 harmful=1 :: mixed",
      ].join("\n"),
    );
    expect(fitBudget(pb, 0).evicted.map((b) => b.id)).toEqual(["a-00009", "a-00002", "a-00005"]);
  });
  it("curator every step by default; 3 reflection rounds on a wrong answer, 1 on a right one; best playbook on a strict gain", () => {
    expect(curatorDue(1)).toBe(true);
    expect(curatorDue(3, 2)).toBe(false);
    expect(reflectionRounds(false)).toBe(3);
    expect(reflectionRounds(true)).toBe(1);
    expect(isNewBestPlaybook(0.71, 0.7)).toBe(true);
    expect(isNewBestPlaybook(0.7, 0.7)).toBe(false);
  });
});
