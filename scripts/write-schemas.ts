import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { editorSchemas } from "../src/schemas.ts";
import { draft07CheckSource } from "./json-schema-check.ts";

const dir = join(import.meta.dirname, "..", "schemas");
for (const [name, schema] of Object.entries(editorSchemas())) {
  writeFileSync(join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote schemas/${name}`);
}
writeFileSync(join(import.meta.dirname, "..", "src", "sandbox", "draft07-check.generated.ts"), draft07CheckSource());
console.log("wrote src/sandbox/draft07-check.generated.ts");
