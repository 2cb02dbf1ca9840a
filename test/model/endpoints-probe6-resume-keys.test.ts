import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { storedSettings } from "../../src/loop/optimize.ts";
import { openTrainRun } from "../../src/loop/train-setup.ts";
import { createRunDb } from "../../src/store/db.ts";
import { hone } from "../helpers/cli.ts";
import { offlineOptimizeSettings, tempDir } from "../helpers/fixtures.ts";

// A key in an endpoint's URL is never stored (`?key=***`): what resumes such a run must not call the endpoint with
// `***` in its place. An optimize or train run resumed by hand is refused saying why; a `hone compare` cell resumed
// by the grid is given its URL again by the experiment file; and a worker's
// --api-key-env, like every other, takes a variable's name, never the key.
describe("resuming runs whose endpoint had its key in the URL", () => {
  const keyed = "https://api.example.org/v1?key=q-secret";

  it("hone train --resume is refused, naming the field to use instead", async () => {
    const dir = tempDir();
    createRunDb(join(dir, "hone.db"), "train", {
      model: { model: "m", base_url: keyed },
      estimator: { kind: "patch_queue", patches: [] },
    });
    await expect(openTrainRun({ out: dir, resume: true })).rejects.toThrow(
      /started with the model at https:\/\/api\.example\.org\/v1\?key=\*\*\*, whose key in the URL hone never stores.*model\.api_key_env in train\.yaml/,
    );
  });

  it("an optimize cell resumed by hone compare takes the URL given again when it is the stored one", () => {
    const dir = tempDir();
    createRunDb(join(dir, "hone.db"), "optimize", offlineOptimizeSettings({ proposer: { model: "m", baseUrl: keyed } }));
    expect(() => storedSettings(dir, {})).toThrow(/never stores/);
    expect(storedSettings(dir, { endpoints: { proposer: keyed } }).proposer.baseUrl).toBe(keyed);
    // Another endpoint is no stand-in for the stored one.
    expect(() => storedSettings(dir, { endpoints: { proposer: "https://other.example.org/v1?key=q-secret" } })).toThrow(
      /never stores/,
    );
  });

  it("hone worker --api-key-env refuses a key pasted in place of a name, without repeating it (exit 2)", async () => {
    const r = await hone(["worker", "--queue", "redis://127.0.0.1:1", "--api-key-env", "sk-proj-pasted-secret"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/takes the name of the environment variable/);
    expect(`${r.stdout}${r.stderr}`).not.toContain("sk-proj-pasted-secret");
  });
});
