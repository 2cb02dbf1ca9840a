import { parse as parseYaml } from "yaml";

// Candidates share most of their files (tool definitions, often agent.yaml), and a run loads each package several
// times (and asks each time whether it is a NexAU package); parsing YAML was the largest single cost of a replayed
// run. Keyed by the text, so an edit is never missed; each caller gets its own copy.
const parsed = new Map<string, unknown>();

/** `yaml`'s parse of `text` (at most 100 aliases, its default), from a cache of the texts seen; throws as it does. */
export function parseYamlCached(text: string): unknown {
  let value = parsed.get(text);
  if (value === undefined) {
    value = parseYaml(text, { maxAliasCount: 100 }) ?? null;
    if (parsed.size >= 512) parsed.clear();
    parsed.set(text, value);
  }
  return structuredClone(value);
}
