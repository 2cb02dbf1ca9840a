import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

/** The first executable called `name` on PATH (as a shell would find it), or undefined. */
export function findExecutable(name: string, path = process.env.PATH ?? ""): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}
