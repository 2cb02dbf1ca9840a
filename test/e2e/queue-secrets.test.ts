import { describe, expect, it } from "vitest";
import { startHone } from "../helpers/cli.ts";

// A queue's URL may carry its password (redis://:pw@host); hone writes it nowhere. hone.db stores it as :***@
// (test/store/records.test.ts), `hone doctor` shows it so (test/e2e/doctor-init.test.ts), and so does a worker.

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
