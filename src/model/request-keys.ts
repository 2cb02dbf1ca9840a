import { createHash, type Hash } from "node:crypto";
import { types } from "node:util";
import type { ChatModel, ChatRequest } from "./types.ts";

// A conversation's requests grow by a message or two a step, so hashing each whole body (`requestKey` in cache.ts)
// serialises and hashes the same prefix again every step: an n-step rollout's bodies sum to ~n/2 times its last. This
// gives the same key (sha256 over JSON.stringify of the body, then `\0trial=N`) from work proportional to what is new:
// - each message's JSON is kept beside a private deep copy of the message, and reused only while the message still
//   equals that copy (same keys in the same order, same values), so a message changed in place is serialised again;
// - the hash's state after the last request's messages is kept, and copied when the next request's messages begin
//   with the same serialised messages (and the same fields before them); otherwise the body is hashed from its start.
// Only plain data is kept (no accessors, toJSON, proxies, boxed values or class instances); a body of any other shape,
// or one whose serialisation throws, is hashed whole, exactly as `requestKey` does.

/** A body's JSON around its messages array: `head` + the array's JSON + `tail` is JSON.stringify(body). */
interface Shell {
  head: string;
  tail: string;
  messages: readonly unknown[];
}

/** Plain JSON-like data as it was: objects, arrays, strings, numbers, booleans, null and absent values. */
type Snapshot = { keys: string[]; values: Snapshot[] } | { items: Snapshot[] } | string | number | boolean | null | undefined;

const MARK = "\u0000hone:messages\u0000";
const MARK_JSON = JSON.stringify(MARK);
/** Deeper data is serialised each time rather than copied (a message is a few levels deep). */
const MAX_DEPTH = 16;

/** Whether JSON.stringify would call `v.toJSON` (an object's or a function's). */
function hasToJson(v: unknown): boolean {
  return (
    v !== null && (typeof v === "object" || typeof v === "function") && typeof (v as { toJSON?: unknown }).toJSON === "function"
  );
}

/** An object JSON.stringify reads as its own data properties only: no toJSON, proxy, boxed value or class. */
function isPlainObject(v: object): boolean {
  if (types.isProxy(v) || types.isBoxedPrimitive(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && !hasToJson(v);
}

/** Whether every own property of `v` holds a value (no getter that could answer differently from one read to the next). */
function dataOnly(v: object): boolean {
  const all = Object.getOwnPropertyDescriptors(v) as Record<string, PropertyDescriptor>;
  for (const k in all) if (!("value" in (all[k] as PropertyDescriptor))) return false;
  return true;
}

/** A private deep copy of `v`, or undefined when `v` holds anything JSON.stringify treats specially. */
function snapshotOf(v: unknown, depth = 0): { s: Snapshot } | undefined {
  if (v === null || v === undefined || typeof v === "string" || typeof v === "boolean") return { s: v };
  if (typeof v === "number") return Number.isFinite(v) ? { s: v } : undefined;
  if (typeof v !== "object" || depth >= MAX_DEPTH) return undefined;
  if (Array.isArray(v)) {
    if (hasToJson(v) || types.isProxy(v) || !dataOnly(v)) return undefined;
    const items: Snapshot[] = [];
    for (let i = 0; i < v.length; i++) {
      const item = snapshotOf(v[i], depth + 1);
      if (!item) return undefined;
      items.push(item.s);
    }
    return { s: { items } };
  }
  if (!isPlainObject(v) || !dataOnly(v)) return undefined;
  const keys = Object.keys(v);
  const values: Snapshot[] = [];
  for (const k of keys) {
    const value = snapshotOf((v as Record<string, unknown>)[k], depth + 1);
    if (!value) return undefined;
    values.push(value.s);
  }
  return { s: { keys, values } };
}

/** Whether `v` still equals its snapshot: the same keys in the same order and the same values, all the way down. */
function equalsSnapshot(v: unknown, s: Snapshot): boolean {
  if (s === null || typeof s !== "object") return v === s;
  if (v === null || typeof v !== "object") return false;
  if ("items" in s) {
    if (!Array.isArray(v) || v.length !== s.items.length) return false;
    return s.items.every((item, i) => equalsSnapshot(v[i], item));
  }
  if (Array.isArray(v) || !isPlainObject(v)) return false;
  const keys = Object.keys(v);
  if (keys.length !== s.keys.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (k !== s.keys[i] || !equalsSnapshot((v as Record<string, unknown>)[k], s.values[i])) return false;
  }
  return true;
}

/** The body split around its messages, or undefined for a body of another shape (then hashed whole). */
function shellOf(body: unknown): Shell | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body) || !isPlainObject(body) || !dataOnly(body))
    return undefined;
  const own = Object.getOwnPropertyDescriptor(body, "messages");
  const messages: unknown = own?.enumerable ? own.value : undefined;
  if (!Array.isArray(messages) || hasToJson(messages) || types.isProxy(messages)) return undefined;
  // A message's own toJSON is called with its index, which a message serialised on its own would not be given.
  for (let i = 0; i < messages.length; i++) if (hasToJson(messages[i])) return undefined;
  const json = JSON.stringify({ ...body, messages: MARK });
  const at = json.indexOf(MARK_JSON);
  if (at < 0 || json.indexOf(MARK_JSON, at + 1) >= 0) return undefined;
  return { head: json.slice(0, at), tail: json.slice(at + MARK_JSON.length), messages };
}

