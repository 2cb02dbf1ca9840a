import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adas } from "../../../src/method/methods/adas.ts";
import type { AdasCandidateState } from "../../../src/method/methods/adas-archive.ts";
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
} from "./synthetic-archive.ts";

// ADAS's propose step on a synthetic archive, without the loop: a new generation is a proposal and two reflections
// on the archive of designs with their fitness; a refused design goes back to the meta agent for a debugged one.
const params = () => methodParams(adas, { bootstrap_samples: 1000 }) as never;
const stateOf = (p: { state?: Record<string, unknown> }) => p.state?.adas as AdasCandidateState;

describe("adas propose", () => {
  let model: ResolvedModel;
  beforeAll(async () => {
    model = await offlineModel();
  });
  afterAll(() => model.close());

  it("opens K generations: propose with the archive, reflect twice, then the design is written over the initial harness", async () => {
    const calls: Recorded[] = [];
    const a = syntheticArchive([{ id: "r00-seed", round: 0, score: 1.0, kept: true }]);
    const proposals = await adas.propose(proposeContext(a, params(), recordingProposer(model, calls), { round: 1, k: 2 }));
    expect(proposals.map((p) => [p.parents, stateOf(p).generation, stateOf(p).attempt])).toEqual([
      [["r00-seed"], 1, 1],
      [["r00-seed"], 2, 1],
    ]);
    // Three meta-agent calls per generation, one conversation each: the base prompt, reflection 1, reflection 2.
    expect(calls.map((c) => [c.sample, c.messages.length, c.temperature])).toEqual([
      [0, 2, 0.8],
      [1, 4, 0.8],
      [2, 6, 0.8],
      [10, 2, 0.8],
      [11, 4, 0.8],
      [12, 6, 0.8],
    ]);
    const [first] = calls;
    expect(first?.messages[0]?.content).toMatch(/^hone-role: meta-agent\n/);
    const base = String(first?.messages[1]?.content);
    expect(base).toMatch(/Pack 26 circles in the unit square/);
    expect(base).toMatch(/"generation": "initial"[\s\S]*Median: 1\b/);
    expect(String(calls[1]?.messages[3]?.content)).toMatch(/reflect on these points/);
    expect(String(calls[2]?.messages[5]?.content)).toMatch(/Mistakes to avoid/);
    expect(shownText(calls)).not.toContain(SECRET);
    const s = stateOf(proposals[0] as never);
    expect(s.archive).toEqual([{ id: "r00-seed", name: "initial harness", generation: "initial", fitness: expect.any(String) }]);
    expect(s.messages).toHaveLength(7); // the conversation up to the reply that gave the design, for a later debug
    expect(s.scale).toBe("relative");
    const dir = proposals[0]?.dir as string;
    expect(existsSync(join(dir, "agent.yaml"))).toBe(true);
    expect(readFileSync(join(dir, "prompt.md"), "utf8")).toBe(s.design.files["prompt.md"]);
  });

  it("sends a refused design back with its error for a debugged one (attempt 2), before opening a new generation", async () => {
    const calls: Recorded[] = [];
    const first = await adas.propose(
      proposeContext(syntheticArchive([{ id: "r00-seed", round: 0, score: 1.0 }]), params(), recordingProposer(model, []), {
        k: 1,
      }),
    );
    const gen1 = stateOf(first[0] as never);
    const a = syntheticArchive([
      { id: "r00-seed", round: 0, score: 1.0 },
      { id: "r01-k0", round: 1, parents: ["r00-seed"], score: null, status: "refused", state: { adas: gen1 } },
    ]);
    const refused = a.candidates[1] as { reason?: string };
    refused.reason = "[schema] tools/finish.tool.yaml is missing";
    expect(adas.keep(a, a.candidates[1] as never, params())).toMatchObject({ keep: false, rule: "debug" });
    const proposals = await adas.propose(proposeContext(a, params(), recordingProposer(model, calls), { round: 2, k: 2 }));
    expect(proposals.map((p) => [p.parents, stateOf(p).generation, stateOf(p).attempt])).toEqual([
      [["r01-k0"], 1, 2],
      [["r00-seed"], 2, 1],
    ]);
    const debug = calls[0];
    expect(debug?.messages.slice(0, -1)).toEqual(gen1.messages);
    expect(String(debug?.messages.at(-1)?.content)).toMatch(
      /refused by its check: \[schema\] tools\/finish\.tool\.yaml is missing[\s\S]*debug/,
    );
    expect(calls).toHaveLength(4); // one debug call, then the new generation's three
  });
});
