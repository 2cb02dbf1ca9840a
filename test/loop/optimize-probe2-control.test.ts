import { describe, expect, it } from "vitest";
import { changedFields, validateSpec } from "../../src/harness/spec.ts";
import { extractProposals } from "../../src/method/proposer.ts";

// A proposer's texts reach the user's terminal: `hone log` prints each candidate's changed fields
// (`budget_reminder.message=<the text>`), `hone diff` the files a spec wrote, git the commit message. A proposal whose
// budget_reminder message held "\u001b]0;pwned\u0007\u001b[2J" was accepted, rolled out and promoted, and `hone log`
// then set the terminal's title and cleared the screen. A spec's texts are now refused with any control character
// but tab, line feed and carriage return, naming the field, as every other bound of a spec is.

const problemsOf = (spec: unknown) => validateSpec(spec).problems.map((p) => `${p.field}: ${p.message}`);

describe("control characters in a proposal's texts", () => {
  it("are refused wherever they are, naming the field and the character", () => {
    const esc = { middleware_params: { budget_reminder: { message: "Budget {left}\u001b]0;pwned\u0007\u001b[2J" } } };
    expect(validateSpec(esc).spec).toBeUndefined();
    expect(problemsOf(esc)).toEqual([
      "middleware_params.budget_reminder.message: holds the control character U+001B at 13: texts may hold tabs and line breaks, no other control character",
    ]);
    expect(problemsOf({ system_prompt: "Be brief.\u0000hidden" })[0]).toMatch(/^system_prompt: .*U\+0000 at 9/);
    expect(problemsOf({ new_skills: [{ name: "lattice", description: "Hex\u009b2J lattice", body: "Use it." }] })[0]).toMatch(
      /^new_skills\.0\.description: .*U\+009B/,
    );
    // In a new tool's schema, a key too: the field names it escaped, so the refusal itself prints nothing raw.
    const key = {
      new_tools: [
        {
          name: "probe_tool",
          description: "d",
          input_schema: { type: "object", properties: { "x\u0007": { type: "string" } } },
          code: "async function run(ctx, args) { return 1; }",
        },
      ],
    };
    expect(problemsOf(key)[0]).toMatch(/^new_tools\.0\.input_schema\.properties\.x\\u0007: .*U\+0007/);
  });

  it("tabs and line breaks stay accepted, and code still writes escapes as text", () => {
    const spec = {
      system_prompt: "Plan:\r\n\t1. edit\n\t2. evaluate",
      new_tools: [
        {
          name: "probe_tool",
          description: "d",
          input_schema: { type: "object" },
          code: 'async function run(ctx, args) {\n\treturn "\\x1b[0m";\n}',
        },
      ],
    };
    const v = validateSpec(spec);
    expect(v.problems).toEqual([]);
    expect(changedFields(v.spec as NonNullable<typeof v.spec>)).toEqual(["system_prompt", "new_tool.probe_tool"]);
  });

  it("refusals never carry the proposer's control characters raw (zod's paths and messages, V8's JSON errors)", () => {
    const raw = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
    for (const spec of [{ skill_description: { "\u001b[2J": "x" } }, { "\u001b]0;pwned\u0007": 1 }]) {
      const problems = problemsOf(spec);
      expect(problems.length).toBeGreaterThan(0);
      for (const p of problems) expect(p).not.toMatch(raw);
    }
    expect(problemsOf({ skill_description: { "\u001b[2J": "x" } })[0]).toBe(
      "skill_description.\\u001b[2J: Invalid key in record",
    );
    const parsed = extractProposals("```json\n\u001b]0;pwned\u0007\n```");
    expect(parsed).toMatch(/^the JSON does not parse: .*\\u001b/);
    expect(parsed).not.toMatch(raw);
  });
});

describe("a spec nested past any schema's need", () => {
  // 1,900 nested arrays in a tool's input_schema fit the 4,000-character JSON cap; the control-character walk
  // recursed and threw RangeError out of the round (found by review). Refused as a problem of the spec instead.
  it("is refused naming the field, without throwing", () => {
    const deep = JSON.parse(`${"[".repeat(1900)}${"]".repeat(1900)}`);
    const spec = {
      new_tools: [
        {
          name: "deep_tool",
          description: "d",
          input_schema: { type: "object", properties: { x: deep } },
          code: "async function run(ctx, args) { return 'ok'; }",
        },
      ],
    };
    const v = validateSpec(spec);
    expect(v.spec).toBeUndefined();
    expect(JSON.stringify(v.problems)).toMatch(/nests deeper than 64 levels/);
  });
});
