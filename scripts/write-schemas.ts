import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { editorSchemas } from "../src/schemas.ts";
import { draft07CheckSource } from "./json-schema-check.ts";

const ROOT = join(import.meta.dirname, "..");

/** Writes `text` unless the file already holds it: an unchanged generated source keeps its modification time, so the
 * CLI bundle built from it stays fresh (bin/bundle.js compares each source's size and time). */
function write(path: string, text: string): void {
  const file = join(ROOT, path);
  const same = existsSync(file) && readFileSync(file, "utf8") === text;
  if (!same) writeFileSync(file, text);
  console.log(`${same ? "unchanged" : "wrote"} ${path}`);
}

for (const [name, schema] of Object.entries(editorSchemas())) write(`schemas/${name}`, `${JSON.stringify(schema, null, 2)}\n`);
write("src/sandbox/draft07-check.generated.ts", draft07CheckSource());
