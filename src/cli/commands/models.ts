import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import { withoutPassword } from "../../secret-url.ts";
import { addModelOptions, modelSettingsFrom } from "../model-options.ts";
import { printJson } from "../output.ts";

export function registerModels(program: Command): void {
  const models = program.command("models").description("check model endpoints");
  const check = models
    .command("check")
    .description("list an endpoint's models and make one tiny tool-calling request")
    .option("--json", "print the report as JSON");
  addModelOptions(check).action(async (opts) => {
    const { checkEndpoint } = await import("../../model/check.ts");
    const { OFFLINE_MODEL_ID, startOfflineServer } = await import("../../model/offline/server.ts");
    const s = modelSettingsFrom(opts);
    let baseUrl = s.baseUrl;
    let stop: (() => Promise<void>) | undefined;
    if (!baseUrl && s.model === OFFLINE_MODEL_ID) {
      const server = await startOfflineServer();
      baseUrl = server.url;
      stop = server.close;
    }
    if (!baseUrl || !s.model) throw new HoneError("usage", "give --base-url and --model (or --model offline)");
    try {
      const report = await checkEndpoint({
        baseUrl,
        model: s.model,
        dialect: s.dialect,
        apiKeyEnv: s.apiKeyEnv,
        keepSampling: s.keepSampling,
        stream: s.stream,
        timeouts: s.timeouts,
      });
      if (opts.json) printJson(report);
      else {
        process.stdout.write(`${withoutPassword(baseUrl)} · ${s.model}\n`);
        for (const step of report.steps) process.stdout.write(`  ${step.ok ? "ok  " : "FAIL"}  ${step.step}: ${step.detail}\n`);
        process.stdout.write(report.ok ? "ready\n" : "not ready\n");
      }
      process.exitCode = report.ok ? ExitCode.ok : ExitCode.endpoint;
    } finally {
      await stop?.();
    }
  });
}

export function registerServeOffline(program: Command): void {
  program
    .command("serve-offline")
    .description("serve the built-in offline model (a deterministic simulator) on loopback")
    .option("--port <n>", "port (0 picks a free one)", "8000")
    .option("--latency-ms <ms>", "added latency per chat completion, 0 to 3600000 ms", "0")
    .action(async (opts) => {
      const port = wholeFlag("--port", opts.port, 65535, "a port number (0 to 65535)");
      const latencyMs = wholeFlag("--latency-ms", opts.latencyMs, 3_600_000, "a whole number of ms from 0 to 3600000");
      const { OFFLINE_MODEL_ID, startOfflineServer } = await import("../../model/offline/server.ts");
      const server = await startOfflineServer({ port, latencyMs }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "EADDRINUSE" && err.code !== "EACCES") throw err;
        throw new HoneError(
          "usage",
          `--port ${port}: ${err.code === "EADDRINUSE" ? "already in use" : "not permitted"} on 127.0.0.1; choose another (0 picks a free one)`,
        );
      });
      process.stdout.write(`offline model serving at ${server.url} (model id "${OFFLINE_MODEL_ID}"); Ctrl-C stops it\n`);
      await new Promise<void>((resolve) => {
        const stop = () => server.close().then(resolve);
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      });
    });
}

/** A whole-number flag from 0 to `max`, or a usage error naming it (a NaN port was Node's RangeError, "internal"). */
function wholeFlag(flag: string, value: string, max: number, what: string): number {
  const n = value.trim() === "" ? Number.NaN : Number(value);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new HoneError("usage", `${flag} ${value}: ${what}`);
  return n;
}
