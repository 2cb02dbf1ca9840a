// The offline model's worker thread: serves on its own event loop, answers "close" (threaded.ts starts it through
// worker-entry.mjs, which runs the bundled copy of this file when it is fresh, else this source through tsx).
import { parentPort, workerData } from "node:worker_threads";
import { startOfflineServer } from "./server.ts";

const port = parentPort;
if (!port) throw new Error("worker-serve.ts runs only as a worker thread (startOfflineServerThread)");
const server = await startOfflineServer(workerData);
port.postMessage({ url: server.url, port: server.port });
port.on("message", async (m) => {
  if (m === "close") {
    await server.close();
    port.postMessage("closed");
  }
});
