import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { explainFetchFailure } from "../../src/cli/commands/datasets-list.ts";
import { readExperiment } from "../../src/compare/experiment.ts";
import { HoneError } from "../../src/errors.ts";
import { readOptimizeConfig } from "../../src/loop/optimize-config.ts";
import { readTrainConfig } from "../../src/loop/train-config.ts";
import { METHODS } from "../../src/method/registry.ts";
import { findExecutable } from "../../src/which.ts";
import { hone } from "../helpers/cli.ts";
import { GSM8K_FIXTURE, ROOT, tempDir } from "../helpers/fixtures.ts";

/** A PATH holding only the named tools (symlinks), as on a machine where nothing else is installed. */
function onlyTools(names: string[]): string {
  const bin = tempDir("hone-path-");
  const real: Record<string, string | undefined> = {
    node: process.execPath,
    python3: execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim(),
  };
  for (const n of names) {
    const target = real[n] ?? findExecutable(n);
    if (!target) throw new Error(`${n} is needed to build the test PATH`);
    symlinkSync(target, join(bin, n));
  }
  return bin;
}

interface Check {
  id: string;
  ok: boolean;
  required: boolean;
  found: string;
  enables: string;
  install?: { debian: string; macos: string };
}
const doctor = async (args: string[], env?: NodeJS.ProcessEnv) => {
  const r = await hone(["doctor", "--json", ...args], { env });
  return { code: r.code, report: JSON.parse(r.stdout) as { ok: boolean; checks: Check[] }, stderr: r.stderr };
};

describe("hone doctor", () => {
  it("on a machine with only node, python3 and git: ready, and says what each missing tool would enable and how to install it", async () => {
    const { code, report } = await doctor([], { PATH: onlyTools(["node", "python3", "git"]), HONE_CHROMIUM: "" });
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    const by = Object.fromEntries(report.checks.map((c) => [c.id, c]));
    for (const id of ["node", "python3", "git"]) expect(by[id]).toMatchObject({ ok: true, required: true });
    expect(by.python3?.found).toMatch(/^python3 [\d.]+ with numpy [\d.]+$/);
    for (const id of ["bubblewrap", "redis-server", "sbatch", "chromium"]) {
      expect(by[id]).toMatchObject({ ok: false, required: false });
      expect(by[id]?.enables.length).toBeGreaterThan(10);
      expect(by[id]?.install?.debian).toBeTruthy();
      expect(by[id]?.install?.macos).toBeTruthy();
    }
    expect(by.bubblewrap?.install?.debian).toBe("sudo apt-get install bubblewrap");
    expect(by["redis-server"]?.install?.macos).toBe("brew install redis");
    const text = await hone(["doctor"], { env: { PATH: onlyTools(["node", "python3", "git"]), HONE_CHROMIUM: "" } });
    expect(text.stdout).toMatch(
      /missing {2}redis-server .*\n.*would enable: .*\n.*install: Debian: sudo apt-get install redis-server · macOS: brew install redis/,
    );
    expect(text.stdout).toMatch(/ready; without bubblewrap, redis-server, sbatch, chromium/);
  });

  it("without python3 it is not ready (exit 4), with the install command", async () => {
    const { code, report } = await doctor([], { PATH: onlyTools(["node", "git"]) });
    expect(code).toBe(4);
    const py = report.checks.find((c) => c.id === "python3");
    expect(py).toMatchObject({ ok: false, found: "python3 is not on PATH" });
    expect(py?.install?.debian).toBe("sudo apt-get install python3 python3-numpy");
  });

  it("checks an endpoint and a queue given by flags (exit 6 when they do not answer)", async () => {
    const { code, report } = await doctor([
      "--base-url",
      "http://127.0.0.1:9/v1",
      "--model",
      "m",
      "--queue",
      "redis://:s3cret@127.0.0.1:9",
    ]);
    expect(code).toBe(6);
    const by = Object.fromEntries(report.checks.map((c) => [c.id, c]));
    expect(by.endpoint).toMatchObject({ ok: false, required: true });
    expect(by.endpoint?.found).toMatch(/cannot reach http:\/\/127.0.0.1:9\/v1/);
    expect(by.queue?.found).toMatch(/redis:\/\/:\*\*\*@127.0.0.1:9: cannot connect \(ECONNREFUSED\)/);
    expect(JSON.stringify(report)).not.toContain("s3cret"); // a queue URL's password is never printed
  });
});

