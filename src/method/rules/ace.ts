/**
 * ACE's playbook rules (Agentic Context Engineering, Zhang et al., arXiv 2510.04618), ported from ace-agent/ace at commit
 * ba78d343bf8cbe52f284da339a329a609565426a: playbook_utils.py (`parse_playbook_line`, `get_next_global_id`,
 * `update_bullet_counts`, `apply_curator_operations`), utils.py (`get_section_slug`, `count_tokens`), ace/ace.py (the
 * empty playbook, defaults, `best_playbook` and the reflection/curation schedule), ace/core/curator.py (operation
 * validation), ace/core/bulletpoint_analyzer.py (de-duplication).
 *
 * - Playbook: sections ("## TITLE") of bullets `[id] helpful=H harmful=X :: content`. Ids are `<slug>-<NNNNN>`, the
 *   number global (max over the playbook + 1); the slug is 3–5 letters from the section (a fixed map, else the first
 *   letter of each of the first five words, or the first four letters of a one-word name).
 * - Reflector: tags used bullets helpful / harmful / neutral; each tag adds 1 to that counter (the last tag per id wins).
 *   On a wrong answer up to `max_num_rounds` = 3 reflect-and-retry rounds, stopping when corrected; on a right one a
 *   single reflection, to tag helpful bullets.
 * - Curator: every `curator_frequency` = 1 steps emits {reasoning, operations}; the output is checked as a whole (a list;
 *   each operation an object with a type; ADD needs section and content) and a failing output changes nothing. Only
 *   ADD is applied (UPDATE, MERGE, DELETE and CREATE_META are accepted by the check but not implemented upstream): a new
 *   bullet with counters 0/0 at the end of its section; a section that does not exist (other than "general") goes to
 *   the end of OTHERS; "general", when the playbook has no such section, goes to the top of OTHERS (after earlier
 *   "general" bullets of the same step), where upstream's rebuild inserts the bullets no header took.
 * - De-duplication (optional upstream, threshold 0.9): in playbook order, bullet i (not yet grouped) groups with every
 *   later bullet whose similarity to it is ≥ 0.9; with `merge` each group becomes one bullet with the first id, the
 *   summed counters and (upstream) an LLM-merged text; without `merge` the first of each group is kept.
 * - Offline training keeps `best_playbook` when the validation accuracy is strictly higher than the best so far.
 *
 * Stand-ins and additions, since hone has no embedding model or tokenizer here, and since ACE has no eviction:
 * - similarity is the cosine of word-count vectors (lower-cased letters and digits), not sentence-transformer
 *   embeddings; the merged text is the first bullet's (no LLM call inside a rule);
 * - tokens are estimated as ⌈characters / 4⌉ of the formatted playbook (upstream: tiktoken cl100k_base);
 * - `playbook_token_budget` = 80,000 is only told to the curator upstream; `fitBudget` enforces it by evicting bullets
 *   with the lowest helpful − harmful first, then the most harmful, then the oldest id, until the playbook fits;
 * - bullet text is kept on one line (newlines become spaces) and capped, so a curator cannot break the format;
 * - the text layout is canonical (one blank line between sections); lines that are neither headers nor bullets are
 *   not kept.
 */
export interface Bullet {
  id: string;
  helpful: number;
  harmful: number;
  content: string;
}

export interface Section {
  title: string;
  bullets: Bullet[];
}

export interface Playbook {
  sections: Section[];
}

export const ACE_SECTIONS = [
  "STRATEGIES & INSIGHTS",
  "FORMULAS & CALCULATIONS",
  "CODE SNIPPETS & TEMPLATES",
  "COMMON MISTAKES TO AVOID",
  "PROBLEM-SOLVING HEURISTICS",
  "CONTEXT CLUES & INDICATORS",
  "OTHERS",
] as const;

export const ACE_DEFAULTS = {
  maxReflectionRounds: 3,
  curatorFrequency: 1,
  tokenBudget: 80_000,
  dedupeThreshold: 0.9,
  maxOperations: 50,
  maxBulletChars: 2000,
} as const;

export const emptyPlaybook = (titles: readonly string[] = ACE_SECTIONS): Playbook => ({
  sections: titles.map((title) => ({ title, bullets: [] })),
});

/** A section's key: lower case, spaces to "_", "&" to "and". */
export const sectionKey = (title: string): string => title.trim().toLowerCase().replaceAll(" ", "_").replaceAll("&", "and");

const SLUGS: Record<string, string> = {
  financial_strategies_and_insights: "fin",
  formulas_and_calculations: "calc",
  code_snippets_and_templates: "code",
  common_mistakes_to_avoid: "err",
  problem_solving_heuristics: "prob",
  context_clues_and_indicators: "ctx",
  others: "misc",
  meta_strategies: "meta",
};

/** ACE's `get_section_slug`. */
export function sectionSlug(section: string): string {
  const key = sectionKey(section);
  if (SLUGS[key]) return SLUGS[key];
  const words = key.split("_").filter(Boolean);
  if (words.length <= 1) return (words[0] ?? "misc").slice(0, 4);
  return words
    .slice(0, 5)
    .map((w) => w[0])
    .join("");
}

