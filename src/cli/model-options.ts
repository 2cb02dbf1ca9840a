import { type Command, Option } from "commander";
import { HoneError } from "../errors.ts";
import type { ModelSettings } from "../model/resolve.ts";
import { DEFAULT_TIMEOUTS, parseTimeouts, type Timeouts } from "../model/timeouts.ts";
import { numberish } from "./numberish.ts";

const defaults = Object.entries(DEFAULT_TIMEOUTS)
  .map(([k, v]) => `${k}=${v}`)
  .join(",");

/** The flags that point a role at a model; shared by run, eval, optimize and models check. */
export function addModelOptions(cmd: Command, prefix = ""): Command {
  const p = prefix ? `${prefix}-` : "";
  if (prefix) cmd.option(`--${prefix} <id>`, `shorthand for --${prefix}-model`);
  return cmd
    .option(`--${p}model <id>`, "model id on the endpoint, or `offline` for the built-in simulator")
    .option(`--${p}base-url <url>`, "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    .addOption(
      new Option(`--${p}dialect <dialect>`, "request dialect: vllm (local servers) or openai (hosted APIs)").choices([
        "vllm",
        "openai",
      ]),
    )
    .option(`--${p}api-key-env <name>`, "environment variable holding the API key (default OPENAI_API_KEY)")
    .option(`--${p}keep-sampling`, "with --dialect openai: send temperature/top_p (and to reasoning models penalties and seed)")
    .option(`--${p}stream`, "stream every model call (default: the harness's llm_config.stream)")
    .option(`--no-${p}stream`, "never stream, whatever the harness says")
    .option(`--${p}timeouts <spec>`, `seconds per limit, e.g. idle=5,total=120 (defaults ${defaults})`)
    .option(`--${p}offline-latency-ms <ms>`, "added latency per call of the offline model, 0 to 3600000 ms", numberish);
}

const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

function timeoutsFrom(spec: unknown, flag: string): Partial<Timeouts> | undefined {
  if (spec === undefined) return undefined;
  try {
    return parseTimeouts(String(spec));
  } catch (err) {
    throw new HoneError("usage", `--${flag}: ${(err as Error).message}`);
  }
}

/** `--offline-latency-ms`: milliseconds from 0 to one hour (the text itself when it is no number). */
function latencyFrom(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 3_600_000) return value;
  throw new HoneError("usage", `--${flag} takes milliseconds from 0 to 3600000 (got ${JSON.stringify(String(value))})`);
}

/** An environment variable's name, as a shell writes one (what `api_key_env` in a config file takes too). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `--api-key-env`: the name of the variable holding the key. Anything else (most often the key itself, pasted in its
 * place) is refused without being repeated: it would otherwise be printed in messages and stored with the run.
 */
export function keyEnvFrom(value: unknown, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string" && ENV_NAME.test(value) && value.length <= 256) return value;
  throw new HoneError(
    "usage",
    `--${flag} takes the name of the environment variable that holds the API key (letters, digits and _, like OPENAI_API_KEY), never the key itself; what was given is not such a name (not repeated here, in case it is a key). Put the key in a variable and name it: export MY_KEY=…; --${flag} MY_KEY`,
  );
}

export function modelSettingsFrom(opts: Record<string, unknown>, prefix = ""): Partial<ModelSettings> {
  const name = (n: string) => (prefix ? `${prefix}-${n}` : n);
  const get = (n: string) => opts[camel(name(n))];
  return {
    model: (get("model") ?? (prefix ? opts[camel(prefix)] : undefined)) as string | undefined,
    baseUrl: get("base-url") as string | undefined,
    dialect: get("dialect") as ModelSettings["dialect"],
    apiKeyEnv: keyEnvFrom(get("api-key-env"), name("api-key-env")),
    keepSampling: get("keep-sampling") as boolean | undefined,
    stream: get("stream") as boolean | undefined,
    timeouts: timeoutsFrom(get("timeouts"), name("timeouts")),
    offlineLatencyMs: latencyFrom(get("offline-latency-ms"), name("offline-latency-ms")),
  };
}
