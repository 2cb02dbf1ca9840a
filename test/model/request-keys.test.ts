import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { requestKey } from "../../src/model/cache.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import { RequestKeys } from "../../src/model/request-keys.ts";
import type { ChatMessage, ChatModel, ChatRequest } from "../../src/model/types.ts";

// RequestKeys must give exactly requestKey's key for every request, whatever was done to the messages between two
// requests: a recorded run replays only if its keys are the ones it was recorded under.

const vllm = new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:9/v1", model: "m" }, {});
const openai = new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:9/v1", model: "gpt-4.1", dialect: "openai" }, {});
const tools = [{ type: "function" as const, function: { name: "edit", description: "edit", parameters: { type: "object" } } }];

/** Asks both for the key of each request in turn, through one RequestKeys. */
function agree(model: ChatModel, requests: ChatRequest[], keys = new RequestKeys()): string[] {
  return requests.map((r) => {
    const expected = requestKey(model, r);
    expect(keys.key(model, r)).toBe(expected);
    return expected;
  });
}

/** Each step's key through one RequestKeys against requestKey's, a thrown error compared by its message. */
function agreeSteps(steps: [ChatModel, () => ChatRequest][]): void {
  const keys = new RequestKeys();
  const outcome = (f: () => string) => {
    try {
      return f();
    } catch (err) {
      return `threw ${(err as Error).message}`;
    }
  };
  for (const [model, next] of steps) {
    const r = next();
    expect(outcome(() => keys.key(model, r))).toBe(outcome(() => requestKey(model, r)));
  }
}

const odd = (m: Record<string, unknown>): ChatMessage => ({ role: "user", content: "x", ...m }) as unknown as ChatMessage;
const twice = (m: ChatMessage, change: () => void): [ChatModel, () => ChatRequest][] => [
  [vllm, () => ({ messages: [m] })],
  [
    vllm,
    () => {
      change();
      return { messages: [m] };
    },
  ],
];

const call = (id: string, args: string): ChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name: "edit", arguments: args } }],
});

function growing(steps: number): { messages: ChatMessage[]; requests: ChatRequest[] } {
  const messages: ChatMessage[] = [
    { role: "system", content: "search" },
    { role: "user", content: "improve the program" },
  ];
  const requests: ChatRequest[] = [];
  for (let s = 0; s < steps; s++) {
    requests.push({ messages: [...messages], tools, sampling: { temperature: 1, seed: 3 } });
    messages.push(call(`c${s}`, `{"edits":"step ${s}"}`), { role: "tool", tool_call_id: `c${s}`, content: `ok ${s}\n"quoted"` });
  }
  return { messages, requests };
}

