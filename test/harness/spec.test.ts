import { chmodSync, cpSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applySpec, SpecError } from "../../src/harness/compile.ts";
import { listFiles } from "../../src/harness/files.ts";
import { loadHarness } from "../../src/harness/package.ts";
import { changedFields, validateSpec } from "../../src/harness/spec.ts";
import { gateGeneratedCode } from "../../src/sandbox/check.ts";
import { INITIAL_HARNESS, tempDir } from "../helpers/fixtures.ts";

const problems = (v: unknown) =>
  validateSpec(v)
    .problems.map((p) => `${p.field}: ${p.message}`)
    .join(" | ");
const compile = (spec: unknown) => {
  const v = validateSpec(spec);
  if (!v.spec) throw new Error(problems(spec));
  const out = join(tempDir(), "pkg");
  applySpec(INITIAL_HARNESS, v.spec, out);
  return loadHarness(out, { generatedCode: gateGeneratedCode });
};

describe("HarnessSpec validation (fail-closed)", () => {
  it.each([
    [{ colour: "red" }, /nrecognized key/],
    [{ sampling: { temperature: 2 } }, /sampling.temperature/],
    [{ sampling: { max_tokens: 100 } }, /sampling.max_tokens/],
    [{ agent: { max_iterations: 3 } }, /agent.max_iterations/],
    [{ system_prompt: "   " }, /system_prompt: must not be empty/],
    [{ middleware_params: { stall_restart: { max_restarts: -1 } } }, /middleware_params.stall_restart.max_restarts/],
    [{ middleware_params: { teleport: {} } }, /nrecognized key/],
    [
      {
        new_tools: Array.from({ length: 4 }, (_, i) => ({
          name: `tool_${i}`,
          description: "d",
          input_schema: { type: "object" },
          code: "function run() {}",
        })),
      },
      /new_tools/,
    ],
    [{ new_tools: [{ name: "X", description: "d", input_schema: { type: "object" }, code: "c" }] }, /new_tools.0.name/],
    [
      {
        new_skills: [
          { name: "a", description: "d", body: "b" },
          { name: "b", description: "d", body: "b" },
          { name: "c", description: "d", body: "b" },
        ],
      },
      /new_skills/,
    ],
  ])("refuses %j", (spec, message) => {
    expect(problems(spec)).toMatch(message);
  });
  it("lists what a spec changes", () => {
    expect(
      changedFields({ sampling: { temperature: 0.4 }, skill_body: { discovery: "x" }, remove_tools: ["load_skill"] }),
    ).toEqual(["skill_body.discovery", "sampling.temperature=0.4", "remove_tool.load_skill"]);
  });
});

describe("compiling a spec over a package", () => {
  it("changes the prompt, sampling, iteration cap and middleware params, and keeps agent.yaml's comments", () => {
    const h = compile({
      system_prompt: "New prompt.",
      sampling: { temperature: 0.3 },
      agent: { max_iterations: 20 },
      middleware_params: { stall_restart: { after_evaluations: 3 } },
    });
    expect(h.systemPrompt).toBe("New prompt.");
    expect(h.sampling.temperature).toBe(0.3);
    expect(h.maxIterations).toBe(20);
    expect(h.middlewares.find((m) => m.name === "stall_restart")?.params).toEqual({ after_evaluations: 3, max_restarts: 2 });
    expect(readFileSync(join(h.dir, "agent.yaml"), "utf8")).toContain("# The initial discovery harness");
  });
  it("changes skills and tool descriptions, adds and removes tools, skills and middleware", () => {
    const h = compile({
      skill_description: { discovery: "New description." },
      skill_body: { discovery: "New body." },
      tool_descriptions: { finish: "Stop." },
      new_tools: [
        {
          name: "peek",
          description: "Show the program length.",
          input_schema: { type: "object", properties: {} },
          code: "function run(ctx, args) { return ctx.program.length; }",
        },
      ],
      new_skills: [{ name: "tactics", description: "More tactics.", body: "Try halving steps." }],
      new_middlewares: [{ name: "nudge", code: "function beforeModel(view) { return null; }", params: { x: 1 } }],
      remove_tools: ["load_skill"],
    });
    expect(h.skills.map((s) => [s.name, s.description, s.body])).toEqual([
      ["discovery", "New description.", "New body."],
      ["tactics", "More tactics.", "Try halving steps."],
    ]);
    expect(h.tools.map((t) => t.name)).toEqual(["view_program", "edit_program", "evaluate_program", "finish", "peek"]);
    expect(h.tools.find((t) => t.name === "finish")?.description).toBe("Stop.");
    expect(h.tools.find((t) => t.name === "peek")?.kind).toBe("custom");
    expect(h.middlewares.at(-1)).toMatchObject({ name: "nudge", kind: "custom", params: { x: 1 } });
  });
  it("copies every other file of the base as it is: bytes, mode and nested folders", () => {
    const base = join(tempDir(), "base");
    cpSync(INITIAL_HARNESS, base, { recursive: true });
    mkdirSync(join(base, "skills", "discovery", "notes", "deep"), { recursive: true });
    writeFileSync(join(base, "skills", "discovery", "notes", "deep", "n.txt"), "nested\n");
    writeFileSync(join(base, "run.sh"), "#!/bin/sh\necho hi\n");
    chmodSync(join(base, "run.sh"), 0o750);
    const out = join(tempDir(), "out");
    applySpec(base, { system_prompt: "A new prompt." }, out);
    const prompt = "prompt.md";
    expect(listFiles(out)).toEqual(listFiles(base));
    for (const f of listFiles(base).filter((f) => f !== prompt && f !== "agent.yaml")) {
      expect(readFileSync(join(out, f)), f).toEqual(readFileSync(join(base, f)));
      expect(statSync(join(out, f)).mode, f).toBe(statSync(join(base, f)).mode);
    }
    expect(readFileSync(join(out, prompt), "utf8")).toBe("A new prompt.\n");
    expect(readFileSync(join(base, prompt), "utf8")).not.toContain("A new prompt.");
  });
  it.each([
    [{ skill_body: { nosuch: "x" } }, /skill_body.nosuch: the harness has no skill/],
    [{ tool_descriptions: { nosuch: "x" } }, /tool_descriptions.nosuch: the harness has no tool/],
    [{ remove_tools: ["evaluate_program"] }, /required tool/],
    [{ remove_tools: ["nosuch"] }, /has no tool "nosuch"/],
    [
      { new_tools: [{ name: "finish", description: "d", input_schema: { type: "object" }, code: "function run(){}" }] },
      /already exists/,
    ],
    [{ sampling: { temperature: 0.7 } }, /changes nothing: it is equal to its base/],
  ])("refuses %j with the field", (spec, message) => {
    expect(() => compile(spec)).toThrow(SpecError);
    expect(() => compile(spec)).toThrow(message);
  });
});
