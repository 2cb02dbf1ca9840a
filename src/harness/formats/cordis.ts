import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The gray311/Self_Adapt_Harness commit whose `src/inner/harness` is in the NexAU layout hone reads. */
export const HARNESSTTT_NEXAU_COMMIT = "bebde8e";

/**
 * Why a folder is not a package hone reads, when it is a Cordis package (`cordis.yml` with `plugins/*.mjs`: the
 * layout HarnessTTT's inner harness moved to after commit bebde8e) and has no agent.yaml; undefined otherwise.
 */
export function cordisRefusal(dir: string): string | undefined {
  if (existsSync(join(dir, "agent.yaml")) || !existsSync(join(dir, "cordis.yml"))) return undefined;
  const plugins = join(dir, "plugins");
  const mjs =
    existsSync(plugins) && statSync(plugins).isDirectory() ? readdirSync(plugins).filter((f) => f.endsWith(".mjs")) : [];
  const what = mjs.length > 0 ? `cordis.yml with plugins/${mjs[0]}` : "cordis.yml";
  return (
    `is a Cordis package (${what}), HarnessTTT's newer inner-harness layout, which hone does not read. hone reads ` +
    `HarnessTTT's NexAU layout (agent.yaml, tools/*.tool.yaml, custom_tools/*.py, middleware/*.py): check out ` +
    `src/inner/harness as it is at gray311/Self_Adapt_Harness commit ${HARNESSTTT_NEXAU_COMMIT} ` +
    `(git checkout ${HARNESSTTT_NEXAU_COMMIT} -- src/inner/harness) and give hone that folder`
  );
}
