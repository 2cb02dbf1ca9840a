import { describe, expect, it } from "vitest";
import { parseHints } from "../../src/model/offline/hints.ts";
import { offlineReply } from "../../src/model/offline/policy.ts";
import "../../src/model/offline/roles.ts";

const block = (body: string) => `\`\`\`component system_prompt\n${body}\n\`\`\``;
const ask = (bodies: string[], seed: number, system = "hone-role: optimize\nYou are an optimizer.") =>
  offlineReply({
    messages: [
      { role: "system", content: system },
      { role: "user", content: `Versions, worst to best:\n${bodies.map((b) => `text:\n${block(b)}\nscore:\n1\n`).join("\n")}` },
    ],
    sampling: { seed },
  }).content ?? "";
const bodyOf = (reply: string) => /^```component system_prompt\n([\s\S]*)\n```$/.exec(reply)?.[1];

describe("the offline model as OPRO's optimizer (hone-role: optimize)", () => {
  it("answers one block named after the versions: the best (last) one with its hints moved, unlike every one shown", () => {
    const shown = [
      "Work.\nhone-hint: literals_per_edit=3",
      "Work.\nhone-hint: literals_per_edit=2",
      "Work.\nhone-hint: literals_per_edit=1",
    ];
    for (let seed = 0; seed < 30; seed++) {
      const body = bodyOf(ask(shown, seed));
      expect(body, `seed ${seed}`).toBeDefined();
      expect(body?.startsWith("Work.\n")).toBe(true);
      expect(shown.map((s) => s.trim())).not.toContain(body?.trim());
      expect(parseHints([body ?? ""]).literals_per_edit).toBeGreaterThanOrEqual(1);
    }
  });

  it("adds a hint to a text that has none, is deterministic in its seed, and is not claimed by the other method roles", () => {
    const a = ask(["Plain prompt."], 7);
    expect(bodyOf(a)).toMatch(/^Plain prompt\.\nhone-hint: step_scale=[0-9.]+$/);
    expect(ask(["Plain prompt."], 7)).toBe(a);
    expect(ask(["Plain prompt."], 8)).not.toBe(a);
    // The rewrite role answers every block it is given, not one new version.
    expect(ask(["A", "B"], 7, "hone-role: rewrite").match(/```component/g)).toHaveLength(2);
  });
});