const BULLET = /^\[([^\]]+)\]\s*helpful=(\d+)\s*harmful=(\d+)\s*::\s*(.*)$/;

export const formatBullet = (b: Bullet): string => `[${b.id}] helpful=${b.helpful} harmful=${b.harmful} :: ${b.content}`;

export function formatPlaybook(pb: Playbook): string {
  return pb.sections.map((s) => [`## ${s.title}`, ...s.bullets.map(formatBullet)].join("\n")).join("\n\n");
}

/** Reads a playbook's text (headers and bullets; bullets before the first header go to "general"). */
export function parsePlaybook(text: string, maxChars = 4_000_000): Playbook {
  if (text.length > maxChars) throw new RangeError(`the playbook is ${text.length} characters, more than ${maxChars}`);
  const sections: Section[] = [];
  let current: Section | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("##")) {
      current = { title: line.slice(2).trim(), bullets: [] };
      sections.push(current);
      continue;
    }
    const m = BULLET.exec(line);
    if (!m) continue;
    if (!current) {
      current = { title: "general", bullets: [] };
      sections.push(current);
    }
    current.bullets.push({ id: m[1] as string, helpful: Number(m[2]), harmful: Number(m[3]), content: m[4] as string });
  }
  return { sections };
}

const bullets = (pb: Playbook): Bullet[] => pb.sections.flatMap((s) => s.bullets);
const idNumber = (id: string): number => Number(/-(\d+)$/.exec(id)?.[1] ?? 0);

/** The next global bullet number (`get_next_global_id`). */
export const nextBulletNumber = (pb: Playbook): number => Math.max(0, ...bullets(pb).map((b) => idNumber(b.id))) + 1;

const clone = (pb: Playbook): Playbook => ({
  sections: pb.sections.map((s) => ({ title: s.title, bullets: s.bullets.map((b) => ({ ...b })) })),
});

export type BulletTag = { id?: unknown; bullet?: unknown; tag?: unknown };

/** The reflector's tags applied to the counters (`update_bullet_counts`). */
export function tagBullets(pb: Playbook, tags: readonly BulletTag[]): Playbook {
  const byId = new Map<string, unknown>();
  for (const t of tags) {
    const id = (typeof t.id === "string" && t.id) || (typeof t.bullet === "string" && t.bullet) || "";
    if (id) byId.set(id, t.tag ?? "neutral");
  }
  const out = clone(pb);
  for (const b of bullets(out)) {
    const tag = byId.get(b.id);
    if (tag === "helpful") b.helpful += 1;
    else if (tag === "harmful") b.harmful += 1;
  }
  return out;
}

export interface CuratorOperation {
  type: string;
  section?: string;
  content?: string;
  [field: string]: unknown;
}

/** ACE's whole-output check of the curator's reply (plus hone's caps); an error leaves the playbook unchanged. */
export function checkCuratorOutput(value: unknown): { operations: CuratorOperation[] } | { error: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { error: "the curator's reply is not a JSON object" };
  const v = value as Record<string, unknown>;
  if (!("reasoning" in v)) return { error: "JSON missing required 'reasoning' field" };
  if (!("operations" in v)) return { error: "JSON missing required 'operations' field" };
  if (typeof v.reasoning !== "string") return { error: "'reasoning' field must be a string" };
  if (!Array.isArray(v.operations)) return { error: "'operations' field must be a list" };
  if (v.operations.length > ACE_DEFAULTS.maxOperations)
    return { error: `${v.operations.length} operations, more than ${ACE_DEFAULTS.maxOperations}` };
  for (const [i, op] of v.operations.entries()) {
    if (typeof op !== "object" || op === null || Array.isArray(op)) return { error: `Operation ${i} must be a dictionary` };
    const o = op as Record<string, unknown>;
    if (!("type" in o) || typeof o.type !== "string") return { error: `Operation ${i} missing required 'type' field` };
    if (o.type === "ADD") {
      const missing = ["section", "content"].filter((f) => !(f in o));
      if (missing.length) return { error: `ADD operation ${i} missing fields: ${missing.join(", ")}` };
      if (typeof o.section !== "string" || typeof o.content !== "string")
        return { error: `ADD operation ${i}: section and content must be strings` };
    }
  }
  return { operations: v.operations as CuratorOperation[] };
}

const oneLine = (s: string): string => s.replace(/\s+/g, " ").trim().slice(0, ACE_DEFAULTS.maxBulletChars);

