import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import type { ModelSettings } from "../model/resolve.ts";
import { removePartials } from "../store/atomic.ts";
import type { Db } from "../store/db.ts";
import { LIFELINE_GRACE_SEC, runProcess } from "../task/python-process.ts";

export interface LoraSettings {
  /** Shell command that trains an adapter; it reads HONE_LORA_* variables (see below). */
  trainerCommand: string;
  /** The base model the adapter is trained on (passed to the trainer). */
  baseModel?: string;
  /** Name prefix for loaded adapters; the round number is appended. */
  adapterPrefix?: string;
  /** Seconds the trainer may run. */
  timeoutSec?: number;
}

/** What a round recorded of each slot's proposer sample: its messages and its first completion. */
export interface SlotSample {
  slot: number;
  messages: unknown[];
  completion: string;
}

/**
 * The proposer's own samples of a round, slot by slot, as the round recorded them: `rounds.proposer_prompt` holds
 * each slot's messages (a list indexed by slot) and `rounds.proposer_completion` `{samples: [{completion}]}`.
 * A slot without a sample (a method that proposed without the proposer) is left out.
 */
export function roundSamples(db: Db, runId: string, round: number): SlotSample[] {
  const row = db
    .prepare("SELECT proposer_prompt, proposer_completion FROM rounds WHERE run_id = ? AND round = ?")
    .get(runId, round) as { proposer_prompt: string | null; proposer_completion: string | null } | undefined;
  if (!row?.proposer_prompt || !row.proposer_completion) return [];
  const prompts = JSON.parse(row.proposer_prompt) as (unknown[] | null)[];
  const samples = (JSON.parse(row.proposer_completion) as { samples?: ({ completion?: string } | null)[] }).samples ?? [];
  return samples.flatMap((s, slot) => {
    const messages = prompts[slot];
    return s && typeof s.completion === "string" && Array.isArray(messages) ? [{ slot, messages, completion: s.completion }] : [];
  });
}

/**
 * `lora` proposer learning, after each round:
 *
 * 1. writes `lora/round-NN.jsonl`, one line per proposal slot the proposer sampled:
 *    {"round", "slot", "prompt": [the chat messages that slot's sample was sent], "completion": the text the proposer
 *     answered (its first answer, also when a repair was needed: a repaired or refused slot is charged the minimum
 *     reward), "advantage", "reward"} — exactly what was sampled, so the data is on-policy;
 * 2. runs the configured trainer command with HONE_LORA_DATA (that file), HONE_LORA_OUTPUT_DIR (where the adapter must
 *    be written: `lora/<adapter>.partial-<pid>`, renamed to `lora/<adapter>` once the command succeeded),
 *    HONE_LORA_BASE_MODEL, HONE_LORA_ROUND and HONE_LORA_PREVIOUS_ADAPTER (empty in round 1);
 * 3. loads the adapter into the proposer's vLLM server with POST {base_url}/load_lora_adapter
 *    {"lora_name", "lora_path"} (the server needs VLLM_ALLOW_RUNTIME_LORA_UPDATING=True) and returns its name, which
 *    is the proposer's model from the next round.
 *
 * A round without rewards (one the proposal gate failed) trains nothing: the adapter stays as it was.
 * A replay (`replay`) writes step 1's file, then takes the adapter's name without steps 2 and 3.
 */
