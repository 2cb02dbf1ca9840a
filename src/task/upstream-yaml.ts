import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { YamlRefused, yamlNestedPast } from "../yaml-depth.ts";

// An upstream framework's config file (OpenEvolve's, SkyDiscover's config.yaml) as that framework reads it. They read
// it with PyYAML's safe_load, which takes what the YAML spec (and the yaml package) refuses in a few real files: a
// multi-line double-quoted string whose lines sit at its key's indentation (OpenEvolve's attention_optimization). A
// file the yaml package refuses is read again by PyYAML when python3 has it.

/** The largest config text handed to PyYAML, and the largest JSON taken back (aliases can multiply it). */
const MAX_TEXT_BYTES = 1 << 20;
const MAX_JSON_BYTES = 16 << 20;
const PYYAML_TIMEOUT_MS = 10_000;

/**
 * PyYAML's reading as JSON: under a memory limit, and written out a piece at a time up to MAX_JSON_BYTES, since an
 * alias repeated at every level of a small file (a "billion laughs") is one object to PyYAML and a huge one as JSON.
 */
const LOAD = `import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
try:
    import yaml
except ImportError:
    sys.exit(3)
try:
    value = yaml.safe_load(sys.stdin.read())
except yaml.YAMLError as e:
    sys.stderr.write(str(e).splitlines()[0] if str(e) else "not valid YAML")
    sys.exit(4)
left = ${MAX_JSON_BYTES}
try:
    for piece in json.JSONEncoder(default=str).iterencode(value):
        left -= len(piece)
        if left < 0:
            sys.exit(5)
        sys.stdout.write(piece)
except (MemoryError, RecursionError):
    sys.exit(5)`;

/** The file's value as PyYAML reads it, or why it cannot say (no python3, no PyYAML, its own refusal). */
function pyYaml(text: string, python: string): { value: unknown } | { why: string } {
  if (Buffer.byteLength(text) > MAX_TEXT_BYTES) return { why: "it is too large to read again with PyYAML" };
  const r = spawnSync(python, ["-I", "-c", LOAD], {
    input: text,
    encoding: "utf8",
    timeout: PYYAML_TIMEOUT_MS,
    maxBuffer: MAX_JSON_BYTES + 1024,
  });
  // The exit status first: a python that ends without reading its input leaves the write an EPIPE.
  if (r.status === 3) return { why: `PyYAML, which the upstream framework reads it with, is not installed for ${python}` };
  if (r.status === 5) return { why: "PyYAML reads it as a value too large to take" };
  if (r.status === 4) return { why: `PyYAML refuses it too: ${r.stderr.trim().slice(0, 300)}` };
  if (r.status !== 0)
    return { why: `${python} could not read it with PyYAML (${r.error?.message ?? r.signal ?? `exit ${r.status}`})` };
  try {
    return { value: JSON.parse(r.stdout) };
  } catch {
    return { why: "PyYAML's reading could not be taken back" };
  }
}

/** The deepest a task's YAML (config.yaml, hone.yaml, tasks.yaml) nests collections; OpenEvolve's nest three. */
export const MAX_TASK_YAML_DEPTH = 64;

/** Refuses, before it is composed, YAML whose collections nest past MAX_TASK_YAML_DEPTH (a stack-exhaustion attack). */
function checkTaskYamlDepth(text: string): void {
  const line = yamlNestedPast(text, MAX_TASK_YAML_DEPTH);
  if (line !== undefined)
    throw new YamlRefused(
      `is refused: its mappings and lists nest inside each other more than ${MAX_TASK_YAML_DEPTH} levels deep (at line ${line}); hone reads a task's YAML at most ${MAX_TASK_YAML_DEPTH} levels deep (OpenEvolve's own configs nest three): flatten it`,
    );
}

/** A task's own YAML (hone.yaml, tasks.yaml) as the yaml package reads it, its depth checked first. */
export function parseTaskYaml(text: string): unknown {
  checkTaskYamlDepth(text);
  return parseYaml(text);
}

/**
 * An upstream config file's value (an empty file is {}): the yaml package's reading, else PyYAML's (with `python`).
 * Throws the yaml package's error, with why PyYAML could not read it either.
 */
export function readUpstreamYaml(file: string, python = "python3"): unknown {
  const text = readFileSync(file, "utf8");
  checkTaskYamlDepth(text);
  try {
    return parseYaml(text, { logLevel: "error" }) ?? {};
  } catch (err) {
    // A file the yaml package refuses for its aliases (a resource-exhaustion attack) is refused, not read again.
    if ((err as { code?: string }).code === "ALIAS_COUNT" || /alias count/i.test((err as Error).message)) throw err;
    const again = pyYaml(text, python);
    if ("value" in again) return again.value ?? {};
    throw new Error(`${(err as Error).message.split("\n")[0]} (${again.why})`);
  }
}
