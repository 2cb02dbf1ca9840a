import { Worker } from "node:worker_threads";
import type { OfflineServer, OfflineServerOptions } from "./server.ts";

const TSX = /^tsx(\/|$)/;

/**
 * Node's flags for the thread, without a `--import tsx` the process was started with (a run of the sources): the
 * thread's entry registers tsx itself when it runs the sources, and loading tsx in a thread that runs the bundle
 * cost 0.2 s per thread for nothing.
 */
function threadArgv(argv = process.execArgv): string[] {
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (["--import", "--loader", "--experimental-loader"].includes(a) && TSX.test(argv[i + 1] ?? "")) i++;
    else if (!/^--(import|loader|experimental-loader)=tsx(\/|$)/.test(a)) kept.push(a);
  }
  return kept;
}

/**
 * A thread with the process's flags where a thread may have them: V8's and the process's own (node
 * --max-old-space-size, --expose-gc, --stack-size) are refused for threads, and then the thread has none.
 */
function newWorker(entry: URL, workerData: unknown): Worker {
  try {
    return new Worker(entry, { workerData, execArgv: threadArgv() });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw err;
    return new Worker(entry, { workerData, execArgv: [] });
  }
}

/**
 * The offline model served from its own worker thread: its own event loop (the second core on a 2-core machine),
 * as a real endpoint would be its own process, so clients running many rollouts do not wait on the model's CPU.
 */
export function startOfflineServerThread(opts: OfflineServerOptions = {}): Promise<OfflineServer> {
  const worker = newWorker(new URL("./worker-entry.mjs", import.meta.url), opts);
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

/** Running threads by latency: what `sharedOfflineServerThread` hands out, with how many holders each has. */
const shared = new Map<number, { server: Promise<OfflineServer>; holders: number }>();

/**
 * The offline model's thread for this latency, shared by everyone in the process who asks (a run's executor and
 * proposer, the runs of one process): its answers depend on the request alone, so one server serves them all, and
 * set-up starts one thread instead of one per role (~0.1 s of CPU each). It stops when its last holder closes.
 */
export async function sharedOfflineServerThread(latencyMs = 0): Promise<OfflineServer> {
  let entry = shared.get(latencyMs);
  if (!entry) {
    const started = { server: startOfflineServerThread({ latencyMs }), holders: 0 };
    shared.set(latencyMs, started);
    started.server.catch(() => shared.get(latencyMs) === started && shared.delete(latencyMs));
    entry = started;
  }
  const held = entry;
  held.holders++;
  const server = await held.server;
  let closed = false;
  return {
    url: server.url,
    port: server.port,
    close: async () => {
      if (closed) return;
      closed = true;
      if (--held.holders > 0) return;
      if (shared.get(latencyMs) === held) shared.delete(latencyMs);
      await server.close();
    },
  };
}
