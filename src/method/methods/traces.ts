// A rollout's trajectory as a method may read it: what the agent did, without what the task withholds from methods.
import { closeSync, constants as fsc, fstatSync, openSync, readSync } from "node:fs";

/** The most of a trajectory file read (its head); a longer one is cut at a line and says so. */
export const TRACE_BYTES = 2 << 20;

function readHead(path: string, cap: number): { text: string; cut: boolean } | undefined {
  let fd: number;
  try {
    fd = openSync(path, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const n = Math.min(st.size, cap);
    const buf = Buffer.alloc(n);
    const got = readSync(fd, buf, 0, n, 0);
    return { text: buf.subarray(0, got).toString("utf8"), cut: st.size > cap };
  } finally {
    closeSync(fd);
  }
}

/**
 * What differs between two runs of the same rollout and says nothing about what the agent did: the clock, the
 * transport (retries, the cache, latency, the endpoint's address). A method is shown a trace without them, so what
 * it is shown is the same on a resume or a replay and its proposer requests are answered from the record.
 */
function withoutRunNoise(e: Record<string, unknown>): Record<string, unknown> {
  const { t: _t, ...rest } = e;
  if (rest.type === "model_call") {
    const { attempts: _a, cached: _c, latency_ms: _l, ...call } = rest;
    return call;
  }
  if (rest.type === "rollout_start" && typeof rest.model === "string")
    return { ...rest, model: rest.model.slice(rest.model.lastIndexOf("#") + 1) };
  if (rest.type === "rollout_end" && rest.usage && typeof rest.usage === "object") {
    const { seconds: _s, ...usage } = rest.usage as Record<string, unknown>;
    return { ...rest, usage };
  }
  return rest;
}

/**
 * One trajectory event, cleaned for a method: the task's own message is dropped (the method has the task brief,
 * which holds the reference value only where the task allows), evaluator metrics are dropped from evaluations
 * and from evaluate_program's results (a metric such as a ratio to the best known value would give it away), and
 * so is what only the run's clock and transport put there (withoutRunNoise).
 */
export function cleanEvent(raw: Record<string, unknown>): Record<string, unknown> | undefined {
  const e = withoutRunNoise(raw);
  if (e.type === "message" && e.source === "task") return undefined;
  if (e.type === "evaluation") {
    const { metrics: _m, ...rest } = e;
    return rest;
  }
  if (e.type === "tool_result" && e.name === "evaluate_program" && typeof e.output === "string") {
    try {
      const { metrics: _m, ...rest } = JSON.parse(e.output) as Record<string, unknown>;
      return { ...e, output: JSON.stringify(rest) };
    } catch {
      return { ...e, output: e.output.slice(0, 500) };
    }
  }
  return e;
}

/** The cleaned events of a trajectory file (JSONL; lines that do not parse are skipped). */
export function traceEvents(path: string): Record<string, unknown>[] {
  const head = readHead(path, TRACE_BYTES);
  if (!head) return [];
  const lines = head.text.split("\n");
  if (head.cut) lines.pop();
  const out: Record<string, unknown>[] = [];
  for (const line of lines) {
    if (!line.trim()) continue;
    try {
      const e = JSON.parse(line) as Record<string, unknown>;
      const c = e && typeof e === "object" ? cleanEvent(e) : undefined;
      if (c) out.push(c);
    } catch {
      // a torn or foreign line: not part of the trace
    }
  }
  if (head.cut) out.push({ type: "note", note: `trajectory cut at ${TRACE_BYTES} bytes` });
  return out;
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** The trajectory as a readable log (DGM's "agent running log"), its last `cap` characters when longer. */
export function traceLog(path: string, cap = 24_000): string {
  const lines: string[] = [];
  for (const e of traceEvents(path)) {
    if (e.type === "message") lines.push(`[${e.role}] ${clip(String(e.content ?? ""), 1500)}`);
    else if (e.type === "assistant") {
      if (e.content) lines.push(`[assistant] ${clip(String(e.content), 1500)}`);
      for (const c of (e.tool_calls as { function?: { name?: string; arguments?: string } }[] | undefined) ?? [])
        lines.push(`[call] ${c.function?.name}(${clip(c.function?.arguments ?? "", 600)})`);
    } else if (e.type === "tool_result") lines.push(`[result ${e.name}] ${clip(String(e.output ?? ""), 600)}`);
    else if (e.type === "evaluation")
      lines.push(
        `[evaluation ${e.index}] ${e.valid ? `valid, score ${e.score}` : `invalid: ${clip(String(e.reason ?? ""), 300)}`}`,
      );
    else if (e.type === "middleware") lines.push(`[middleware ${e.middleware}] ${clip(String(e.note ?? ""), 200)}`);
    else if (e.type === "rollout_end") lines.push(`[end] ${e.status} (${e.stop_reason ?? ""}), best ${e.best_score}`);
    else if (e.type === "note") lines.push(`[note] ${e.note}`);
  }
  const text = lines.join("\n");
  return text.length > cap ? `<log clipped>\n${text.slice(text.length - cap)}` : text;
}
