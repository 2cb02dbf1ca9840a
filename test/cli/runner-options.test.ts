import { writeFileSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { optionsFromFlags } from "../../src/cli/optimize-flags.ts";
import { slurmFromFlags } from "../../src/cli/runner-options.ts";
import { parseOptimizeConfig } from "../../src/loop/optimize-config.ts";
import { tempDir } from "../helpers/fixtures.ts";

// --runner and the Slurm flags, shared by run, optimize and compare: one rule for what they accept.
describe("slurmFromFlags", () => {
  it("gives Slurm settings only for --runner slurm, the template as an absolute path", () => {
    expect(slurmFromFlags({})).toBeUndefined();
    expect(slurmFromFlags({ runner: "local" })).toBeUndefined();
    const dir = tempDir();
    writeFileSync(join(dir, "job.sh"), "#!/bin/bash\n{{directives}}\n{{command}}\n");
    const slurmTemplate = relative(process.cwd(), join(dir, "job.sh"));
    expect(isAbsolute(slurmTemplate)).toBe(false);
    expect(slurmFromFlags({ runner: "slurm", slurmTime: 10, slurmTemplate, slurmGres: "gpu:1" })).toEqual({
      partition: undefined,
      gres: "gpu:1",
      timeMinutes: 10,
      template: join(dir, "job.sh"),
    });
  });

  it("refuses an unknown runner, a bad --slurm-time, and --runner slurm with --queue", () => {
    expect(() => slurmFromFlags({ runner: "k8s" })).toThrow(/--runner k8s: local or slurm/);
    expect(() => slurmFromFlags({ runner: "slurm", slurmTime: "ten" })).toThrow(/--slurm-time is whole minutes/);
    expect(() => slurmFromFlags({ runner: "slurm", slurmTime: 0 })).toThrow(/--slurm-time is whole minutes/);
    expect(() => slurmFromFlags({ runner: "slurm", queue: "redis://127.0.0.1:6379" })).toThrow(
      /give --queue \(BullMQ workers\) or --runner slurm, not both/,
    );
  });

  it("refuses a template that cannot be read or never runs a rollout, and a partition that is not one word", () => {
    const dir = tempDir();
    expect(() => slurmFromFlags({ runner: "slurm", slurmTemplate: join(dir, "none.sh") })).toThrow(
      /slurm template .*none\.sh: cannot be read/,
    );
    writeFileSync(join(dir, "idle.sh"), "#!/bin/bash\nsleep 1\n");
    expect(() => slurmFromFlags({ runner: "slurm", slurmTemplate: join(dir, "idle.sh") })).toThrow(/has no \{\{command\}\}/);
    expect(() => slurmFromFlags({ runner: "slurm", slurmPartition: "gpu\n#SBATCH --mem=0" })).toThrow(/one word/);
  });
});

describe("--slurm-* flags over a config file's slurm: section", () => {
  // A config's `slurm:` section sends the rollouts to Slurm as --runner slurm does: a --slurm-time given beside it
  // was refused as "add --runner slurm", and with --runner slurm the flags dropped the section's other values.
  const file = {
    path: "opt.yaml",
    config: parseOptimizeConfig({ task: "circle-packing", slurm: { partition: "gpu", gres: "gpu:1" } }, (f) => f),
  };

  it("refines the section, keeping what no flag names", () => {
    for (const runner of [undefined, "slurm"])
      expect(optionsFromFlags({ runner, slurmTime: 90 }, file).slurm).toMatchObject({
        partition: "gpu",
        gres: "gpu:1",
        time_minutes: 90,
      });
  });

  it("is still refused with --runner local, and without a section", () => {
    expect(() => optionsFromFlags({ runner: "local", slurmTime: 90 }, file)).toThrow(/--slurm-time is for Slurm jobs/);
    expect(() => optionsFromFlags({ task: "circle-packing", slurmTime: 90 })).toThrow(/--slurm-time is for Slurm jobs/);
  });
});
