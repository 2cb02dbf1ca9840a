import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { forwardStderr, honeCli } from "./lib.ts";

/**
 * `hone serve-offline` in its own process, as an endpoint is (not a thread of the process measured); resolves with
 * its base URL, its pid (for its CPU time) and a way to stop it.
 */
export function serveOffline(latencyMs: number): Promise<{ url: string; pid: number; stop: () => void }> {
  const child = spawn(honeCli(), ["serve-offline", "--port", "0", "--latency-ms", String(latencyMs)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  forwardStderr(child);
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => reject(new Error(`hone serve-offline exited ${code}`)));
    createInterface({ input: child.stdout }).once("line", (line) => {
      const url = /serving at (\S+)/.exec(line)?.[1];
      if (!url) reject(new Error(`unexpected first line: ${line}`));
      else resolve({ url, pid: child.pid as number, stop: () => child.kill("SIGTERM") });
    });
  });
}
