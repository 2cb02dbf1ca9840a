import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { HoneError } from "../errors.ts";
import { CONSOLE_DIST } from "./server.ts";

const PROJECT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** `npm ci` builds the pages (`prepare`); a checkout that skipped scripts gets them built once, here. */
export async function ensureConsoleBuilt(): Promise<void> {
  if (existsSync(join(CONSOLE_DIST, "index.html"))) return;
  process.stderr.write("hone view: building the console pages once (npm run build:console)…\n");
  const r = spawnSync("npm", ["run", "--silent", "build:console"], { cwd: PROJECT, stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0 || !existsSync(join(CONSOLE_DIST, "index.html")))
    throw new HoneError(
      "internal",
      `could not build the console pages; run \`npm run build:console\` in ${PROJECT} and read its errors`,
    );
}
