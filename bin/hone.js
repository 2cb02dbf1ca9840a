#!/bin/sh
':' //; case " $NODE_OPTIONS " in *--max-semi-space-size*) exec node "$0" "$@" ;; *) exec node --max-semi-space-size=8 "$0" "$@" ;; esac
// The hone CLI: the bundle that `npm ci` builds into dist/ (plain JavaScript, fast to start) while it matches the
// sources, else straight from the TypeScript sources through tsx, so a checkout being edited needs no build step.
//
// Started as a program (`hone`, `npx hone`, ./bin/hone.js), the two lines above are a shell script that runs node on
// this file with V8's young generation capped at 8 MB semi-spaces (V8's own cap is 16 MB): a long run then holds no
// more than a short one (`npm run bench -- scaling`: at 4x the rounds, hone's peak RSS 1.07-1.14x that at 1x, against
// 1.24-1.29x uncapped, at the same CPU), since V8 doubles the young generation whenever enough has survived since its
// last growth, which a longer run always reaches. NODE_OPTIONS that sets it keeps the user's choice. To node the
// second line is a string and a comment; `node bin/hone.js` runs without the cap. biome.json leaves this file
// unformatted: its formatter would write that line as `":";`, which the shell cannot run.
import { freshBundle } from "./bundle.js";

const bundled = freshBundle("hone");
if (bundled) await import(bundled);
else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
