import { type Browser, chromium } from "playwright-core";
import { chromiumPath } from "./requires.ts";

export const CHROMIUM = chromiumPath() ?? "/usr/bin/chromium";
export const haveChromium = chromiumPath() !== undefined;

/** Debian's chromium, headless, with the flags this machine's closed network needs (no background connections). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
