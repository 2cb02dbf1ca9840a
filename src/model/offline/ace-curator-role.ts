import { fencedBlocks } from "../../fence.ts";
import type { ChatRequest } from "../types.ts";
import { defaultHints } from "./hints.ts";
import { registerOfflineRole } from "./policy.ts";
import { gaussian, rng, seedFrom } from "./rng.ts";

/**
 * The offline model as ACE's curator (`hone-role: ace-curator` in the system message), answering in the shape ACE's
 * curator check requires (ace-agent/ace ace/core/curator.py: a JSON object with a string `reasoning` and a list of
 * `operations`, each ADD with `section` and `content`). It does not understand the reflection: it adds one bullet
 * holding a `hone-hint:` line, the last value of a hint found in the playbook (the ```component playbook``` block of
 * the last user message) or the executor's default, perturbed log-normally and clamped to a sensible range.
 *
 * A role of its own because the generic `curate` role (method-roles.ts) answers without `reasoning`, which ACE's check
 * rejects as a whole. Registered before method-roles.ts, which claims any `hone-role:` line.
 */
const RANGES: Record<string, [number, number]> = {
  step_scale: [0.005, 1.5],
  literals_per_edit: [1, 8],
  min_step: [0.0001, 0.05],
};
const KEYS = Object.keys(RANGES);

function playbookOf(user: string): string {
  return fencedBlocks(user, "component playbook").find((b) => b.info === "component playbook")?.body ?? "";
}

function lastValue(playbook: string, key: string): number {
  let value = (defaultHints as unknown as Record<string, number>)[key] as number;
  for (const m of playbook.matchAll(/hone-hint:\s*([a-z_]+)\s*=\s*([0-9.]+)/g))
    if (m[1] === key && Number.isFinite(Number(m[2]))) value = Number(m[2]);
  return value;
}

/** The curator's reply: one ADD operation with a perturbed hint. */
export function aceCuratorReply(user: string, next: () => number): string {
  const key = KEYS[Math.floor(next() * KEYS.length)] as string;
  const [lo, hi] = RANGES[key] as [number, number];
  const v = Math.min(hi, Math.max(lo, lastValue(playbookOf(user), key) * Math.exp(0.4 * gaussian(next))));
  const value = key === "literals_per_edit" ? Math.round(v) : Math.round(v * 10_000) / 10_000;
  return JSON.stringify({
    reasoning: `offline curator: try ${key}=${value} next`,
    operations: [{ type: "ADD", section: "strategies_and_insights", content: `hone-hint: ${key}=${value}` }],
  });
}

registerOfflineRole({
  name: "ace-curator",
  claims: (r: ChatRequest) => {
    const system = r.messages.find((m) => m.role === "system")?.content;
    return typeof system === "string" && /hone-role:\s*ace-curator\b/.test(system);
  },
  reply: (r: ChatRequest) => {
    const user = String([...r.messages].reverse().find((m) => m.role === "user")?.content ?? "");
    const next = rng(seedFrom(r.sampling?.seed ?? 0, "ace-curator", user.length, r.messages.length));
    return { content: aceCuratorReply(user, next), tool_calls: [] };
  },
});
