import { HoneError } from "../errors.ts";
import type { Method } from "./method.ts";
import { isMethodFolder } from "./method-ref.ts";
import { ace } from "./methods/ace.ts";
import { adas } from "./methods/adas.ts";
import { dgm } from "./methods/dgm.ts";
import { evopromptDe } from "./methods/evoprompt-de.ts";
import { evopromptGa } from "./methods/evoprompt-ga.ts";
import { externalMethod } from "./methods/external.ts";
import { gepa } from "./methods/gepa.ts";
import { greedy } from "./methods/greedy.ts";
import { harnessttt } from "./methods/harnessttt.ts";
import { metaHarness } from "./methods/meta-harness.ts";
import { opro } from "./methods/opro.ts";
import { random } from "./methods/random.ts";
import { skillopt } from "./methods/skillopt.ts";

/** Every method hone knows: one file under methods/ and one line here. */
// biome-ignore lint/suspicious/noExplicitAny: each method has its own parameter type
export const METHODS: Record<string, Method<any>> = {
  harnessttt,
  greedy,
  random,
  gepa,
  ace,
  skillopt,
  dgm,
  adas,
  "meta-harness": metaHarness,
  opro,
  "evoprompt-ga": evopromptGa,
  "evoprompt-de": evopromptDe,
};

// biome-ignore lint/suspicious/noExplicitAny: each method has its own parameter type
export function methodByName(name: string): Method<any> {
  if (isMethodFolder(name)) return externalMethod(name);
  const m = METHODS[name];
  if (!m)
    throw new HoneError(
      "usage",
      `unknown method "${name}"; hone methods lists ${Object.keys(METHODS).join(", ")} (or give a folder with method.json)`,
    );
  return m;
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
