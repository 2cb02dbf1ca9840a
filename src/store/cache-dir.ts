import { homedir } from "node:os";
import { join } from "node:path";

/** hone's cache folder (the request cache, interpreter probes): HONE_CACHE_DIR, else $XDG_CACHE_HOME/hone, else ~/.cache/hone. */
export function honeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HONE_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "hone");
}
