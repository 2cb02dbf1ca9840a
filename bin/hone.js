#!/bin/sh
':' //; case "$1" in optimize|train|compare|worker|eval|view|run) case " $NODE_OPTIONS " in *--max-semi-space-size*|*--max_semi_space_size*) ;; *) exec node --max-semi-space-size=8 "$0" "$@" ;; esac ;; esac; exec node "$0" "$@"
// The hone CLI: the bundle that `npm ci` builds into dist/ (plain JavaScript, fast to start) while it matches the
// sources, else straight from the TypeScript sources through tsx, so a checkout being edited needs no build step.
//
// Started as a program (`hone`, `npx hone`, ./bin/hone.js), the two lines above are a shell script that runs node on
// this file, for the verbs that run long (optimize, train, compare, worker, eval, view, run) with V8's young
// generation capped at 8 MB semi-spaces (V8's own cap is 16 MB): V8 doubles it whenever enough has survived since its
// last growth, which a longer run always reaches, so uncapped a run 4x as long held 1.24-1.29x the memory, capped
// 1.14x (1.12-1.18) at the same CPU (`npm run bench -- scaling`). The flag costs the bundled CLI ~20 ms a start
// whatever its value (measured with 16, V8's own; more the more a process loads), so the short verbs go without it.
// NODE_OPTIONS that sets it keeps the user's choice. Slurm's rollout jobs (one rollout each) start uncapped.
// To node the second line is a string and a comment; `node bin/hone.js` runs without the cap. biome.json leaves this
// file unformatted: its formatter would write that line as `":";`, which the shell cannot run.
import { freshBundle } from "./bundle.js";

const bundled = freshBundle("hone");
if (bundled) await import(bundled);
else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