/** The curator's operations applied (`apply_curator_operations`): ADD only; the others are reported as ignored. */
export function applyOperations(
  pb: Playbook,
  operations: readonly CuratorOperation[],
  nextNumber = nextBulletNumber(pb),
): { playbook: Playbook; next: number; added: string[]; ignored: string[] } {
  const out = clone(pb);
  const added: string[] = [];
  const ignored: string[] = [];
  let next = nextNumber;
  let general = 0; // "general" bullets without a general section, inserted at the top of OTHERS in order
  for (const op of operations) {
    if (op.type !== "ADD") {
      ignored.push(op.type);
      continue;
    }
    let key = sectionKey(op.section ?? "general");
    const section = out.sections.find((s) => sectionKey(s.title) === key);
    if (!section && key !== "general") key = "others";
    const id = `${sectionSlug(key)}-${String(next).padStart(5, "0")}`;
    next += 1;
    let target = section ?? out.sections.find((s) => sectionKey(s.title) === "others");
    if (!target) {
      target = { title: "OTHERS", bullets: [] };
      out.sections.push(target);
    }
    const bullet = { id, helpful: 0, harmful: 0, content: oneLine(op.content ?? "") };
    if (!section && key === "general") target.bullets.splice(general++, 0, bullet);
    else target.bullets.push(bullet);
    added.push(id);
  }
  return { playbook: out, next, added, ignored };
}

const words = (s: string): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const w of s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
  return counts;
};

/** Cosine similarity of word-count vectors (the lexical stand-in for ACE's embedding similarity). */
export function similarity(a: string, b: string): number {
  const [x, y] = [words(a), words(b)];
  let dot = 0;
  for (const [w, n] of x) dot += n * (y.get(w) ?? 0);
  const norm = (m: Map<string, number>) => Math.sqrt([...m.values()].reduce((s, n) => s + n * n, 0));
  const d = norm(x) * norm(y);
  return d === 0 ? 0 : dot / d;
}

/** ACE's groups of similar bullets (indices into playbook order), each first index not yet grouped. */
export function duplicateGroups(
  list: readonly Bullet[],
  threshold: number = ACE_DEFAULTS.dedupeThreshold,
  sim: (a: string, b: string) => number = similarity,
): number[][] {
  const visited = new Set<number>();
  const groups: number[][] = [];
  for (let i = 0; i < list.length; i++) {
    if (visited.has(i)) continue;
    const similar: number[] = [];
    for (let j = i + 1; j < list.length; j++)
      if (sim((list[i] as Bullet).content, (list[j] as Bullet).content) >= threshold) similar.push(j);
    if (!similar.length) continue;
    const group = [i, ...similar];
    groups.push(group);
    for (const k of group) visited.add(k);
  }
  return groups;
}

/** De-duplicated playbook: each group merged into its first bullet (summed counters) or, without merge, reduced to it. */
export function dedupe(pb: Playbook, o: { threshold?: number; merge?: boolean } = {}): Playbook {
  const list = bullets(pb);
  const groups = duplicateGroups(list, o.threshold);
  const merged = new Map<number, Bullet>();
  const dropped = new Set<number>();
  for (const g of groups) {
    const [first, ...rest] = g as [number, ...number[]];
    if (o.merge ?? true) {
      const members = g.map((k) => list[k] as Bullet);
      const head = list[first] as Bullet;
      merged.set(first, {
        ...head,
        helpful: members.reduce((s, b) => s + b.helpful, 0),
        harmful: members.reduce((s, b) => s + b.harmful, 0),
      });
      for (const k of g) dropped.add(k);
    } else for (const k of rest) dropped.add(k);
  }
  let k = 0;
  return {
    sections: pb.sections.map((s) => ({
      title: s.title,
      bullets: s.bullets.flatMap((b) => {
        const at = k++;
        const m = merged.get(at);
        if (m) return [m];
        return dropped.has(at) ? [] : [{ ...b }];
      }),
    })),
  };
}

/** Estimated tokens of the formatted playbook (⌈characters / 4⌉). */
export const playbookTokens = (pb: Playbook): number => Math.ceil(formatPlaybook(pb).length / 4);

/** Evicts bullets (lowest helpful − harmful, then most harmful, then oldest) until the playbook fits the budget. */
export function fitBudget(pb: Playbook, budget: number = ACE_DEFAULTS.tokenBudget): { playbook: Playbook; evicted: Bullet[] } {
  const out = clone(pb);
  const evicted: Bullet[] = [];
  const order = bullets(out).sort(
    (a, b) => a.helpful - a.harmful - (b.helpful - b.harmful) || b.harmful - a.harmful || idNumber(a.id) - idNumber(b.id),
  );
  let chars = formatPlaybook(out).length;
  for (const victim of order) {
    if (Math.ceil(chars / 4) <= budget) break;
    const section = out.sections.find((s) => s.bullets.includes(victim)) as Section;
    section.bullets.splice(section.bullets.indexOf(victim), 1);
    chars -= formatBullet(victim).length + 1;
    evicted.push(victim);
  }
  return { playbook: out, evicted };
}

/** Whether the curator runs after this step (1-based steps, as ACE counts them). */
export const curatorDue = (step: number, frequency: number = ACE_DEFAULTS.curatorFrequency): boolean => step % frequency === 0;

/** How many reflect-and-retry rounds a step may use: up to 3 on a wrong answer; one tagging reflection on a right one. */
export const reflectionRounds = (correct: boolean, max: number = ACE_DEFAULTS.maxReflectionRounds): number => (correct ? 1 : max);

/** Offline training's `best_playbook` rule: a strictly higher validation accuracy. */
export const isNewBestPlaybook = (accuracy: number, best: number): boolean => accuracy > best;
