// zod's issues about a package file, said as a package's author needs them: which field, what is wrong with it and
// what to write instead ("is missing; add it: …"), not zod's "Invalid input: expected string, received undefined".

/** The parts of a zod (v4) issue this reads; every issue has a path and a message, the rest depends on its code. */
export interface ZodIssueLike {
  code?: string;
  path: readonly PropertyKey[];
  message: string;
  expected?: string;
  values?: readonly unknown[];
  keys?: readonly string[];
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
}

/** What a field holds, for the fields whose author most often leaves them out. */
const HINTS: Record<string, string> = {
  name: "the harness's name: up to 64 lowercase letters, digits, - and _",
  yaml_path: "the tool file's path in the package, such as tools/<name>.tool.yaml",
  import: "hone:<middleware> (budget_reminder, stall_restart, long_tool_output, …) or a middlewares/<name>.js file",
  description: "one or two sentences saying what it is for",
  input_schema: "a JSON Schema whose type is object, such as {type: object, properties: {}}",
  path: "the skill's folder in the package, such as skills/<name>",
  entrypoint: "the command that runs the harness program",
};

const NAMES: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  array: "a list",
  object: "a mapping",
  record: "a mapping",
};

/** What a value is, said briefly: a scalar as itself (cut at 40 characters), a collection by its kind. */
function typeName(v: unknown): string {
  if (v === null) return "empty (null)";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  const shown = JSON.stringify(v) ?? String(v);
  return shown.length > 40 ? `${shown.slice(0, 40)}…` : shown;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const k of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

const fieldOf = (path: readonly PropertyKey[]) => path.map(String).join(".") || "(top level)";

function sizeText(i: ZodIssueLike, bound: number | bigint, small: boolean): string {
  const n = Number(bound);
  if (i.origin === "string")
    return small && n === 1 ? "must not be empty" : `must be ${small ? "at least" : "at most"} ${n} characters`;
  if (i.origin === "array")
    return small && n === 1 ? "must list at least one entry" : `must list ${small ? "at least" : "at most"} ${n} entries`;
  const op = small ? (i.inclusive === false ? "greater than" : "at least") : i.inclusive === false ? "less than" : "at most";
  return `must be ${op} ${n}`;
}

/**
 * One problem per issue (one per key for unknown keys), each with the field (dotted path) and a message that says
 * what to do. `value` is what was validated, to tell a missing field from one of the wrong type. `what` names the
 * file's kind for unknown keys ("an agent.yaml field").
 */
export function packageIssues(
  issues: readonly ZodIssueLike[],
  value: unknown,
  what = "a field of this file",
): { field: string; message: string }[] {
  const out: { field: string; message: string }[] = [];
  for (const i of issues) {
    const last = String(i.path[i.path.length - 1] ?? "");
    if (i.code === "unrecognized_keys" && i.keys) {
      for (const k of i.keys)
        out.push({ field: fieldOf([...i.path, k]), message: `is not ${what}; remove it (or check its spelling)` });
      continue;
    }
    let message = i.message;
    if (i.code === "invalid_type") {
      const got = valueAt(value, i.path);
      const want = NAMES[i.expected ?? ""] ?? i.expected ?? "another value";
      const hint = HINTS[last];
      message =
        got === undefined
          ? `is missing; add it (${hint ?? want})`
          : `must be ${want}, not ${typeName(got)}${hint ? ` (${hint})` : ""}`;
    } else if (i.code === "invalid_value" && i.values) {
      const got = valueAt(value, i.path);
      const allowed = i.values.map((v) => JSON.stringify(v)).join(" or ");
      message = got === undefined ? `is missing; add it (${allowed})` : `is ${JSON.stringify(got)}; it must be ${allowed}`;
    } else if (i.code === "too_small" && i.minimum !== undefined) message = sizeText(i, i.minimum, true);
    else if (i.code === "too_big" && i.maximum !== undefined) message = sizeText(i, i.maximum, false);
    else if (i.code === "invalid_union" && i.path[0] === "skills")
      message = "must be a skill folder's path (skills/<name>) or {name, path}";
    else if (i.code === "invalid_union") message = "is not one of the shapes this field takes";
    out.push({ field: fieldOf(i.path), message });
  }
  return out;
}
