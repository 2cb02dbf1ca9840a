// Worker-thread entry for the offline model: registers tsx (the TypeScript sources run as they are), then serves.
import { parentPort, workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
const { startOfflineServer } = await import("./server.ts");
const server = await startOfflineServer(workerData);
parentPort.postMessage({ url: server.url, port: server.port });
parentPort.on("message", async (m) => {
  if (m === "close") {
    await server.close();
    parentPort.postMessage("closed");
  }
});
