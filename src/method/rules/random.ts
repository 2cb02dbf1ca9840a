/**
 * The random baseline: valid HarnessSpecs sampled from the spec space with a seeded generator, the reference every
 * method comparison reports (random search; no upstream code). Kept by greedy.ts's `keepIfBetter`.
 *
 * The space is read from the HarnessSpec schema itself (src/harness/spec.ts), so it follows its ranges:
 * - groups: `sampling`, `agent.max_iterations`, one built-in middleware's numeric parameters, and, when the caller
 *   gives them, `remove_tools` (a non-empty subset of the removable tools, never the four required ones) and
 *   `system_prompt` (one of the given texts). Each group is included with probability ½, at least one; within
 *   `sampling` each field with probability ½, at least one.
 * - numbers: integers uniform on [min, max], floats uniform on (min, max]; middleware sizes and counts whose range
 *   spans more than 100 values are log-uniform (so "remind from 1..10,000 calls left" is not almost always thousands).
 * - `long_tool_output`: all three sizes together, with head + tail < max as the schema requires after merging.
 * Texts are never invented: a language change needs a proposer. Every sample is validated against the schema and a
 * sample that fails (a schema change this sampler does not know) throws instead of being returned.
 */
import * as z from "zod";
import { type HarnessSpec, harnessSpecSchema, REQUIRED_TOOLS, validateSpec } from "../../harness/spec.ts";
import { choice, type Rand, sampleDistinct } from "./sample.ts";

export interface NumberRange {
  min: number;
  max: number;
  int: boolean;
}

type Unwrappable = { unwrap: () => unknown };

/** The range of a (possibly optional) zod number schema. */
export function rangeOf(schema: unknown): NumberRange {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodDefault) s = (s as Unwrappable).unwrap();
  if (!(s instanceof z.ZodNumber)) throw new TypeError("rangeOf: not a number schema");
  const { minValue, maxValue, isInt } = s as unknown as { minValue: number | null; maxValue: number | null; isInt: boolean };
  if (minValue === null || maxValue === null) throw new RangeError("rangeOf: the number schema is unbounded");
  return { min: minValue, max: maxValue, int: isInt };
}

const shapeOf = (schema: unknown): Record<string, unknown> => {
  let s = schema;
  while (s instanceof z.ZodOptional) s = (s as Unwrappable).unwrap();
  return (s as z.ZodObject).shape as Record<string, unknown>;
};

const top = harnessSpecSchema.shape;
export const SPEC_SPACE = {
  sampling: Object.fromEntries(Object.entries(shapeOf(top.sampling)).map(([k, v]) => [k, rangeOf(v)])),
  maxIterations: rangeOf(shapeOf(top.agent).max_iterations),
  middleware: Object.fromEntries(
    Object.entries(shapeOf(top.middleware_params)).map(([name, m]) => [
      name,
      Object.fromEntries(
        Object.entries(shapeOf(m))
          .filter(([, v]) => {
            let s = v;
            while (s instanceof z.ZodOptional) s = (s as Unwrappable).unwrap();
            return s instanceof z.ZodNumber;
          })
          .map(([k, v]) => [k, rangeOf(v)]),
      ),
    ]),
  ) as Record<string, Record<string, NumberRange>>,
};

/** A number from a range: see the header for the distribution. */
export function sampleNumber(r: NumberRange, rand: Rand, logScale = false): number {
  if (!r.int) return r.min + (1 - rand()) * (r.max - r.min);
  const span = r.max - r.min;
  if (!logScale || span <= 100) return r.min + Math.min(span, Math.floor(rand() * (span + 1)));
  // Log-uniform in (offset + 1): exp(u·ln(span + 2)) is in [1, span + 2), so the offset is in [0, span].
  return r.min + Math.min(span, Math.floor(Math.exp(rand() * Math.log(span + 2))) - 1);
}

const half = (rand: Rand) => rand() < 0.5;

function someOf<T>(items: readonly T[], rand: Rand): T[] {
  const picked = items.filter(() => half(rand));
  return picked.length ? picked : [choice(items, rand)];
}

function middlewarePatch(name: string, rand: Rand): Record<string, number> {
  const ranges = SPEC_SPACE.middleware[name] ?? {};
  if (name !== "long_tool_output")
    return Object.fromEntries(Object.entries(ranges).map(([k, r]) => [k, sampleNumber(r, rand, true)]));
  const [m, h, t] = [ranges.max_chars, ranges.head_chars, ranges.tail_chars] as NumberRange[];
  const max = sampleNumber(
    { ...(m as NumberRange), min: Math.max((m as NumberRange).min, (h as NumberRange).min + (t as NumberRange).min + 1) },
    rand,
    true,
  );
  const head = sampleNumber(
    { ...(h as NumberRange), max: Math.min((h as NumberRange).max, max - (t as NumberRange).min - 1) },
    rand,
    true,
  );
  const tail = sampleNumber({ ...(t as NumberRange), max: Math.min((t as NumberRange).max, max - head - 1) }, rand, true);
  return { max_chars: max, head_chars: head, tail_chars: tail };
}

export interface RandomSpecSpace {
  /** Tools of the incumbent that may be removed (required tools are ignored). */
  removableTools?: readonly string[];
  /** Ready-made system prompts to pick from. */
  systemPrompts?: readonly string[];
}

/** One random valid HarnessSpec. */
export function randomSpec(rand: Rand, space: RandomSpecSpace = {}): HarnessSpec {
  const removable = (space.removableTools ?? []).filter((t) => !(REQUIRED_TOOLS as readonly string[]).includes(t));
  const groups = ["sampling", "agent", "middleware"];
  if (removable.length) groups.push("remove_tools");
  if (space.systemPrompts?.length) groups.push("system_prompt");
  const spec: Record<string, unknown> = { rationale: "random baseline: a seeded sample of the spec space" };
  for (const g of someOf(groups, rand)) {
    if (g === "sampling") {
      const fields = someOf(Object.keys(SPEC_SPACE.sampling), rand);
      spec.sampling = Object.fromEntries(fields.map((k) => [k, sampleNumber(SPEC_SPACE.sampling[k] as NumberRange, rand)]));
    } else if (g === "agent") spec.agent = { max_iterations: sampleNumber(SPEC_SPACE.maxIterations, rand) };
    else if (g === "middleware") {
      const name = choice(Object.keys(SPEC_SPACE.middleware), rand);
      spec.middleware_params = { [name]: middlewarePatch(name, rand) };
    } else if (g === "remove_tools") {
      const n = 1 + Math.floor(rand() * Math.min(8, removable.length));
      spec.remove_tools = sampleDistinct(removable, n, rand);
    } else spec.system_prompt = choice(space.systemPrompts ?? [], rand);
  }
  const checked = validateSpec(spec);
  if (!checked.spec)
    throw new Error(`randomSpec sampled an invalid spec: ${checked.problems.map((p) => `${p.field}: ${p.message}`).join("; ")}`);
  return checked.spec;
}
