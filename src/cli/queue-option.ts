import { randomUUID } from "node:crypto";
import type { QARunner } from "../loop/qa-runner.ts";
import type { ModelSettings } from "../model/resolve.ts";

export const QUEUE_HELP =
  "run tasks on BullMQ workers (hone worker) through this Redis, e.g. redis://127.0.0.1:6379 (rediss:// for TLS)";

/** With --queue, QA tasks go to BullMQ workers; without, the caller's local pool runs them. */
export async function queueQARunner(
  url: string | undefined,
  executor: Partial<ModelSettings> & { model: string },
  kind: "eval" | "train",
): Promise<QARunner | undefined> {
  if (!url) return undefined;
  const { BullmqQARunner } = await import("../loop/distributed/bullmq.ts");
  return new BullmqQARunner({ url, runKey: `${kind}-${randomUUID()}`, executor });
}
