import { parseDocument } from "yaml";

// Candidates share most of their files (tool definitions, often agent.yaml), and a run loads each package several
// times (and asks each time whether it is a NexAU package); parsing YAML was the largest single cost of a replayed
// run. Keyed by the text, so an edit is never missed; each caller gets its own copy.
const parsed = new Map<string, unknown>();

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

/**
 * `yaml`'s parse of `text`, at most 100 aliases, refusing what it warns about: a tag it cannot resolve (`!!js/function`,
 * `!custom`) is read by `yaml` as plain text with a warning on stderr, where NexAU's reader (PyYAML's `safe_load`)
 * refuses the file; a package is refused here too, naming the tag and its line.
 */
export function parseStrictYaml(text: string): unknown {
  const doc = parseDocument(text);
  const [problem] = [...doc.errors, ...doc.warnings];
  if (problem) {
    const what =
      problem.code === "TAG_RESOLVE_FAILED"
        ? `${problem.message.split(" at line")[0]} (PyYAML's safe_load refuses it too; remove the tag)`
        : problem.message.split("\n")[0];
    throw new Error(`${what} at line ${problem.linePos?.[0].line ?? "?"}`);
  }
  return doc.toJS({ maxAliasCount: 100 });
}
