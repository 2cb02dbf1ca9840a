import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HoneError } from "../../src/errors.ts";
import { loadHarness } from "../../src/harness/package.ts";
import { copyOf, edit, INITIAL_HARNESS, write } from "../helpers/fixtures.ts";

function expectHarnessError(dir: string, file: string, field: RegExp | string | undefined, message: RegExp) {
  let caught: unknown;
  try {
    loadHarness(dir);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(HoneError);
  const e = caught as HoneError;
  expect(e.exit).toBe("badHarness");
  expect(e.file?.endsWith(file)).toBe(true);
  if (field instanceof RegExp) expect(e.field).toMatch(field);
  else expect(e.field).toBe(field);
  expect(e.message).toMatch(message);
}

describe("harness packages", () => {
  it("loads the initial discovery harness", () => {
    const h = loadHarness(INITIAL_HARNESS);
    expect(h.name).toBe("initial-discovery");
    expect(h.tools.map((t) => t.name)).toEqual(["view_program", "edit_program", "evaluate_program", "load_skill", "finish"]);
    expect(h.skills.map((s) => s.name)).toEqual(["discovery"]);
    expect(h.middlewares.map((m) => m.name)).toEqual(["budget_reminder", "stall_restart", "long_tool_output"]);
    expect(h.middlewares[1]?.params).toEqual({ after_evaluations: 6, max_restarts: 2 });
    expect(h.sampling).toEqual({ temperature: 0.7, top_p: 0.95, max_tokens: 4096 });
    expect(h.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("gives the same content hash to identical packages and a different one after any change", () => {
    const dir = copyOf(INITIAL_HARNESS);
    expect(loadHarness(dir).contentHash).toBe(loadHarness(INITIAL_HARNESS).contentHash);
    edit(join(dir, "prompt.md"), (t) => `${t}\nOne more line.`);
    expect(loadHarness(dir).contentHash).not.toBe(loadHarness(INITIAL_HARNESS).contentHash);
  });

  it("sees every edit between loads, and one load's values never leak into the next", () => {
    const dir = copyOf(INITIAL_HARNESS);
    const first = loadHarness(dir);
    first.sampling.temperature = 1.9;
    (first.tools[0] as { description: string }).description = "mutated";
    const again = loadHarness(dir);
    expect(again.sampling.temperature).not.toBe(1.9);
    expect(again.tools[0]?.description).not.toBe("mutated");
    edit(join(dir, "agent.yaml"), (t) => t.replace(/temperature: [\d.]+/, "temperature: 0.33"));
    expect(loadHarness(dir).sampling.temperature).toBe(0.33);
  });

  it("refuses a missing directory and a missing agent.yaml", () => {
    expect(() => loadHarness("/nonexistent/harness")).toThrow(/not a harness package/);
    const dir = copyOf(INITIAL_HARNESS);
    rmSync(join(dir, "agent.yaml"));
    expect(() => loadHarness(dir)).toThrow(/has no agent.yaml/);
  });

  it("names the field of an unknown key in agent.yaml", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => `${t}\nbogus_key: 1\n`);
    expectHarnessError(dir, "agent.yaml", /bogus_key|top level/, /nrecognized key/);
  });

  it("names the field of an out-of-range sampling value", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("temperature: 0.7", "temperature: 7"));
    expectHarnessError(dir, "agent.yaml", "llm_config.temperature", /2/);
  });

  it("refuses a literal API key", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("llm_config:", "llm_config:\n  api_key: sk-live-123456"));
    expectHarnessError(dir, "agent.yaml", "llm_config.api_key", /\$\{env\./);
  });

  it("names the middleware param that is wrong", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("max_restarts: 2", "max_restarts: -1"));
    expectHarnessError(dir, "agent.yaml", "middlewares.1.params.max_restarts", /0/);
  });

  it("refuses an unknown built-in middleware", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("hone:stall_restart", "hone:teleport"));
    expectHarnessError(dir, "agent.yaml", "middlewares.1.import", /not a hone middleware/);
  });

  it("refuses a tool file whose name differs from agent.yaml", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "tools/finish.tool.yaml"), (t) => t.replace("name: finish", "name: finish_now"));
    expectHarnessError(dir, "finish.tool.yaml", "name", /agent.yaml lists it as "finish"/);
  });

  it("refuses a tool schema that is not an object schema", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "tools/finish.tool.yaml"), (t) => t.replace("type: object", "type: string"));
    expectHarnessError(dir, "finish.tool.yaml", "input_schema.type", /object/);
  });

  it("refuses a tool with no implementation", () => {
    const dir = copyOf(INITIAL_HARNESS);
    write(join(dir, "tools/teleport.tool.yaml"), "name: teleport\ndescription: go\ninput_schema:\n  type: object\n");
    edit(join(dir, "agent.yaml"), (t) =>
      t.replace(
        "    yaml_path: tools/finish.tool.yaml",
        "    yaml_path: tools/finish.tool.yaml\n  - name: teleport\n    yaml_path: tools/teleport.tool.yaml",
      ),
    );
    expect(() => loadHarness(dir)).toThrow(/custom_tools\/teleport.js does not exist/);
  });

  it("refuses paths that leave the package", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("system_prompt: prompt.md", "system_prompt: ../../etc/passwd"));
    expectHarnessError(dir, "agent.yaml", "system_prompt", /outside the package/);
  });

  it("checks SKILL.md frontmatter per the Agent Skills spec", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "skills/discovery/SKILL.md"), (t) => t.replace("name: discovery", "name: Discovery--X"));
    expectHarnessError(dir, "SKILL.md", "name", /lowercase/);
    edit(join(dir, "skills/discovery/SKILL.md"), (t) => t.replace("name: Discovery--X", "name: other"));
    expectHarnessError(dir, "SKILL.md", "name", /folder is "discovery"/);
    edit(join(dir, "skills/discovery/SKILL.md"), () => "no frontmatter here");
    expectHarnessError(dir, "SKILL.md", undefined, /frontmatter/);
  });

  it("refuses invalid YAML with the file name", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => `${t}\n  : : [\n`);
    expect(() => loadHarness(dir)).toThrow(/agent.yaml: is not valid YAML/);
  });

  it("refuses generated code unless the caller brings a sandbox", () => {
    const dir = copyOf(INITIAL_HARNESS);
    write(join(dir, "custom_tools/probe_more.js"), "function run(ctx, args) { return 1; }");
    expect(() => loadHarness(dir)).toThrow(/carries generated code/);
  });
});
