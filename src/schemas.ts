import * as z from "zod";
import { experimentSchema } from "./compare/experiment.ts";
import { agentSchema, toolFileSchema } from "./harness/schema.ts";
import { optimizeConfigSchema } from "./loop/optimize-config.ts";
import { trainConfigSchema } from "./loop/train-config.ts";
import { honeTaskSchema } from "./task/discovery-task.ts";
import { manifestSchema } from "./task/registry.ts";

/**
 * JSON Schemas for editors, one per config file hone reads, generated from the zod schemas that validate them
 * (written to schemas/ by `npm run schema`; a test checks they are current). A new config file is one line here.
 */
export function editorSchemas(): Record<string, unknown> {
  const schema = (s: z.ZodType, title: string) => ({ ...z.toJSONSchema(s, { io: "input" }), title });
  return {
    "agent.schema.json": schema(agentSchema, "hone harness agent.yaml"),
    "tool.schema.json": schema(toolFileSchema, "hone harness tools/<name>.tool.yaml"),
    "optimize.schema.json": schema(optimizeConfigSchema, "hone optimize --config file (hone.yaml)"),
    "train.schema.json": schema(trainConfigSchema, "hone train --config file (train.yaml)"),
    "task.schema.json": schema(honeTaskSchema, "hone.yaml of a discovery task folder"),
    "tasks.schema.json": schema(manifestSchema, "tasks.yaml: a folder of task folders (--tasks-dir)"),
    "experiment.schema.json": schema(experimentSchema, "hone compare experiment file"),
  };
}