/** Request keys for one conversation's successive requests (one per scope); each equals `requestKey`'s. */
export class RequestKeys {
  private readonly known = new WeakMap<object, { json: string; snapshot: Snapshot }>();
  private last: { head: string; parts: string[]; state: Hash } | undefined;

  key(model: ChatModel, request: ChatRequest): string {
    const body = model.wireBody ? model.wireBody(request) : request;
    const trial = `\0trial=${request.trial ?? 0}`;
    try {
      const key = this.fromParts(body, trial);
      if (key) return key;
    } catch {
      // hashed whole below, which throws what requestKey throws for such a body (a cycle, a BigInt)
    }
    return createHash("sha256").update(JSON.stringify(body)).update(trial).digest("hex");
  }

  /** The key from the body's messages one by one, or undefined for a body not split around them. */
  private fromParts(body: unknown, trial: string): string | undefined {
    const shell = shellOf(body);
    if (!shell) return undefined;
    const parts: string[] = [];
    for (let i = 0; i < shell.messages.length; i++) parts.push(this.json(shell.messages[i])); // a hole is null, as in JSON
    const state = this.prefixState(shell.head, parts);
    this.last = { head: shell.head, parts, state: state.copy() };
    return state.update(`]${shell.tail}`).update(trial).digest("hex");
  }

  /** One message's JSON as an array element (absent values are `null` there), from the last time while unchanged. */
  private json(m: unknown): string {
    if (m === null || typeof m !== "object") return JSON.stringify(m) ?? "null";
    const known = this.known.get(m);
    if (known && equalsSnapshot(m, known.snapshot)) return known.json;
    const json = JSON.stringify(m) ?? "null";
    const snapshot = snapshotOf(m);
    if (snapshot) this.known.set(m, { json, snapshot: snapshot.s });
    else this.known.delete(m);
    return json;
  }

  /** The hash over `head[` and the messages' JSON, going on from the last request's when this one extends it. */
  private prefixState(head: string, parts: string[]): Hash {
    const last = this.last;
    const extends_ = last !== undefined && last.head === head && last.parts.length <= parts.length;
    const from = extends_ && last.parts.every((p, i) => p === parts[i]) ? last.parts.length : 0;
    const state = from > 0 && last ? last.state.copy() : createHash("sha256").update(`${head}[`);
    for (let i = from; i < parts.length; i++) state.update(i > 0 ? `,${parts[i]}` : (parts[i] as string));
    return state;
  }
}
