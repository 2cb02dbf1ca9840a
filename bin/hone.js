#!/usr/bin/env node
// The hone CLI runs straight from the TypeScript sources through tsx, so a fresh clone needs no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
