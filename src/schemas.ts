import { z } from "zod";
import { experimentSchema } from "./compare/experiment.ts";
import { agentSchema, toolFileSchema } from "./harness/schema.ts";
import { optimizeConfigSchema } from "./loop/optimize-config.ts";

/** JSON Schemas for editors, generated from the zod schemas (written to schemas/ by `npm run schema`). */
export function editorSchemas(): Record<string, unknown> {
  return {
    "agent.schema.json": { ...z.toJSONSchema(agentSchema, { io: "input" }), title: "hone harness agent.yaml" },
    "tool.schema.json": { ...z.toJSONSchema(toolFileSchema, { io: "input" }), title: "hone harness tools/<name>.tool.yaml" },
    "optimize.schema.json": { ...z.toJSONSchema(optimizeConfigSchema, { io: "input" }), title: "hone optimize --config file" },
    "experiment.schema.json": { ...z.toJSONSchema(experimentSchema, { io: "input" }), title: "hone compare experiment file" },
  };
}
