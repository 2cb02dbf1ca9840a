import type { ContextBudgetParams } from "../harness/middleware-params.ts";
import type { ChatMessage } from "../model/types.ts";

/**
 * Keeping a conversation inside the model's context window (hone:context_budget). Pure functions over messages:
 * the agent loop decides when to call them and records every compaction. Rules, in order, until the estimate fits:
 * 1. in turns older than the protected recent ones, drop the reasoning of assistant messages and shrink each tool
 *    output longer than keep_chars (a digest or its head and tail, by strategy);
 * 2. drop whole old turns (an assistant message with its tool results and the messages after them), oldest first,
 *    and say so on the last message before the first turn;
 * 3. only after the server refused a prompt: shrink the outputs of the protected turns too.
 * A turn is dropped whole, so every tool result stays right after the call it answers.
 */
export interface Compaction {
  messages: ChatMessage[];
  tokensBefore: number;
  tokensAfter: number;
  outputsCompacted: number;
  reasoningDropped: number;
  turnsDropped: number;
}

const MARK = "context_budget";
const PER_MESSAGE_CHARS = 12;

/** The characters of a conversation as the server sees them (roles and framing approximated per message). */
export function charsOf(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) {
    n += PER_MESSAGE_CHARS + (typeof m.content === "string" ? m.content.length : 0);
    if (m.role === "assistant") {
      n += m.reasoning?.length ?? 0;
      for (const c of m.tool_calls ?? []) n += c.id.length + c.function.name.length + c.function.arguments.length + 16;
    }
  }
  return n;
}

/** A short form of a tool output: its scalar JSON fields (as many as fit), or its first line. JSON stays JSON. */
export function digest(output: string, keepChars: number): string {
  const trimmed = output.trim();
  if (trimmed.startsWith("{") && trimmed.length <= 1_000_000) {
    try {
      const v = JSON.parse(trimmed) as Record<string, unknown>;
      const kept: Record<string, unknown> = {};
      let size = 0;
      for (const [k, x] of Object.entries(v)) {
        const scalar = typeof x === "number" || typeof x === "boolean" || x === null || (typeof x === "string" && x.length <= 80);
        const cost = k.length + JSON.stringify(x ?? null).length + 4;
        if (!scalar || size + cost > keepChars) continue;
        kept[k] = x;
        size += cost;
      }
      return JSON.stringify({ ...kept, [MARK]: `scalar fields kept from ${output.length} characters` });
    } catch {
      // Not JSON after all: summarised as text below.
    }
  }
  const first = (trimmed.split("\n", 1)[0] ?? "").slice(0, keepChars);
  return `${first}\n[${MARK}: ${output.length} characters summarised to their first line]`;
}

export function headTail(output: string, keepChars: number): string {
  const head = Math.ceil((keepChars * 2) / 3);
  const tail = keepChars - head;
  return `${output.slice(0, head)}\n[${MARK}: ${output.length - keepChars} characters cut]\n${output.slice(-tail)}`;
}

const isCompacted = (text: string) => text.includes(`"${MARK}":`) || text.includes(`[${MARK}:`);

/** Indices where turns start (assistant messages); everything before the first is the head (system, task). */
function turnStarts(messages: readonly ChatMessage[]): number[] {
  const starts: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === "assistant") starts.push(i);
  });
  return starts;
}

const DROPPED = new RegExp(`\\n\\n\\[${MARK}: (\\d+) earlier turns? removed[^\\]]*\\]$`);

/** The head's last message with a note of how many turns were removed in all (replacing an earlier note). */
function noteDropped(m: ChatMessage, dropped: number): ChatMessage {
  if (m.role === "tool" || typeof m.content !== "string") return m;
  const before = DROPPED.exec(m.content);
  const total = dropped + (before ? Number(before[1]) : 0);
  const base = before ? m.content.slice(0, before.index) : m.content;
  const note = `\n\n[${MARK}: ${total} earlier turn${total === 1 ? "" : "s"} removed to fit the model's context window]`;
  return { ...m, content: base + note } as ChatMessage;
}

export interface CompactOptions {
  params: ContextBudgetParams;
  /** Estimated tokens per character (calibrated from the server's prompt_tokens). */
  tokensPerChar: number;
  /** Characters sent besides the messages (tool definitions). */
  extraChars: number;
  /** The estimate to get under. */
  targetTokens: number;
  /** After a refusal: protect only the last turn and shrink its outputs too (rule 3). */
  aggressive: boolean;
}

export function compact(messages: readonly ChatMessage[], o: CompactOptions): Compaction | undefined {
  const est = (ms: readonly ChatMessage[]) => Math.ceil((charsOf(ms) + o.extraChars) * o.tokensPerChar);
  const out = [...messages];
  const before = est(out);
  const counts = { outputsCompacted: 0, reasoningDropped: 0, turnsDropped: 0 };
  const starts = turnStarts(out);
  const protectedTurns = o.aggressive ? 1 : o.params.keep_recent_turns;
  const firstProtected: number =
    (starts.length > protectedTurns ? starts[starts.length - protectedTurns] : starts[0]) ?? out.length;
  const shrink = (m: ChatMessage, keep: number) =>
    o.params.strategy === "summarize" ? digest(m.content ?? "", keep) : headTail(m.content ?? "", keep);
  const shrinkRange = (from: number, to: number, keep: number) => {
    for (let i = from; i < to && est(out) > o.targetTokens; i++) {
      const m = out[i] as ChatMessage;
      if (m.role === "assistant" && m.reasoning) {
        const { reasoning: _r, ...rest } = m;
        out[i] = rest;
        counts.reasoningDropped++;
      } else if (m.role === "tool" && m.content.length > keep && !isCompacted(m.content)) {
        const next = shrink(m, keep);
        if (next.length >= m.content.length) continue;
        out[i] = { ...m, content: next };
        counts.outputsCompacted++;
      }
    }
  };
  const head = starts[0] ?? out.length;
  shrinkRange(head, firstProtected, o.params.keep_chars);
  // Rule 2: whole old turns, oldest first.
  let dropEnd = head;
  const oldStarts = starts.filter((s) => s < firstProtected);
  for (let k = 0; k < oldStarts.length && est(out.slice(0, head).concat(out.slice(dropEnd))) > o.targetTokens; k++) {
    dropEnd = oldStarts[k + 1] ?? firstProtected;
    counts.turnsDropped++;
  }
  let result = out;
  if (counts.turnsDropped > 0) {
    const kept = out.slice(0, head);
    if (head > 0) kept[head - 1] = noteDropped(kept[head - 1] as ChatMessage, counts.turnsDropped);
    result = kept.concat(out.slice(dropEnd));
  }
  if (o.aggressive && est(result) > o.targetTokens) {
    out.splice(0, out.length, ...result);
    shrinkRange(turnStarts(out).at(-1) ?? out.length, out.length, o.params.keep_chars * 4);
    result = out;
  }
  const changed = counts.outputsCompacted + counts.reasoningDropped + counts.turnsDropped > 0;
  return changed ? { messages: result, tokensBefore: before, tokensAfter: est(result), ...counts } : undefined;
}
