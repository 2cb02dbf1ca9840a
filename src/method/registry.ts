import { methodParams, unknownMethod } from "./catalog.ts";
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

/**
 * Every method hone knows, imported together (`hone methods`, `hone compare`): one file under methods/, one line
 * here and one in catalog.ts, whose loaders import a single method for a run (a test keeps the two the same).
 */
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
  if (!m) throw unknownMethod(name);
  return m;
}

export { methodParams };
