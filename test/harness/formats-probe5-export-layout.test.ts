import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importNexau, writePackage } from "../../src/harness/formats/nexau.ts";
import { nexauExport } from "../../src/harness/formats/nexau-export.ts";
import { patchYaml } from "../../src/harness/formats/package-reader.ts";
import { loadHarness } from "../../src/harness/package.ts";
import { copyOf, edit, ROOT, tempDir } from "../helpers/fixtures.ts";

// HarnessTTT's own agent.yaml folds its description at 80 columns (`description: >-`). Exporting a learned harness
// re-rendered the whole file, so the description nobody changed came back wrapped at 110 columns: the section was
// the same value but not the same bytes, though export promises unchanged sections byte for byte.

const FIXTURE = join(ROOT, "test", "fixtures", "nexau", "harnessttt-initial");
const load = (dir: string) => loadHarness(dir, { generatedCode: () => {} });
const out = () => join(tempDir(), "out");

const NARROW = `description: >-
  The inner discovery harness in HarnessTTT's NexAU layout: a frozen
  executor improves one task's program through an edit -> evaluate loop
  under a fixed evaluation budget, with one generated Python tool.
`;

describe("export of a learned NexAU harness", () => {
  it("writes the sections nobody changed as the original wrote them, folded scalars included", () => {
    const origin = copyOf(FIXTURE);
    edit(join(origin, "agent.yaml"), (t) => t.replace(/^description: >-\n(?: {2}.*\n)+/m, NARROW));
    const original = readFileSync(join(origin, "agent.yaml"), "utf8");
    expect(original).toContain(NARROW);
    const a = importNexau(origin, out()).out;
    edit(join(a, "agent.yaml"), (t) => t.replace("temperature: 0.7", "temperature: 0.4"));
    const b = writePackage(out(), nexauExport(load(a)).files);
    const now = readFileSync(join(b, "agent.yaml"), "utf8");
    expect(now).toBe(original.replace("temperature: 0.7", "temperature: 0.4"));
  });

  it("patchYaml changes only what changed, and still adds and removes top-level keys", () => {
    const text = `# head\nname: a   # kept\ndescription: >-\n  one two\n  three\nkeep: [1, 2]\ngone: x\nn: 1\n`;
    const before = { name: "a", description: "one two three", keep: [1, 2], gone: "x", n: 1 };
    const after = { name: "a", description: "one two three", keep: [1, 2], n: 2, added: { k: true } };
    const patched = patchYaml(text, before, after);
    expect(patched).toContain("# head\nname: a   # kept\ndescription: >-\n  one two\n  three\nkeep: [1, 2]\n");
    expect(patched).not.toContain("gone");
    expect(patched).toContain("n: 2\n");
    expect(patched).toMatch(/added:\n {2}k: true\n/);
  });
});
