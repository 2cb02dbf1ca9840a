import { describe, expect, it } from "vitest";
import { fenced, fencedBlocks, fenceFor } from "../../src/fence.ts";
import { componentBlock, fence } from "../../src/method/methods/reflective/fenced.ts";
import { offlineReply } from "../../src/model/offline/policy.ts";
import "../../src/model/offline/roles.ts";

// A reflective method's prompt carries each text it works on in a fenced block, and reads the new text back from the
// reply's block. A SKILL.md or a prompt with a code example holds fences of its own: with a three-backtick fence the
// example's opening fence ended the block, and the text came back cut before its first example.

const SKILL = "Pack circles greedily.\n\n```python\nimport numpy as np\nx = np.zeros(3)\n```\n\nThen check overlaps.\n";

describe("fenced texts (CommonMark's fence rule)", () => {
  it("fences a text with more backticks than any run inside it", () => {
    expect(fenceFor("plain `code` text")).toBe("```");
    expect(fenceFor(SKILL)).toBe("````");
    expect(fenceFor("a ````` b")).toBe("``````");
    expect(fenced("component x", "a")).toBe("```component x\na\n```");
  });

  it("reads back every block whole, code examples included", () => {
    const prompt = `Improve these.\n\n${fence("skill_body.packing", SKILL)}\n\n${fence("system_prompt", "Be brief.")}\n`;
    expect(fencedBlocks(prompt, "component ").map((b) => [b.info, b.body])).toEqual([
      ["component skill_body.packing", SKILL],
      ["component system_prompt", "Be brief.\n"],
    ]);
  });

  it("takes a model's reply whole whether it lengthened its fence or kept three backticks", () => {
    const longer = `Here it is:\n${fence("skill_body.packing", SKILL)}\nDone.`;
    expect(componentBlock(longer, "skill_body.packing")).toBe(SKILL.trim());
    // Three backticks around a text with a ```python example: the example's fences nest inside the block.
    const kept = `\`\`\`component skill_body.packing\n${SKILL}\`\`\`\nThat is all.\n\`\`\`\nnot part of it\n\`\`\``;
    expect(componentBlock(kept, "skill_body.packing")).toBe(SKILL.trim());
    // A block closed at the end of its last line, as before.
    expect(componentBlock("```component system_prompt\nBe brief.```", "system_prompt")).toBe("Be brief.");
    expect(componentBlock("```component system_prompt\nnever closed", "system_prompt")).toBeUndefined();
  });

  it("stays linear in the text on hostile replies", () => {
    // Not a timing claim: each of these took the square of its length before a block that nothing closes ended the reading.
    for (const text of ["```component x\n`".repeat(50_000), "```component x\n```python\n".repeat(50_000)])
      expect(fencedBlocks(text, "component").length).toBeLessThanOrEqual(50_000);
  });

  it("the offline model's optimizer role keeps a text's code example when it moves the text's hints", () => {
    const body = `hone-hint: step_scale=0.05\n${SKILL}`;
    const user = `Earlier versions, worst to best:\n${fence("skill_body.packing", body)}\n`;
    const r = offlineReply({
      messages: [
        { role: "system", content: "hone-role: optimize\nWrite a better text." },
        { role: "user", content: user },
      ],
      sampling: { seed: 3 },
    });
    const back = componentBlock(String(r.content), "skill_body.packing") ?? "";
    expect(back).toContain("```python\nimport numpy as np\nx = np.zeros(3)\n```\n\nThen check overlaps.");
    expect(back).toMatch(/^hone-hint: step_scale=/);
  });
});