describe("RequestKeys", () => {
  it("gives requestKey's key, which is sha256 over the body's JSON and the trial index", () => {
    const r: ChatRequest = { messages: [{ role: "user", content: "hi" }], sampling: { temperature: 0.5 } };
    const json = '{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.5}';
    const expected = createHash("sha256").update(`${json}\0trial=0`).digest("hex");
    expect(requestKey(vllm, r)).toBe(expected);
    expect(new RequestKeys().key(vllm, r)).toBe(expected);
  });

  it("agrees over a growing conversation in both dialects, streamed or not, on every trial", () => {
    const { requests } = growing(12);
    agree(vllm, requests);
    agree(openai, requests);
    agree(
      vllm,
      requests.map((r, i) => ({ ...r, trial: i % 3, sampling: { ...r.sampling, stream: i % 2 === 0 } })),
    );
  });

  it("serialises again a message changed in place: its text, a nested tool call, its keys' order", () => {
    const { messages, requests } = growing(4);
    const keys = new RequestKeys();
    agree(vllm, requests, keys);
    const before = requestKey(vllm, { messages: [...messages], tools });
    (messages[1] as { content: string }).content = "improve it faster";
    agree(vllm, [{ messages: [...messages], tools }], keys);
    const tool = messages[2] as Extract<ChatMessage, { role: "assistant" }>;
    const fn = tool.tool_calls?.[0]?.function as { arguments: string };
    fn.arguments = '{"edits":"other"}';
    agree(vllm, [{ messages: [...messages], tools }], keys);
    const m = messages[3] as Record<string, unknown>;
    const role = m.role;
    delete m.role;
    m.role = role; // the same values, the keys in another order
    const [after] = agree(vllm, [{ messages: [...messages], tools }], keys);
    expect(after).not.toBe(before);
  });

  it("agrees when earlier messages are dropped or replaced (compaction), when the sampling or tools change, and when two conversations share one", () => {
    const a = growing(8);
    const b = growing(5);
    const keys = new RequestKeys();
    const compacted: ChatMessage[] = [
      a.messages[0] as ChatMessage,
      { role: "user", content: "summary" },
      ...a.messages.slice(-4),
    ];
    agree(
      vllm,
      [
        ...a.requests.slice(0, 4),
        { messages: compacted, tools },
        { messages: [...compacted, { role: "user", content: "go on" }], tools },
        { messages: [...compacted, { role: "user", content: "go on" }], tools, sampling: { temperature: 0.1 } },
        { messages: [...compacted, { role: "user", content: "go on" }] },
        { messages: [] },
        a.requests[7] as ChatRequest,
        b.requests[4] as ChatRequest,
        a.requests[7] as ChatRequest,
        { ...(a.requests[7] as ChatRequest), messages: [...(a.requests[7] as ChatRequest).messages].reverse() },
      ],
      keys,
    );
  });

  it("agrees on what JSON treats specially: toJSON (given the message's index), absent and non-finite values, holes, class instances", () => {
    const odd = [
      { role: "user", content: "x", toJSON: (key: string) => ({ role: "user", content: `at ${key}` }) },
      { role: "user", content: "y", extra: undefined, n: Number.NaN, inf: Number.POSITIVE_INFINITY, z: -0 },
      { role: "user", content: "z", when: new Date(0), list: Object.assign([1, undefined], { 3: 3 }), sym: Symbol("s") },
      { role: "user", content: "w", nested: { toJSON: () => "nested" } },
      Object.assign(() => "a function", { toJSON: (key: string) => `a function at ${key}` }),
    ] as unknown as ChatMessage[];
    const keys = new RequestKeys();
    agree(vllm, [{ messages: odd.slice(1) }, { messages: odd.slice(1) }, { messages: odd }, { messages: odd }], keys);
    (odd[1] as unknown as { n: number }).n = 4;
    (odd[2] as unknown as { list: unknown[] }).list[1] = 2;
    agree(vllm, [{ messages: odd }, { messages: [...odd, ...odd] }], keys);
  });

  it("hashes the body whole when it is not split around its messages: no wire body, messages not an array, the marker elsewhere", () => {
    const plain: ChatModel = { id: "p", complete: () => Promise.reject(new Error("not called")) };
    const odd = (body: unknown): ChatModel => ({ ...plain, wireBody: () => body });
    const keys = new RequestKeys();
    const { requests } = growing(3);
    agree(plain, requests, keys);
    agree(odd({ messages: "text" }), requests, keys);
    agree(odd({ model: "\u0000hone:messages\u0000", messages: [] }), requests, keys);
    agree(odd([1, 2]), requests, keys);
    agree(odd("body"), requests, keys);
    agree(odd({ messages: [{ role: "user", content: "a" }], toJSON: () => ({ other: 1 }) }), requests, keys);
  });

  it("agrees on a messages array with holes (in the middle, first, last): JSON writes null there", () => {
    const a = { role: "user", content: "a" } as ChatMessage;
    const middle: ChatMessage[] = [a];
    middle[2] = a;
    const first: ChatMessage[] = [];
    first[1] = a;
    const last: ChatMessage[] = [a];
    last.length = 2;
    for (const messages of [middle, first, last])
      agreeSteps([
        [vllm, () => ({ messages })],
        [vllm, () => ({ messages })],
      ]);
  });

  it("agrees when a message's nested values change in place: a key deleted, an array grown or swapped for a look-alike, a Date, a toJSON, a boxed number", () => {
    const other = new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:9/v1", model: "n" }, {});
    const same = odd({});
    agreeSteps([
      [vllm, () => ({ messages: [same] })],
      [other, () => ({ messages: [same] })],
    ]);
    // One message a case, each cached before its change (a boxed number or a Date anywhere would keep it uncached).
    let unboxed = 1;
    const boxed = Object.setPrototypeOf(Object.assign(new Number(1), { [Symbol.toPrimitive]: () => unboxed }), Object.prototype);
    const cases: [Record<string, unknown>, (it: Record<string, unknown>) => void][] = [
      [{ a: 1, b: 2 }, (it) => delete it.b],
      [{ list: [1] }, (it) => (it.list as number[]).push(2)],
      [{ list: [1] }, (it) => (it.list = { 0: 1, length: 1 })],
      [{ o: { 0: 1 } }, (it) => (it.o = [1])],
      [{ p: {} }, (it) => (it.p = new Date(0))],
      [{ q: { k: 1 } }, (it) => Object.setPrototypeOf(it.q, { toJSON: () => "T" })],
      [{ r: { valueOf: 1 } }, (it) => Object.setPrototypeOf(it.r, Number.prototype)],
      [{ n: 1 }, (it) => (it.n = new Number(2))],
      [{ n: boxed }, () => (unboxed = 2)], // JSON reads a boxed number through its Symbol.toPrimitive
    ];
    for (const [fields, change] of cases) {
      const m = odd(fields);
      agreeSteps(twice(m, () => change(m as unknown as Record<string, unknown>)));
    }
    let v = "a";
    const withToJson = Object.assign([1], { toJSON: () => v });
    agreeSteps(twice(odd({ withToJson }), () => (v = "b")));
  });

  it("agrees on what reads differently each time or is not plain data: getters, proxies, a body's own odd messages", () => {
    // Each reads "first" once and "later" ever after: RequestKeys reads it first (that key is not compared), and
    // must not keep the JSON of that first read under a snapshot of a later one.
    const firstThenLater = () => {
      let reads = 0;
      return () => (reads++ === 0 ? "first" : "later");
    };
    const lazyRead = firstThenLater();
    const lazy = {
      role: "user",
      get content() {
        return lazyRead();
      },
    } as unknown as ChatMessage;
    const proxyRead = firstThenLater();
    const proxy = new Proxy(
      { role: "user", content: "p" },
      { get: (t, k) => (k === "content" ? proxyRead() : Reflect.get(t, k)) },
    );
    for (const m of [lazy, proxy as unknown as ChatMessage]) {
      const keys = new RequestKeys();
      keys.key(vllm, { messages: [m] });
      for (const _ of [1, 2]) expect(keys.key(vllm, { messages: [m] })).toBe(requestKey(vllm, { messages: [m] }));
    }
    const shaped = (make: (messages: readonly ChatMessage[]) => unknown): ChatModel => ({
      id: "w",
      complete: () => Promise.reject(new Error("not called")),
      wireBody: (q) => make(q.messages),
    });
    const hidden = shaped((messages) =>
      Object.defineProperty({ model: "m" }, "messages", { value: messages, enumerable: false }),
    );
    const ownMap = shaped((messages) => ({ model: "m", messages: Object.assign([...messages], { map: () => [] }) }));
    const pushes = shaped((messages) => {
      const list = [...messages];
      return {
        model: "m",
        messages: list,
        get seed() {
          list.push({ role: "user", content: "late" });
          return 1;
        },
      };
    });
    const arrayToJson = shaped((messages) => ({ model: "m", messages: Object.assign([...messages], { toJSON: () => ["x"] }) }));
    class Body {
      constructor(readonly messages: readonly ChatMessage[]) {}
      toJSON() {
        return { wrapped: this.messages.length };
      }
    }
    const classBody = shaped((messages) => new Body(messages));
    const cycle = shaped((messages) => {
      const list: unknown[] = [...messages];
      list.push(list);
      return { model: "m", messages: list, seed: 1n };
    });
    const { requests } = growing(3);
    for (const model of [hidden, ownMap, pushes, arrayToJson, classBody, cycle])
      agreeSteps(requests.map((r): [ChatModel, () => ChatRequest] => [model, () => r]));
  });

  it("agrees with requestKey over random edits of a conversation (a seeded walk of 1500 steps)", () => {
    let seed = 7;
    const rand = (n: number) => {
      // mulberry32
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
    };
    const keys = new RequestKeys();
    let messages: ChatMessage[] = [{ role: "system", content: "s" }];
    for (let step = 0; step < 1500; step++) {
      if (messages.length > 60) messages = messages.slice(30);
      const i = rand(messages.length);
      const target = messages[i] as unknown as Record<string, unknown>;
      switch (rand(8)) {
        case 0:
        case 1:
          messages.push(call(`c${step}`, `{"n":${step}}`), { role: "tool", tool_call_id: `c${step}`, content: String(step) });
          break;
        case 2:
          target.content = `edited ${step}`;
          break;
        case 3:
          messages[i] = structuredClone(messages[i] as ChatMessage);
          break;
        case 4:
          messages = messages.slice(rand(messages.length));
          break;
        case 5: {
          const fn = (target.tool_calls as { function: { arguments: string } }[] | undefined)?.[0]?.function;
          if (fn) fn.arguments = `{"m":${step}}`;
          break;
        }
        case 6:
          messages.push({ role: "user", content: "\u2028 \ud800 \u0000 é" }, {
            role: "assistant",
            content: "a",
            reasoning: rand(2) ? "why" : "",
          } as ChatMessage);
          break;
        default:
          target.extra = rand(2) ? step : undefined;
      }
      const model = [vllm, vllm, vllm, openai][rand(4)] as ChatModel; // the fields before the messages change now and then
      agree(model, [{ messages: [...messages], tools, trial: rand(2) }], keys);
    }
  });
});
