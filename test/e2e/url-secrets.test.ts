import { describe, expect, it } from "vitest";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import { hone, startHone } from "../helpers/cli.ts";

// A queue's or an endpoint's URL may carry a password (redis://:pw@host, http://user:pw@host/v1); hone writes it
// nowhere. hone.db stores it as :***@ (test/store/records.test.ts), `hone doctor` shows it so
// (test/e2e/doctor-init.test.ts), and so do a worker, an endpoint's errors and the model's id in every record.

describe("a queue URL's password", () => {
  it("is not in what hone worker prints while its queue does not answer", { timeout: 60_000 }, async () => {
    const worker = await startHone(["worker", "--queue", "redis://:s3cret@127.0.0.1:9"]);
    try {
      expect(worker.firstLine).toMatch(/the queue at redis:\/\/:\*\*\*@127\.0\.0\.1:9 is not answering \(ECONNREFUSED\)/);
      await new Promise((r) => setTimeout(r, 1000)); // a few retries: each is not said again
      expect(worker.output()).not.toContain("s3cret");
      expect(worker.output().match(/is not answering/g)).toHaveLength(1);
    } finally {
      await worker.stop();
    }
  });
});

describe("an endpoint URL's password", () => {
  it("is not in the model's id, which every record and trajectory names", () => {
    const model = new OpenAICompatibleModel({ baseUrl: "http://user:s3cret@127.0.0.1:9/v1", model: "m" }, {});
    expect(model.id).toBe("http://user:***@127.0.0.1:9/v1#m");
  });

  it("is not in what hone says when the endpoint does not answer", { timeout: 60_000 }, async () => {
    const r = await hone(["run", "--task", "circle-packing", "--base-url", "http://user:s3cret@127.0.0.1:9/v1", "--model", "m"]);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/cannot reach http:\/\/user:\*\*\*@127\.0\.0\.1:9\/v1\/models/);
    expect(r.stdout + r.stderr).not.toContain("s3cret");
    const check = await hone(["models", "check", "--base-url", "http://user:s3cret@127.0.0.1:9/v1", "--model", "m"]);
    expect(check.stdout).toMatch(/^http:\/\/user:\*\*\*@127\.0\.0\.1:9\/v1 · m/);
    expect(check.stdout + check.stderr).not.toContain("s3cret");
  });
});
