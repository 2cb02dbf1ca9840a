import { afterEach, describe, expect, it } from "vitest";
import { modelSettingsFrom } from "../../src/cli/model-options.ts";
import { HoneError } from "../../src/errors.ts";
import { trainConfigSchema } from "../../src/loop/train-config-schema.ts";
import { hone } from "../helpers/cli.ts";
import { startStrictOpenAI } from "../helpers/strict-openai.ts";

/**
 * API keys come from environment variables only; `--api-key-env` names the variable. The usual slip is pasting the
 * key itself there: hone must refuse it as a usage error without repeating it, not print it in "$<key> is not set"
 * messages and store it with the run (hone.db, receipts: "key from $<key>").
 */
const PASTED = "sk-proj-PastedKey0123456789abcdef";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe("--api-key-env", () => {
  it("takes a variable's name", () => {
    expect(modelSettingsFrom({ apiKeyEnv: "MY_KEY_2" }).apiKeyEnv).toBe("MY_KEY_2");
    expect(modelSettingsFrom({ proposerApiKeyEnv: "P_KEY" }, "proposer").apiKeyEnv).toBe("P_KEY");
    expect(modelSettingsFrom({}).apiKeyEnv).toBeUndefined();
  });

  it.each([PASTED, "MY KEY", "1KEY", ""])("refuses %j without repeating it", (given) => {
    let err: unknown;
    try {
      modelSettingsFrom({ proposerApiKeyEnv: given }, "proposer");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HoneError);
    expect((err as HoneError).message).toMatch(/--proposer-api-key-env takes the name of the environment variable/);
    if (given) expect((err as HoneError).message).not.toContain(given);
  });

  it("with a key pasted in: hone models check stops with a usage error (exit 2) and never prints it", {
    timeout: 60_000,
  }, async () => {
    const f = await startStrictOpenAI({ apiKey: "sk-the-real-key-000" });
    closers.push(f.close);
    const r = await hone(["models", "check", "--base-url", f.url, "--model", "gpt-4.1-mini", "--api-key-env", PASTED]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--api-key-env takes the name of the environment variable/);
    expect(r.stdout + r.stderr).not.toContain(PASTED);
  });

  it("in train.yaml: api_key_env must be a variable's name too", () => {
    const base = { harness: "h", panel: { benchmark: "gsm8k" }, estimator: { kind: "llm" } };
    expect(trainConfigSchema.safeParse({ ...base, model: { model: "m", api_key_env: "MY_KEY" } }).success).toBe(true);
    expect(trainConfigSchema.safeParse({ ...base, model: { model: "m", api_key_env: PASTED } }).success).toBe(false);
    const proposer = { kind: "llm", proposer: { model: "m", api_key_env: PASTED } };
    expect(trainConfigSchema.safeParse({ ...base, estimator: proposer }).success).toBe(false);
  });
});