describe("hone init", () => {
  it("writes commented hone.yaml and train.yaml that their JSON Schemas and readers accept", async () => {
    const dir = join(tempDir(), "project");
    const r = await hone(["init", dir]);
    expect(r.code, r.stderr).toBe(0);
    const ajv = new Ajv2020({ strict: false, logger: false });
    for (const [file, schema] of [
      ["hone.yaml", "optimize.schema.json"],
      ["train.yaml", "train.schema.json"],
      ["experiment.yaml", "experiment.schema.json"],
    ] as const) {
      const text = readFileSync(join(dir, file), "utf8");
      const line = text.split("\n")[0] as string;
      expect(line).toMatch(new RegExp(`^# yaml-language-server: \\$schema=.*schemas/${schema.replace(".", "\\.")}$`));
      // The $schema line leads to the schema from the file's folder.
      expect(existsSync(resolve(dir, line.slice(line.indexOf("=") + 1)))).toBe(true);
      const validate = ajv.compile(JSON.parse(readFileSync(join(ROOT, "schemas", schema), "utf8")));
      expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
      expect(text.split("\n").filter((l) => l.trimStart().startsWith("#")).length).toBeGreaterThan(8);
    }
    expect(readOptimizeConfig(join(dir, "hone.yaml")).task).toBe("circle-packing");
    expect(readTrainConfig(join(dir, "train.yaml")).harness).toBe(join(ROOT, "harnesses", "qa"));
    const grid = readExperiment(join(dir, "experiment.yaml"), { methods: Object.keys(METHODS) });
    expect(grid.harnesses[0]?.path).toBe(join(ROOT, "harnesses", "initial"));
    const again = await hone(["init", dir]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/hone.yaml, .*train.yaml, .*experiment.yaml already exist; remove, or pass --force/);
    expect((await hone(["init", dir, "--force"])).code).toBe(0);
  });

  it("every relative path in hone.yaml and train.yaml resolves against the file, wherever hone runs from", {
    timeout: 120_000,
  }, async () => {
    const dir = join(tempDir(), "project");
    expect((await hone(["init", dir])).code).toBe(0);
    const elsewhere = tempDir();
    writeFileSync(
      join(dir, "hone.yaml"),
      readFileSync(join(dir, "hone.yaml"), "utf8").replace("# out: runs/opt-circle-packing", "out: runs/opt"),
    );
    const opt = await hone(
      ["optimize", "--config", join(dir, "hone.yaml"), "--rounds", "1", "--proposals", "2", "--max-evals", "3", "--json"],
      {
        cwd: elsewhere,
      },
    );
    expect(opt.code, opt.stderr).toBe(0);
    expect(JSON.parse(opt.stdout).run_dir).toBe(join(dir, "runs", "opt"));

    mkdirSync(join(dir, "datasets"));
    cpSync(GSM8K_FIXTURE, join(dir, "datasets", "gsm8k"), { recursive: true });
    writeFileSync(
      join(dir, "train.yaml"),
      readFileSync(join(dir, "train.yaml"), "utf8")
        .replace("# data_dir: ./datasets", "data_dir: ./datasets")
        .replace("limit: 20", "limit: 4")
        .replace("# out: runs/train", "out: runs/train"),
    );
    const c = readTrainConfig(join(dir, "train.yaml"));
    expect([c.panel.data_dir, c.out]).toEqual([join(dir, "datasets"), join(dir, "runs", "train")]);
    const train = await hone(["train", "--config", join(dir, "train.yaml"), "--epochs", "1", "--json"], { cwd: elsewhere });
    expect(train.code, train.stderr).toBe(0);
    expect(JSON.parse(train.stdout).out).toBe(join(dir, "runs", "train"));
    expect(existsSync(join(elsewhere, "runs"))).toBe(false);
  });
});

describe("hone datasets fetch without a network", () => {
  it("points to --base-url when the canonical source cannot be reached", () => {
    const err = new HoneError("endpoint", "cannot download https://raw.githubusercontent.com/x/train.jsonl: fetch failed");
    const told = explainFetchFailure(err, "gsm8k", undefined) as HoneError;
    expect(told.exit).toBe("endpoint");
    expect(told.message).toMatch(/fetch failed; without a network here, put train.jsonl, test.jsonl on a server .* --base-url/);
  });

  it("asks whether the mirror is up when --base-url does not answer (exit 6)", async () => {
    const r = await hone(["datasets", "fetch", "gsm8k", "--base-url", "http://127.0.0.1:9", "--data-dir", tempDir()]);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/cannot download http:\/\/127.0.0.1:9\/train.jsonl: .*; is the mirror http:\/\/127.0.0.1:9 up/);
  });
});
