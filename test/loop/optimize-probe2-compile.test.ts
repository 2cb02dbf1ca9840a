import { existsSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applySpec } from "../../src/harness/compile.ts";
import { loadHarness } from "../../src/harness/package.ts";
import { gateGeneratedCode } from "../../src/sandbox/check.ts";
import { copyOf, edit, INITIAL_HARNESS, tempDir } from "../helpers/fixtures.ts";

// A seed harness is any package `hone harness check` accepts: its tools' yaml_path may name any file in it, so it
// need not have a tools/ folder. A proposal adding a tool to such a base wrote tools/<name>.tool.yaml into a folder
// that did not exist: ENOENT, not a SpecError, so `hone optimize` ended with "internal error" at round 1 (and again
// at every --resume), where the proposal should simply be compiled.

const NEW_TOOL = {
  name: "helper_tool",
  description: "Returns a constant.",
  input_schema: { type: "object" as const, properties: {} },
  code: "async function run(ctx, args) {\n  return { value: 1 };\n}",
};

/** The initial harness with its tool definitions in defs/ instead of tools/. */
function seedWithoutToolsFolder(): string {
  const dir = copyOf(INITIAL_HARNESS);
  renameSync(join(dir, "tools"), join(dir, "defs"));
  edit(join(dir, "agent.yaml"), (t) => t.replaceAll("yaml_path: tools/", "yaml_path: defs/"));
  loadHarness(dir); // a valid package as it is
  return dir;
}

describe("a spec's new tool over a base whose tool definitions are not in tools/", () => {
  it("compiles into a package that loads with the new tool", () => {
    const base = seedWithoutToolsFolder();
    const out = join(tempDir(), "cand");
    applySpec(base, { new_tools: [NEW_TOOL] }, out);
    expect(existsSync(join(out, "tools", "helper_tool.tool.yaml"))).toBe(true);
    expect(readFileSync(join(out, "agent.yaml"), "utf8")).toContain("yaml_path: tools/helper_tool.tool.yaml");
    const h = loadHarness(out, { generatedCode: gateGeneratedCode });
    expect(h.tools.map((t) => t.name)).toContain("helper_tool");
    expect(h.tools.map((t) => t.name)).toContain("view_program");
  });
});
