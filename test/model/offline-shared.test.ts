import { describe, expect, it } from "vitest";
import { resolveModel } from "../../src/model/resolve.ts";

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
