import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
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

/**
 * Where a folder has no agent.yaml but holds a NexAU agent config under another name (NexAU's own examples name
 * theirs code_agent.yaml, leader_agent.yaml, …: `type: agent` at the top level), what to do; "" otherwise.
 */
export function otherAgentConfigHint(dir: string): string {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((f) => /\.ya?ml$/.test(f) && f !== "agent.yaml")
      .sort();
  } catch {
    return "";
  }
  const found: string[] = [];
  for (const name of names.slice(0, 50)) {
    const file = join(dir, name);
    try {
      const st = lstatSync(file);
      if (!st.isFile() || st.size > 1024 * 1024) continue;
      if (/^type:[ \t]*["']?agent["']?[ \t]*(#.*)?$/m.test(readFileSync(file, "utf8"))) found.push(name);
    } catch {}
  }
  if (found.length === 0) return "";
  const list = found.slice(0, 5).join(", ");
  return `; ${list} here ${found.length === 1 ? "is a NexAU agent config" : "are NexAU agent configs"} under another name: hone reads a package's agent from agent.yaml, so copy the one to run to ${join(dir, "agent.yaml")}`;
}
