import { describe, expect, it } from "vitest";
import { AgentCliEstimator } from "../../src/method/estimators.ts";
import { tempDir } from "../helpers/fixtures.ts";

// train.yaml's `estimator: { kind: agent_cli, timeout: 3000000 }` (35 days: "no real limit") killed the agent at once
// as "past its timeout": Node fires a timer longer than 2^31 − 1 ms after 1 ms.

describe("the agent-CLI estimator's timeout", () => {
  it.each([2_147_484, 3_000_000, 1e12])("lets an agent finish under a timeout of %d s", async (timeout) => {
    const dir = tempDir();
    const estimator = new AgentCliEstimator("sleep 0.3; echo done its work", timeout);
    const ctx = { epoch: 1, incumbentDir: dir, candidateDir: dir, panelDescription: "2 gsm8k questions" };
    await expect(estimator.propose(ctx)).resolves.toBe("done its work");
  });
});
