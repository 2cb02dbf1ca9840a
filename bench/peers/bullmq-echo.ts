// BullMQ alone, the worker's side: a bare BullMQ Worker that answers every job at once with one stored result (a real
// hone worker's return value, read from the file named here). Prints "ready" once it takes jobs; stops on SIGTERM.
// Usage: node --import tsx bench/peers/bullmq-echo.ts <redis-url-with-db> <queue-name> <result.json> <concurrency>
import { readFileSync } from "node:fs";
import { Worker } from "bullmq";
import { connectionFrom } from "../../src/loop/distributed/queue-connection.ts";

const [url, queue, resultFile, concurrency] = process.argv.slice(2) as [string, string, string, string];
const result: unknown = JSON.parse(readFileSync(resultFile, "utf8"));
const worker = new Worker(queue, async () => result, { connection: connectionFrom(url), concurrency: Number(concurrency) });
await worker.waitUntilReady();
process.stdout.write("ready\n");
process.once("SIGTERM", () => void worker.close().then(() => process.exit(0)));
