import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { addModelOptions, modelSettingsFrom } from "../../src/cli/model-options.ts";
import { hone } from "../helpers/cli.ts";

// `--offline-latency-ms abc` became NaN and ran on: the offline model then answered at once (setTimeout(NaN) is 0),
// and a benchmark that meant to add latency measured none. A value that is no milliseconds is a usage error.

const parse = (...args: string[]) => {
  const cmd = addModelOptions(new Command().exitOverride(), "executor");
  cmd.parse(args, { from: "user" });
  return modelSettingsFrom(cmd.opts(), "executor");
};

describe("--offline-latency-ms", () => {
  it("takes milliseconds from 0 to an hour", () => {
    expect(parse("--executor-offline-latency-ms", "200").offlineLatencyMs).toBe(200);
    expect(parse("--executor-offline-latency-ms", "0").offlineLatencyMs).toBe(0);
    expect(parse().offlineLatencyMs).toBeUndefined();
  });

  it("refuses what is no such number, naming the flag and the text", () => {
    for (const bad of ["abc", "-5", "3600001", "Infinity", ""]) {
      expect(() => parse("--executor-offline-latency-ms", bad)).toThrow(
        `--executor-offline-latency-ms takes milliseconds from 0 to 3600000 (got ${JSON.stringify(bad)})`,
      );
    }
  });

  it("is a usage error (exit 2) of hone run, before anything is written", { timeout: 60_000 }, async () => {
    const r = await hone(["run", "--task", "circle-packing", "--model", "offline", "--offline-latency-ms", "abc"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('--offline-latency-ms takes milliseconds from 0 to 3600000 (got "abc")');
  });
});
