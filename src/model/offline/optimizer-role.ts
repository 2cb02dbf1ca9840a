import { fenced, fencedBlocks } from "../../fence.ts";
import type { ChatRequest } from "../types.ts";
import { registerOfflineRole } from "./policy.ts";
import { gaussian, rng, seedFrom } from "./rng.ts";

/**
 * The offline model as OPRO's optimizer (`hone-role: optimize` in the system message). The last user message holds
 * earlier versions of one text as ```component <name>``` blocks, listed worst to best (OPRO's ascending order); the
 * answer is one block of that name: the last (best) version with its `hone-hint:` values perturbed, drawn again
 * (up to eight times) while it equals a version already shown, as the meta-prompt asks for a text "different from
 * every version above". When every draw repeats one, a hint the text lacks is added and perturbed. It does not read
 * the scores or understand language.
 */
const ROLE = /hone-role:\s*optimize\b/;
const TRIES = 8;
/** The numeric hints, each with the value added when a text lacks it and the range its value is kept in. */
const HINTS: [key: string, start: number, lo: number, hi: number][] = [
  ["step_scale", 0.08, 0.005, 1.5],
  ["min_step", 0.002, 0.0001, 0.05],
  ["literals_per_edit", 2, 1, 8],
];
const HINT = /hone-hint:\s*([a-z_]+)\s*=\s*([0-9.]+)/g;

/** Each numeric hint moved: log-normally for a real value, by one step up or down for a count; kept in its range. */
function perturbHints(body: string, next: () => number): string {
  return body.replace(HINT, (whole, key: string, value: string) => {
    const spec = HINTS.find(([k]) => k === key);
    if (!spec) return whole;
    const [, , lo, hi] = spec;
    const v = Number(value);
    const moved = key === "literals_per_edit" ? Math.round(v) + (next() < 0.5 ? -1 : 1) : v * Math.exp(0.4 * gaussian(next));
    const kept = Math.min(hi, Math.max(lo, moved));
    return `hone-hint: ${key}=${key === "literals_per_edit" ? kept : Math.round(kept * 10_000) / 10_000}`;
  });
}

function newVersion(bodies: string[], next: () => number): string {
  const best = bodies[bodies.length - 1] ?? "";
  const seen = new Set(bodies.map((b) => b.trim()));
  for (let i = 0; i < TRIES; i++) {
    const out = perturbHints(best, next);
    if (!seen.has(out.trim())) return out;
  }
  const missing = HINTS.find(([key]) => !new RegExp(`hone-hint:\\s*${key}\\s*=`).test(best));
  const widened = missing ? `${best.trimEnd()}\nhone-hint: ${missing[0]}=${missing[1]}\n` : best;
  return perturbHints(widened, next);
}

registerOfflineRole({
  name: "optimizer-role",
  claims: (r: ChatRequest) => {
    const system = r.messages.find((m) => m.role === "system")?.content;
    return typeof system === "string" && ROLE.test(system);
  },
  reply: (r: ChatRequest) => {
    const user = String([...r.messages].reverse().find((m) => m.role === "user")?.content ?? "");
    const given = fencedBlocks(user, "component ").map((b) => ({ name: b.info.slice("component ".length).trim(), body: b.body }));
    const name = given[given.length - 1]?.name ?? "text";
    const next = rng(seedFrom(r.sampling?.seed ?? 0, "optimize", user.length, r.messages.length));
    const body = newVersion(
      given.map((b) => b.body),
      next,
    );
    return { content: fenced(`component ${name}`, body), tool_calls: [] };
  },
});
