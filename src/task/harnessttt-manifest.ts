import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import * as z from "zod";
import { taskError, zodIssues } from "../errors.ts";

/**
 * HarnessTTT's task manifest (`MANIFEST_eft.json`, read by its src/inner/tasks/eft_task.py): `tasks` records in the
 * OpenEvolve/SkyDiscover layout, and `cross_referenced_tasks` in SimpleTES's layout (`use_path`). Paths are relative
 * to the manifest's folder (HarnessTTT's dataset root). Keys hone does not use (cost_tier, plan_family, …) are
 * kept out of the way, as HarnessTTT itself ignores what it does not read; `scorable: false` records are skipped.
 */
const TASK_ID = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, "use letters, digits, _ . and -");
const pathList = z.union([
  z
    .string()
    .min(1)
    .transform((p) => [p]),
  z.array(z.string().min(1)),
]);

const recordSchema = z
  .object({
    task_id: TASK_ID,
    rel_path: z.string().min(1),
    evaluator_rel: z.string().min(1).optional(),
    initial_program: z.string().min(1).nullish(),
    deps: z.array(z.string()).default([]),
    per_eval_timeout_s: z.number().positive().max(86_400).optional(),
    python_exe: z.string().min(1).optional(),
    extra_pythonpath: pathList.default([]),
    env: z.record(z.string(), z.string()).default({}),
    domain: z.string().optional(),
    scorable: z.boolean().optional(),
  })
  .passthrough();

const crossSchema = z.object({ task_id: TASK_ID, use_path: z.string().min(1) }).passthrough();

const fileSchema = z
  .object({ tasks: z.array(recordSchema).max(10_000), cross_referenced_tasks: z.array(crossSchema).max(10_000).default([]) })
  .passthrough();

/** What one record says about its task, in the names hone's own manifest entries use. */
export interface ManifestTask {
  id: string;
  dir: string;
  seed?: string;
  evaluator?: string;
  timeout?: number;
  python?: string;
  pythonPath: string[];
  env: Record<string, string>;
  domain?: string;
  /** HarnessTTT's deps: module names mixed with data tags (bundled_datasets, expert-load.json), shown, not checked. */
  declared: string[];
}

export const HARNESSTTT_MANIFEST = "MANIFEST_eft.json";
/** The largest manifest read (HarnessTTT's lists a few dozen tasks). */
const MAX_BYTES = 4 << 20;

function readJson(file: string): unknown {
  if (statSync(file).size > MAX_BYTES) throw taskError(file, undefined, `is larger than ${MAX_BYTES >> 20} MB`);
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw taskError(file, undefined, `is not valid JSON: ${(err as Error).message.split("\n")[0]}`);
  }
}

/** HarnessTTT adds its runtime shims to the evaluator's PYTHONPATH when the dataset ships them. */
function shim(root: string, name: string): string[] {
  const dir = join(root, "runtime", name);
  return existsSync(dir) ? [dir] : [];
}

/** Reads a HarnessTTT manifest into tasks; every problem names the record's field. */
export function readHarnessManifest(file: string): ManifestTask[] {
  const r = fileSchema.safeParse(readJson(file));
  if (!r.success) {
    const first = zodIssues(r.error.issues)[0];
    throw taskError(file, first?.field, first?.message ?? "invalid");
  }
  const root = dirname(resolve(file));
  const at = (p: string) => resolve(root, p);
  const tasks: ManifestTask[] = r.data.tasks
    .filter((t) => t.scorable !== false)
    .map((t) => {
      const dir = at(t.rel_path);
      return {
        id: t.task_id,
        dir,
        seed: t.initial_program ? resolve(dir, t.initial_program) : undefined,
        evaluator: t.evaluator_rel ? resolve(dir, t.evaluator_rel) : undefined,
        timeout: t.per_eval_timeout_s,
        python: t.python_exe,
        pythonPath: [...shim(root, "skydiscover_min"), ...t.extra_pythonpath.map(at)],
        env: t.env,
        domain: t.domain,
        declared: t.deps,
      };
    });
  for (const c of r.data.cross_referenced_tasks)
    tasks.push({ id: c.task_id, dir: at(c.use_path), pythonPath: shim(root, "simpletes_min"), env: {}, declared: [] });
  return tasks;
}
