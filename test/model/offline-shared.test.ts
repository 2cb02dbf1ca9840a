import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveModel } from "../../src/model/resolve.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const ask = (baseUrl: string) =>
  fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "offline", messages: [{ role: "user", content: "hi" }] }),
  });

describe("the offline model's thread is shared within a process", () => {
  it("serves both roles of a run from one thread per latency and stops when the last holder closes", async () => {
    const [executor, proposer, slow] = await Promise.all([
      resolveModel({ model: "offline" }),
      resolveModel({ model: "offline" }),
      resolveModel({ model: "offline", offlineLatencyMs: 5 }),
    ]);
    expect(proposer.baseUrl).toBe(executor.baseUrl);
    expect(slow.baseUrl).not.toBe(executor.baseUrl);
    await executor.close();
    await executor.close(); // a second close of one holder does not take the other's share
    expect((await ask(proposer.baseUrl)).status).toBe(200);
    await proposer.close();
    await expect(ask(executor.baseUrl)).rejects.toThrow();
    expect((await ask(slow.baseUrl)).status).toBe(200);
    await slow.close();
    // A later run in the same process starts a thread again.
    const again = await resolveModel({ model: "offline" });
    expect((await ask(again.baseUrl)).status).toBe(200);
    await again.close();
  });
});

describe("the offline model's thread in a process started with node's own flags", () => {
  it("starts where a thread may not have them (node --max-old-space-size, --expose-gc, --stack-size)", async () => {
    const out = join(tempDir(), "r");
    const args = ["--max-old-space-size=2048", "--expose-gc", "--stack-size=2000", join(ROOT, "bin", "hone.js")];
    const r = spawnSync(
      process.execPath,
      [...args, "run", "--task", "circle-packing", "--model", "offline", "--max-evals", "1"].concat(["--out", out, "--json"]),
      {
        encoding: "utf8",
        timeout: 120_000,
      },
    );
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "completed" });
  });
});
