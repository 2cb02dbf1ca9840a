import { parseDocument } from "yaml";
import { YamlRefused, yamlNestedPast } from "../yaml-depth.ts";

export { YamlRefused, yamlProblem } from "../yaml-depth.ts";

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

const tooDeep = (where: string) =>
  new YamlRefused(
    `is nested more than ${MAX_YAML_DEPTH} levels deep (mappings and lists inside each other) ${where}; a package's YAML is never that deep: flatten it`,
  );

/** Throws where a collection of `text` is nested past MAX_YAML_DEPTH, before the document is composed. */
function checkSyntaxDepth(text: string): void {
  const line = yamlNestedPast(text, MAX_YAML_DEPTH);
  if (line !== undefined) throw tooDeep(`at line ${line}`);
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