export async function loraStep(
  db: Db,
  runId: string,
  round: number,
  runDir: string,
  s: LoraSettings,
  proposer: Partial<ModelSettings>,
  replay = false,
): Promise<string | undefined> {
  const credit = new Map(
    (
      db
        .prepare("SELECT slot, reward, advantage FROM candidates WHERE run_id = ? AND round = ? ORDER BY slot")
        .all(runId, round) as {
        slot: number;
        reward: number | null;
        advantage: number | null;
      }[]
    ).map((r) => [r.slot, r]),
  );
  const rows = roundSamples(db, runId, round).filter((x) => credit.get(x.slot)?.advantage !== null && credit.has(x.slot));
  if (rows.length === 0) return undefined;
  const dir = resolve(runDir, "lora");
  mkdirSync(dir, { recursive: true });
  const data = join(dir, `round-${String(round).padStart(2, "0")}.jsonl`);
  writeFileSync(
    data,
    `${rows.map((r) => JSON.stringify({ round, slot: r.slot, prompt: r.messages, completion: r.completion, advantage: credit.get(r.slot)?.advantage ?? 0, reward: credit.get(r.slot)?.reward ?? 0 })).join("\n")}\n`,
  );
  const name = adapterName(s, round);
  if (replay) {
    // `hone replay` re-runs the run from its records, the proposer's answers under the adapter's name among them: it
    // trains nothing and contacts no server, so it needs neither the trainer nor vLLM (nor hours of a GPU).
    db.prepare("UPDATE rounds SET proposer_model = ? WHERE run_id = ? AND round = ?").run(name, runId, round + 1);
    return name;
  }
  const output = join(dir, name);
  // The trainer writes beside the adapter's folder, renamed into place once it succeeded: a kill mid-training never
  // leaves a folder a resumed run would take for a whole adapter. Its own folder per attempt: a trainer a killed run
  // left running may still write into the one it was given.
  removePartials(dir, `${name}.partial-`);
  const staging = `${output}.partial-${process.pid}`;
  const previous = round > 1 ? join(dir, adapterName(s, round - 1)) : "";
  // In a process group of its own, awaited: a timeout kills the trainer with every process it started (not `sh`
  // alone), hone answers a stop meanwhile (which kills its descendants), and the event loop is never held for an hour;
  // its lifeline ends the group too when hone itself is killed (SIGKILL, the OOM killer). At the timeout and then, the
  // group gets SIGTERM first, so a launcher such as torchrun ends the workers it started in sessions of their own.
  const timeoutSec = s.timeoutSec ?? 3600;
  const r = await runProcess("sh", ["-c", s.trainerCommand], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      HONE_LORA_DATA: data,
      HONE_LORA_OUTPUT_DIR: staging,
      HONE_LORA_BASE_MODEL: s.baseModel ?? proposer.model ?? "",
      HONE_LORA_ROUND: String(round),
      HONE_LORA_PREVIOUS_ADAPTER: existsSync(previous) ? previous : "",
    },
    timeoutMs: timeoutSec * 1000,
    maxOutputChars: 2000,
    lifeline: { graceSec: LIFELINE_GRACE_SEC },
  });
  if (r.timedOut)
    throw new HoneError(
      "runFailed",
      `the LoRA trainer command ran past its timeout (learning.lora.timeout: ${timeoutSec} s) in round ${round}; it was killed with every process it started`,
    );
  if (r.code !== 0)
    throw new HoneError(
      "runFailed",
      `the LoRA trainer command failed in round ${round} (${r.code === null ? `signal ${r.signal}` : `exit ${r.code}`}): ${(r.stderr || r.stdout || "").trim().slice(-500)}`,
    );
  if (!existsSync(staging))
    throw new HoneError("runFailed", `the LoRA trainer did not write an adapter to ${staging} (HONE_LORA_OUTPUT_DIR)`);
  rmSync(output, { recursive: true, force: true });
  renameSync(staging, output);
  await loadAdapter(name, output, proposer);
  db.prepare("UPDATE rounds SET proposer_model = ? WHERE run_id = ? AND round = ?").run(name, runId, round + 1);
  return name;
}

export const adapterName = (s: LoraSettings, round: number) =>
  `${s.adapterPrefix ?? "hone-proposer"}-r${String(round).padStart(2, "0")}`;

/** POST {base_url}/load_lora_adapter; an adapter the server already has counts as loaded. */
export async function loadAdapter(name: string, path: string, proposer: Partial<ModelSettings>): Promise<void> {
  if (!proposer.baseUrl) throw new HoneError("usage", "lora learning needs the proposer on a vLLM server (--proposer-base-url)");
  const url = `${proposer.baseUrl.replace(/\/$/, "")}/load_lora_adapter`;
  const key = process.env[proposer.apiKeyEnv ?? "OPENAI_API_KEY"];
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ lora_name: name, lora_path: path }),
  }).catch((err: Error) => {
    throw new HoneError("endpoint", `cannot reach ${url} to load the adapter: ${err.message}`);
  });
  const text = await res.text();
  if (!res.ok && !/already been loaded/i.test(text)) {
    throw new HoneError(
      "endpoint",
      `${url} refused the adapter ${name} (HTTP ${res.status}): ${text.slice(0, 300)}. Start vLLM with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True and --enable-lora.`,
    );
  }
}

/**
 * On resume: the adapter trained after the last finished round, loaded again if the server lost it. A kill after a
 * round finished and before its adapter was written leaves it missing: that round's step is run again (it trains
 * nothing when the round had no credit, and the adapter of an earlier round is taken).
 */
export async function resumeAdapter(
  db: Db,
  runId: string,
  runDir: string,
  s: LoraSettings,
  lastFinishedRound: number,
  proposer: Partial<ModelSettings>,
): Promise<string | undefined> {
  if (lastFinishedRound >= 1 && !existsSync(resolve(runDir, "lora", adapterName(s, lastFinishedRound)))) {
    const trained = await loraStep(db, runId, lastFinishedRound, runDir, s, proposer);
    if (trained) return trained;
  }
  for (let r = lastFinishedRound; r >= 1; r--) {
    const path = resolve(runDir, "lora", adapterName(s, r));
    if (existsSync(path)) {
      await loadAdapter(adapterName(s, r), path, proposer);
      return adapterName(s, r);
    }
  }
  return undefined;
}
