import { describe, expect, it } from "vitest";
import { slurmFromFlags } from "../../src/cli/runner-options.ts";

// --runner and the Slurm flags, shared by run, optimize and compare: one rule for what they accept.
describe("slurmFromFlags", () => {
  it("gives Slurm settings only for --runner slurm, the template as an absolute path", () => {
    expect(slurmFromFlags({})).toBeUndefined();
    expect(slurmFromFlags({ runner: "local" })).toBeUndefined();
    expect(slurmFromFlags({ runner: "slurm", slurmTime: 10, slurmTemplate: "job.sh", slurmGres: "gpu:1" })).toEqual({
      partition: undefined,
      gres: "gpu:1",
      timeMinutes: 10,
      template: `${process.cwd()}/job.sh`,
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
});
