import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GreedyMonotonic, Trainer } from "../../src/loop/train.ts";
import { StrictPareto } from "../../src/method/criteria.ts";
import type { Estimator } from "../../src/method/estimators.ts";
import type { QATask } from "../../src/task/qa/benchmarks.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// A train run whose model never answers usably (a wrong base_url, a server that sends garbage) measured HEAD with
// every task failed, then proposed candidates it could never judge, each epoch skipped, until the two-skip stop
// said only "4 task(s) failed for infrastructure reasons". It now stops before proposing, with the endpoint's error.

const panel: QATask[] = [
  { id: "q1", question: "Ann has 3 apples and buys 4 more. How many?", gold: "7" },
  { id: "q2", question: "Tom ran 2 km, then 6 km. How far?", gold: "8" },
];

let server: Server | undefined;
afterEach(() => server?.close());

/** An endpoint that answers every request with 200 and a body that is not a chat completion. */
async function garbageEndpoint(): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("<html>not a completion</html>");
    });
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

describe("hone train with a model that never answers", () => {
  it("stops before proposing, naming the error, when every task of HEAD's measurement failed", async () => {
    const baseUrl = await garbageEndpoint();
    let proposals = 0;
    const estimator: Estimator = {
      name: "counting",
      propose: async () => {
        proposals++;
        return undefined;
      },
    };
    const optimizer = new GreedyMonotonic();
    const t = new Trainer({
      dir: join(tempDir(), "train"),
      seedHarness: join(ROOT, "harnesses", "qa"),
      panel: { benchmark: "gsm8k", tasks: panel },
      model: { model: "some-model", baseUrl, retry: { maxAttempts: 1 } },
      estimator,
      criterion: new StrictPareto(),
      optimizer,
      concurrency: 2,
    });
    const run = async () => {
      for await (const loss of t.epochs(3)) {
        loss.backward();
        optimizer.step();
      }
    };
    const err = await run().then(
      () => undefined,
      (e: unknown) => e as { exit?: string; message: string },
    );
    expect(err?.message).toMatch(/every task failed for infrastructure reasons when HEAD \([0-9a-f]{12}\) was measured/);
    expect(err?.message).toMatch(/2 of 2 failed; q1: /);
    expect(err?.exit).toBe("endpoint");
    expect(proposals).toBe(0);
  });
});
