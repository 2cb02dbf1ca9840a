import { useState } from "react";
import { getJson } from "../api.ts";
import { score, str } from "../format.ts";
import type { TrajectoryEvent } from "../types.ts";
import { Collapsible, editSummary, Reasoning } from "./Collapsible.tsx";
import { Diff } from "./Diff.tsx";

/** How a message is labelled: by its recorded source, else by its role (trajectories of `hone run` have none). */
export function source(e: TrajectoryEvent): "harness" | "task" | "other" {
  if (e.source === "harness" || (!e.source && e.role === "system")) return "harness";
  if (e.source === "task" || (!e.source && e.role === "user" && e.iteration === 0)) return "task";
  return "other";
}

interface Item {
  event: TrajectoryEvent;
  /** For an assistant event: the results of its tool calls, shown in the same box. */
  results: TrajectoryEvent[];
}

type Call = { id?: string; function: { name: string; arguments: string } };
/** An assistant event's tool calls, each with a function name and its arguments as text (whatever the file held). */
const callsOf = (e: TrajectoryEvent): Call[] =>
  (Array.isArray(e.tool_calls) ? (e.tool_calls as unknown[]) : []).map((c) => {
    const call = (c ?? {}) as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
    const f = call.function ?? {};
    return { id: call.id as string | undefined, function: { name: str(f.name), arguments: str(f.arguments) } };
  });

/**
 * Events in the order they happened, each assistant step with the results of its tool calls (they follow it, an
 * evaluation and the next model call possibly between them).
 */
export function steps(events: TrajectoryEvent[]): Item[] {
  const out: Item[] = [];
  let open: { ids: Set<string>; item: Item } | null = null;
  for (const e of events) {
    if (e.type === "tool_result" && open?.ids.has(String(e.id))) {
      open.item.results.push(e);
      continue;
    }
    const item = { event: e, results: [] };
    out.push(item);
    if (e.type === "assistant") open = { ids: new Set(callsOf(e).map((c) => String(c.id))), item };
    else if (!["evaluation", "model_call", "middleware"].includes(e.type)) open = null;
  }
  return out;
}

/** A rollout's conversation: every step, a reasoning model's thinking shown once per step. */
export function Conversation({ events, base }: { events: TrajectoryEvent[]; base: string }) {
  const reasoningShown = new Set(
    events.filter((e) => e.type === "assistant" && typeof e.reasoning === "string").map((e) => e.iteration),
  );
  return (
    <div className="conversation" data-testid="conversation">
      {steps(events).map((item, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: trajectory events are append-only, their position is their identity
        <Event key={i} event={item.event} results={item.results} base={base} reasoningShown={reasoningShown} />
      ))}
    </div>
  );
}

/** One assistant step: its reasoning (folded), its text, and each tool call with its arguments and result. */
function Step({ e, results }: { e: TrajectoryEvent; results: TrajectoryEvent[] }) {
  const resultOf = new Map(results.map((r) => [String(r.id), r]));
  return (
    <div className="msg assistant" data-testid="event-assistant">
      <div className="who">
        executor · step {String(e.iteration ?? "")}
        {typeof e.reasoning === "string" && <Reasoning text={e.reasoning} />}
      </div>
      {typeof e.content === "string" && e.content && <Collapsible text={e.content} lines={12} chars={1500} />}
      {callsOf(e).map((c, i) => {
        const r = resultOf.get(String(c.id));
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: a call's position in the message is its identity
          <div key={i} className="call">
            <span className="tool">{c.function.name}</span>
            <Args raw={c.function.arguments} />
            {r && (
              <div className={`result${r.error ? " failed" : ""}`} data-testid="event-tool">
                <span className="arrow">{r.error ? "→ error" : "→"}</span>
                <Collapsible text={String(r.output ?? "")} lines={3} />
              </div>
            )}
          </div>
        );
      })}
    </div>
  );
}

/**
 * One trajectory event as the executor had it. Long texts (edits, tool outputs, prompts) are folded to their
 * first lines; a reasoning model's thinking is folded whole. `reasoningShown` holds the iterations whose
 * assistant event carries the reasoning, so a model_call repeating it is not shown twice.
 */
