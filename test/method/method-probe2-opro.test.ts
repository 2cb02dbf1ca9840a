// OPRO's "INS" filter on harness texts: upstream drops an instruction holding "INS" because its meta-prompt wraps
// instructions in <INS> tags (google-deepmind/opro, opro/optimization/opt_utils.py, `if "INS" in instruction`). hone
// wraps them in fenced component blocks, so the filter's mark is the block's opening; a prompt with an "# INSTRUCTIONS"
// heading is an ordinary harness text and must still be proposed.
import { describe, expect, it } from "vitest";
import { evopromptGa } from "../../src/method/methods/evoprompt-ga.ts";
import { opro } from "../../src/method/methods/opro.ts";
import { replyText } from "../../src/method/methods/prompt-text.ts";
import { newInstructions, polish } from "../../src/method/rules/opro.ts";
import { archiveOf, contextOf } from "./methods/archive.ts";

const fenced = (text: string) => `\`\`\`component system_prompt\n${text}\n\`\`\``;
const params = (raw: Record<string, unknown> = {}) => opro.params.parse(raw);

describe("opro on a prompt whose text holds INS", () => {
  const seed = "# INSTRUCTIONS\nPack the circles; evaluate after every edit.";
  const archive = archiveOf([
    { id: "r00-seed", score: 0.5, prompt: seed },
    { id: "r01-k00", round: 1, score: 0.6, prompt: "# INSTRUCTIONS\nPack the circles tightly." },
  ]);

  it("proposes the new versions that keep the INSTRUCTIONS heading", async () => {
    const replies = [
      fenced("# INSTRUCTIONS\nGrow the smallest circle first."),
      fenced("# INSTRUCTIONS\nINSERT a circle in gaps."),
    ];
    const ctx = contextOf(archive, params(), { k: 2, replies: (c) => replies[c.sample ?? 0] as string });
    const proposals = await opro.propose(ctx);
    expect(proposals.map((p) => p.spec?.system_prompt)).toEqual([
      "# INSTRUCTIONS\nGrow the smallest circle first.",
      "# INSTRUCTIONS\nINSERT a circle in gaps.",
    ]);
  });

  it("drops a text that still holds a block's opening (the container's mark, as upstream drops one holding INS)", async () => {
    const replies = ["```component system_prompt\nUse ```component x``` blocks\n```", fenced("Whole answer.")];
    const ctx = contextOf(archive, params(), { k: 2, replies: (c) => replies[c.sample ?? 0] as string });
    const proposals = await opro.propose(ctx);
    expect(proposals.map((p) => p.spec?.system_prompt)).toEqual(["Whole answer."]);
  });

  it("keeps upstream's own filter as the rule's default", () => {
    expect(newInstructions(["<INS>Replace INS here</INS>", "Fine."], new Set())).toEqual(["Fine."]);
    expect(newInstructions(["Replace INS here"], new Set(), { marker: "```component " })).toEqual(["Replace INS here"]);
  });
});

// OPRO's polish_sentence (opro/evaluation/eval_utils.py): strip, drop "**", capitalise when more than one character is
// left. A sample that is only "**" polishes to "" there (values from running upstream's function with python3); hone
// read the first letter of the empty text and threw, which ended the propose step and with it the run.
describe("opro: a sample made of bold marks only", () => {
  it("polishes as upstream's polish_sentence does", () => {
    expect(["**", "****", " ** ", "**a", "** a", "**be brief**"].map(polish)).toEqual(["", "", "", "a", " a", "Be brief"]);
  });

  it("does not end the step: the other samples are still proposed", async () => {
    const archive = archiveOf([{ id: "r00-seed", score: 0.5 }]);
    const replies = [fenced("**"), fenced("Check every edit.")];
    const ctx = contextOf(archive, params(), { k: 2, replies: (c) => replies[c.sample ?? 0] as string });
    const proposals = await opro.propose(ctx);
    expect(proposals.map((p) => p.spec?.system_prompt)).toEqual(["Check every edit."]);
  });
});

// A reply cut short (max_tokens) before its block's closing fence. Upstream takes the text after the opening tag:
// OPRO's extraction (opt_utils.py: from <INS> to the end when </INS> is missing) and EvoPrompt's get_final_prompt
// (utils.py: `text.split("<prompt>")[-1].split("</prompt>")[0]`) both give "Make one change at a time and" for
// "...2. <prompt>Make one change at a time and" (run with python3). hone took the whole reply, its reasoning and the
// fence's opening line included, as the new system prompt.
describe("a reply whose block was never closed", () => {
  const cut = "1. Crossover: work step by step and test.\n2. ```component system_prompt\nMake one change at a time and";

  it("gives the text after the opening line (replyText)", () => {
    expect(replyText(cut, "system_prompt")).toBe("Make one change at a time and");
    expect(replyText("```component system_prompt", "system_prompt")).toBe("");
    expect(replyText("no block at all", "system_prompt")).toBe("no block at all");
  });

  it("is what OPRO proposes", async () => {
    const archive = archiveOf([{ id: "r00-seed", score: 0.5 }]);
    const ctx = contextOf(archive, params(), { k: 1, replies: () => cut });
    expect((await opro.propose(ctx)).map((p) => p.spec?.system_prompt)).toEqual(["Make one change at a time and"]);
  });

  it("is the child EvoPrompt GA proposes", async () => {
    const archive = archiveOf([
      { id: "r00-seed", score: 0.5 },
      { id: "r01-k00", round: 1, score: 0.6, prompt: "Work step by step.", state: { evo: "init" } },
    ]);
    const ctx = contextOf(archive, evopromptGa.params.parse({ popsize: 2 }), { k: 1, replies: () => cut });
    expect((await evopromptGa.propose(ctx)).map((p) => p.spec?.system_prompt)).toEqual(["Make one change at a time and"]);
  });
});
