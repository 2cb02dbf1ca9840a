import { HoneError } from "../errors.ts";
import type { Method } from "./method.ts";
import { isMethodFolder } from "./method-ref.ts";

// biome-ignore lint/suspicious/noExplicitAny: each method has its own parameter type
type AnyMethod = Method<any>;

/**
 * Every built-in method by name, each imported only when a run uses it: a run uses one of twelve, and importing
 * all of them (with the external-method runner and, through it, the offline model's server) cost every
 * `hone optimize` and `hone replay` ~12% of the code it loads. registry.ts holds the same methods eagerly (for
 * `hone methods`, `hone compare`); a test keeps the two lists the same.
 */
export const METHOD_LOADERS: Record<string, () => Promise<AnyMethod>> = {
  harnessttt: async () => (await import("./methods/harnessttt.ts")).harnessttt,
  greedy: async () => (await import("./methods/greedy.ts")).greedy,
  random: async () => (await import("./methods/random.ts")).random,
  gepa: async () => (await import("./methods/gepa.ts")).gepa,
  ace: async () => (await import("./methods/ace.ts")).ace,
  skillopt: async () => (await import("./methods/skillopt.ts")).skillopt,
  dgm: async () => (await import("./methods/dgm.ts")).dgm,
  adas: async () => (await import("./methods/adas.ts")).adas,
  "meta-harness": async () => (await import("./methods/meta-harness.ts")).metaHarness,
  opro: async () => (await import("./methods/opro.ts")).opro,
  "evoprompt-ga": async () => (await import("./methods/evoprompt-ga.ts")).evopromptGa,
  "evoprompt-de": async () => (await import("./methods/evoprompt-de.ts")).evopromptDe,
};

/** Whether `name` is a built-in method's name. */
export const isBuiltinMethod = (name: string): boolean => Object.hasOwn(METHOD_LOADERS, name);

/** The refusal of a name that is neither a built-in method nor a method folder. */
export function unknownMethod(name: string): HoneError {
  return new HoneError(
    "usage",
    `unknown method "${name}"; hone methods lists ${Object.keys(METHOD_LOADERS).join(", ")} (or give a folder with method.json)`,
  );
}

const loaded = new Map<string, AnyMethod>();
let external: typeof import("./methods/external.ts") | undefined;

/** The method named `name` (a built-in's name, or a folder with method.json), its module imported on first use. */
export async function loadMethod(name: string): Promise<AnyMethod> {
  if (isMethodFolder(name)) {
    external ??= await import("./methods/external.ts");
    return external.externalMethod(name);
  }
  const load = isBuiltinMethod(name) ? METHOD_LOADERS[name] : undefined;
  if (!load) throw unknownMethod(name);
  const method = loaded.get(name) ?? (await load());
  loaded.set(name, method);
  return method;
}

/**
 * The method named `name`, already imported by `loadMethod` (a run loads its method as it starts): for the loop's
 * synchronous steps. An unknown name is refused as `loadMethod` refuses it.
 */
export function loadedMethod(name: string): AnyMethod {
  if (isMethodFolder(name)) {
    if (external) return external.externalMethod(name);
  } else {
    if (!isBuiltinMethod(name)) throw unknownMethod(name);
    const method = loaded.get(name);
    if (method) return method;
  }
  throw new Error(`method "${name}" was used before loadMethod() imported it`);
}

/** A method's parameters from flags or a config file, validated by its own schema with its defaults. */
export function methodParams(method: Method<unknown>, raw: Record<string, unknown> = {}): unknown {
  const r = method.params.safeParse(raw);
  if (!r.success)
    throw new HoneError(
      "usage",
      `bad parameters for ${method.name}: ${r.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`).join("; ")}`,
    );
  return r.data;
}
