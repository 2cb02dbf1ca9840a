import { describe, expect, it } from "vitest";
import { takeProposals } from "../../src/method/methods/external.ts";

// What the loop takes of a method program's step: at most K proposals, and the program's refused output recorded.
const proposal = (name: string) => ({ name, dir: `/x/${name}`, parent: "r00-seed" });

describe("takeProposals", () => {
  it("takes the first K proposals and refuses the rest as over", () => {
    const got = takeProposals({ proposals: ["a", "b", "c"].map(proposal), refused: [] }, 2, "r00-seed");
    expect(got.map((p) => p.dir)).toEqual(["/x/a", "/x/b"]);
    expect(got[0]?.state).toEqual({ external: { refused: ["c: over the 2 proposal(s) asked for"] } });
  });

  it("records refused output as one invalid slot while a slot is left", () => {
    const got = takeProposals({ proposals: [proposal("a")], refused: ["b/proposal.json: missing"] }, 2, "r01-k0");
    expect(got).toHaveLength(2);
    expect(got[1]).toMatchObject({ parents: ["r01-k0"], problems: ["b/proposal.json: missing"] });
    expect(got[1]?.dir).toBeUndefined();
    expect(got[1]?.spec).toBeUndefined();
  });

  it("lists at most 20 refusals and counts the rest", () => {
    const refused = Array.from({ length: 25 }, (_, i) => `f${i}: not a proposal folder`);
    const got = takeProposals({ proposals: [], refused }, 2, "r00-seed");
    expect(got).toHaveLength(1);
    expect(got[0]?.problems).toHaveLength(21);
    expect(got[0]?.problems?.at(-1)).toBe("and 5 more");
  });

  it("a step that wrote nothing proposes nothing", () => {
    expect(takeProposals({ proposals: [], refused: [] }, 2, "r00-seed")).toEqual([]);
  });
});
