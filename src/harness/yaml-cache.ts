import { type CST, Parser, parseDocument } from "yaml";

// Candidates share most of their files (tool definitions, often agent.yaml), and a run loads each package several
// times (and asks each time whether it is a NexAU package); parsing YAML was the largest single cost of a replayed
// run. Keyed by the text, so an edit is never missed; each caller gets its own copy.
const parsed = new Map<string, unknown>();

/** A package's YAML (agent.yaml, tool files, SKILL.md frontmatter) nests at most this many collections deep. */
export const MAX_YAML_DEPTH = 64;

/** `yaml`'s parse of `text` (at most 100 aliases, its default), from a cache of the texts seen; throws as it does. */
export function parseYamlCached(text: string): unknown {
  let value = parsed.get(text);
  if (value === undefined) {
    value = parseStrictYaml(text) ?? null;
    if (parsed.size >= 512) parsed.clear();
    parsed.set(text, value);
  }
  return structuredClone(value);
}

/** YAML that parses but is refused as a package's (too deep, aliases expanding too far): its message says why. */
export class YamlRefused extends Error {}

/** The reason a package's YAML file is refused, after the file's name: "is not valid YAML: …" or a YamlRefused's own. */
export const yamlProblem = (err: unknown) =>
  err instanceof YamlRefused ? err.message : `is not valid YAML: ${(err as Error).message.split("\n")[0]}`;

const lineOf = (text: string, offset: number) => text.slice(0, offset).split("\n").length;
const tooDeep = (where: string) =>
  new YamlRefused(
    `is nested more than ${MAX_YAML_DEPTH} levels deep (mappings and lists inside each other) ${where}; a package's YAML is never that deep: flatten it`,
  );

/**
 * Throws where a collection of `text` is nested past MAX_YAML_DEPTH. Walked on `yaml`'s concrete syntax tree (its
 * parser keeps a stack, not the call stack) with a stack of our own, before the document is composed: composing
 * recurses once per level, so a file of ten thousand `[` would otherwise end in "Maximum call stack size exceeded".
 */
function checkSyntaxDepth(text: string): void {
  const stack: [CST.Token, number][] = [];
  for (const token of new Parser().parse(text)) stack.push([token, 0]);
  while (stack.length > 0) {
    const [token, depth] = stack.pop() as [CST.Token, number];
    if (token.type === "document" && token.value) stack.push([token.value, depth]);
    if (token.type !== "block-map" && token.type !== "block-seq" && token.type !== "flow-collection") continue;
    if (depth + 1 > MAX_YAML_DEPTH) throw tooDeep(`at line ${lineOf(text, token.offset)}`);
    for (const item of token.items as { key?: CST.Token | null; value?: CST.Token }[]) {
      if (item.key) stack.push([item.key, depth + 1]);
      if (item.value) stack.push([item.value, depth + 1]);
    }
  }
}

/** Throws where the value (aliases expanded: an alias nests its anchor's value again) is nested past MAX_YAML_DEPTH. */
function checkValueDepth(value: unknown): void {
  const stack: [unknown, number][] = [[value, 0]];
  // An aliased value is one object reached from many places: walked again only when reached deeper than before, so
  // each object is walked at most MAX_YAML_DEPTH times however often it is aliased.
  const deepest = new Map<object, number>();
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== "object" || v === null) continue;
    if (depth + 1 > MAX_YAML_DEPTH) throw tooDeep("once its aliases (*name) are expanded");
    if ((deepest.get(v) ?? -1) >= depth) continue;
    deepest.set(v, depth);
    for (const child of v instanceof Map ? v.values() : Object.values(v)) stack.push([child, depth + 1]);
  }
}

/**
 * `yaml`'s parse of `text`, at most 100 aliases, nested at most MAX_YAML_DEPTH, refusing what it warns about: a tag
 * it cannot resolve (`!!js/function`, `!custom`) is read by `yaml` as plain text with a warning on stderr, where
 * NexAU's reader (PyYAML's `safe_load`) refuses the file; a package is refused here too, naming the tag and its line.
 */
export function parseStrictYaml(text: string): unknown {
  checkSyntaxDepth(text);
  const doc = parseDocument(text);
  const [problem] = [...doc.errors, ...doc.warnings];
  if (problem) {
    const what =
      problem.code === "TAG_RESOLVE_FAILED"
        ? `${problem.message.split(" at line")[0]} (PyYAML's safe_load refuses it too; remove the tag)`
        : problem.message.split("\n")[0];
    throw new Error(`${what} at line ${problem.linePos?.[0].line ?? "?"}`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    if (!(err instanceof ReferenceError) || !/alias count/i.test(err.message)) throw err;
    throw new YamlRefused(
      "uses aliases (*name) that would expand past 100 copies of their anchors (a resource-exhaustion pattern); write the values out",
    );
  }
  checkValueDepth(value);
  return value;
}
