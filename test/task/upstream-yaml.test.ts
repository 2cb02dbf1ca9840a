import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { readUpstreamYaml } from "../../src/task/upstream-yaml.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// An upstream config is read as its framework reads it: OpenEvolve and SkyDiscover use PyYAML's safe_load, which
// takes a multi-line quoted string the YAML spec (and the yaml package) refuses. The folder ran nowhere but upstream.

const FOLDER = join(ROOT, "test", "fixtures", "task-shapes", "pyyaml-config");

afterEach(() => vi.restoreAllMocks());

describe("an upstream config.yaml only PyYAML reads", () => {
  it("loads with the system message PyYAML reads, and no YAML warnings printed", (ctx) => {
    requireTool(ctx, "pyyaml");
    const warned = vi.spyOn(process, "emitWarning");
    const task = loadTaskFolder(FOLDER);
    expect(task.description).toContain("You are an expert in tiling. Your Expertise: - **Tile sizes**: balance cache use");
    expect(task.timeoutSec).toBe(30);
    expect(warned).not.toHaveBeenCalled();
  });

  it("says why when PyYAML cannot read it either", (ctx) => {
    requireTool(ctx, "pyyaml");
    const noYaml = join(tempDir(), "python-without-yaml");
    writeFileSync(noYaml, "#!/bin/sh\nexit 3\n"); // what the loader exits with when `import yaml` fails
    chmodSync(noYaml, 0o755);
    expect(() => readUpstreamYaml(join(FOLDER, "config.yaml"), noYaml)).toThrow(
      /Missing closing "quote.*\(PyYAML, which the upstream framework reads it with, is not installed for .*python-without-yaml\)/,
    );
    const broken = join(tempDir(), "broken.yaml");
    writeFileSync(broken, 'a: "\n  b: [\n');
    expect(() => readUpstreamYaml(broken)).toThrow(/PyYAML refuses it too: /);
  });

  it("never hands an alias bomb to PyYAML, and stops PyYAML's reading of one it does get at a size", (ctx) => {
    requireTool(ctx, "pyyaml");
    const levels = "abcdefghi";
    const lines = [...levels].map((l, i) =>
      i === 0
        ? "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"
        : `${l}: &${l} [${Array(10)
            .fill(`*${levels[i - 1]}`)
            .join(", ")}]`,
    );
    const bomb = join(tempDir(), "laughs.yaml");
    writeFileSync(bomb, `${lines.join("\n")}\n`); // 10^9 numbers once expanded
    expect(() => readUpstreamYaml(bomb)).toThrow(/Excessive alias count/);
    // The same, where the yaml package stops first at what only PyYAML reads (a quoted string at its key's indentation).
    const both = join(tempDir(), "laughs-and-quote.yaml");
    writeFileSync(both, `prompt:\n  system_message: "\n  multi-line\n    text"\n${lines.join("\n")}\n`);
    expect(() => readUpstreamYaml(both)).toThrow(/PyYAML reads it as a value too large to take/);
  });
});