function Event({
  event: e,
  results,
  base,
  reasoningShown,
}: {
  event: TrajectoryEvent;
  results: TrajectoryEvent[];
  base: string;
  reasoningShown: Set<unknown>;
}) {
  const s = (k: string) => (e[k] === undefined || e[k] === null ? "" : String(e[k]));
  switch (e.type) {
    case "message": {
      const from = source(e);
      const label =
        from === "harness" ? "system prompt" : from === "task" ? "task" : `${s("source") || "message"} · ${s("role")}`;
      return (
        <div
          className={`msg ${from === "harness" ? "system" : from === "task" ? "user" : "intervention"}`}
          data-testid={`event-${from === "other" ? s("source") || "message" : from}`}
        >
          <div className="who">{label}</div>
          <Collapsible text={s("content")} lines={from === "task" ? 12 : 6} />
        </div>
      );
    }
    case "assistant":
      return <Step e={e} results={results} />;
    case "tool_result":
      return (
        <div className={`msg tool${e.error ? " failed" : ""}`} data-testid="event-tool">
          <div className="who">
            {s("name")} → {e.error ? "error" : "result"}
          </div>
          <Collapsible text={s("output")} lines={6} />
        </div>
      );
    case "evaluation":
      return <EvaluationEvent e={e} base={base} />;
    case "middleware":
      return (
        <div className="note" data-testid="event-middleware">
          middleware <b>{s("middleware")}</b> ({s("hook")}): {s("note")}
        </div>
      );
    case "model_call":
      return typeof e.reasoning === "string" && !reasoningShown.has(e.iteration) ? (
        <div className="msg assistant" data-testid="event-model-call">
          <div className="who">
            model call · step {s("iteration")}
            <Reasoning text={e.reasoning} />
          </div>
        </div>
      ) : null;
    case "model_error":
      return (
        <div className="note error">
          model error ({s("kind")}): {s("message")}
        </div>
      );
    case "rollout_start":
      return (
        <div className="note">
          rollout started · model {s("model")} · budget {s("max_evals")} evaluations · start score {score(e.start_score)}
        </div>
      );
    case "rollout_end":
      return (
        <div className="note">
          rollout ended: {s("status")}, {s("stop_reason")} · best {score(e.best_score)}
        </div>
      );
    default:
      return (
        <div className="note">
          {str(e.type)}: <span className="mono small">{JSON.stringify(e).slice(0, 300)}</span>
        </div>
      );
  }
}

/** Tool-call arguments as "name: value" lines; multi-line strings (code, SEARCH/REPLACE blocks) folded to a few lines. */
function Args({ raw }: { raw: string }) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return <Collapsible text={raw} className="small" />;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return <Collapsible text={raw} className="small" />;
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length === 0) return <span className="muted small"> (no arguments)</span>;
  return (
    <div className="args">
      {entries.map(([k, v]) => (
        <div key={k}>
          <span className="argkey">{k}</span>
          {typeof v === "string" && v.includes("\n") ? (
            <Collapsible text={v} lines={3} className="small" summary={editSummary(v) ?? undefined} />
          ) : (
            <code className="small"> {JSON.stringify(v).slice(0, 400)}</code>
          )}
        </div>
      ))}
    </div>
  );
}

function EvaluationEvent({ e, base }: { e: TrajectoryEvent; base: string }) {
  const index = Number(e.index);
  const [shown, setShown] = useState<"none" | "program" | "diff">("none");
  const [text, setText] = useState("");
  const [note, setNote] = useState("");
  const show = (what: "program" | "diff") => {
    if (shown === what) return setShown("none");
    setShown(what);
    setText("");
    setNote("");
    const failed = (err: Error) => setNote(err.message);
    if (what === "program")
      fetch(`${base}/artifact?path=${encodeURIComponent(String(e.program_file ?? ""))}`)
        .then(async (r) => {
          if (!r.ok) throw new Error(((await r.json().catch(() => ({}))) as { error?: string }).error ?? `${r.status}`);
          setNote(r.headers.get("x-hone-truncated") ? `showing the ${r.headers.get("x-hone-truncated")}` : "");
          setText(await r.text());
        })
        .catch(failed);
    else getJson<{ diff: string }>(`${base}/program-diff?from=${index - 1}&to=${index}`).then((r) => setText(r.diff), failed);
  };
  return (
    <div id={`eval-${index}`} className={`msg evaluation ${e.valid ? "valid" : "invalid"}`} data-testid="event-evaluation">
      <div className="who">
        evaluation {index} · {e.valid ? <b className="mono">{score(e.score)}</b> : <b>invalid</b>}
        {e.improved ? " · new best" : ""} · {score(Number(e.seconds ?? 0), 2)} s
      </div>
      {!e.valid && <Collapsible text={String(e.reason ?? "")} lines={4} className="error" />}
      {e.program_file ? (
        <div className="actions">
          <button type="button" className="link" onClick={() => show("program")}>
            program
          </button>
          {index > 1 && (
            <button type="button" className="link" onClick={() => show("diff")} data-testid="program-diff-button">
              diff with evaluation {index - 1}
            </button>
          )}
        </div>
      ) : null}
      {note && <p className="muted small">{note}</p>}
      {shown === "program" && text && <pre className="file">{text}</pre>}
      {shown === "diff" && text && <Diff text={text} testId="program-diff" />}
    </div>
  );
}
