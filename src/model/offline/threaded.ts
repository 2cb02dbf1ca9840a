import { Worker } from "node:worker_threads";
import type { OfflineServer, OfflineServerOptions } from "./server.ts";

/**
 * The offline model served from its own worker thread: its own event loop (the second core on a 2-core machine),
 * as a real endpoint would be its own process, so clients running many rollouts do not wait on the model's CPU.
 */
export function startOfflineServerThread(opts: OfflineServerOptions = {}): Promise<OfflineServer> {
  const worker = new Worker(new URL("./worker-entry.mjs", import.meta.url), { workerData: opts });
  return new Promise((resolve, reject) => {
    worker.once("error", reject);
    worker.once("message", (m: { url: string; port: number }) => {
      worker.unref();
      resolve({
        url: m.url,
        port: m.port,
        close: () =>
          new Promise<void>((done) => {
            worker.once("message", () => worker.terminate().then(() => done()));
            worker.postMessage("close");
          }),
      });
    });
  });
}
