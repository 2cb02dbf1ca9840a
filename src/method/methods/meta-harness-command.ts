// Meta-Harness's proposer as a coding-agent command (Claude Code's `claude -p`, `codex exec`, or any program that
// speaks the same interface): run sealed in the log folder, through hone's model proxy, writing harness folders.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import * as z from "zod";
import { HoneError } from "../../errors.ts";
import { startModelProxy } from "../../model/proxy.ts";
import type { ChatModel } from "../../model/types.ts";
import { readUntrusted } from "../../runtime/program-harness.ts";
import { modelBaseUrl, modelPort, runSealed } from "../../task/sealed-command.ts";
import { isExecutableFile } from "../../which.ts";
import { type ExternalProposal, readProposals } from "../external.ts";

/** Where a sealed command looks for its program (runSealed's PATH, but for the interpreter's own folder). */
export const SEALED_PATH = ["/usr/local/bin", "/usr/bin", "/bin"];

/**
 * A command line split into words as a POSIX shell splits a simple command: spaces separate words, '…' keeps
 * everything literally, "…" and a backslash escape; no variables, globs or operators. Linear in its length.
 */
export function splitCommand(line: string): string[] | string {
  const words: string[] = [];
  let word = "";
  let started = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else word += ch;
    } else if (ch === "\\" && i + 1 < line.length && (quote === undefined || /["\\$`]/.test(line[i + 1] as string))) {
      word += line[++i];
      started = true;
    } else if (quote === '"') {
      if (ch === '"') quote = undefined;
      else word += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      started = true;
    } else if (/\s/.test(ch)) {
      if (started) words.push(word);
      word = "";
      started = false;
    } else {
      word += ch;
      started = true;
    }
  }
  if (quote) return `an unclosed ${quote} quote`;
  if (started) words.push(word);
  return words.length ? words : "an empty command";
}

/** The program a command's first word names, as the sealed command will find it; undefined when it is not there. */
export function findProgram(word: string): string | undefined {
  if (word.includes("/")) {
    const p = resolve(word);
    return isExecutableFile(p) ? p : undefined;
  }
  return SEALED_PATH.map((d) => join(d, word)).find(isExecutableFile);
}

/** How the coding agents Meta-Harness is used with are installed. */
const INSTALL: Record<string, string> = {
  claude: "npm install -g @anthropic-ai/claude-code",
  codex: "npm install -g @openai/codex",
};

/** Why a command cannot be run (not splittable, or its program not installed where the sealed proposer looks). */
export function commandProblem(line: string): string | undefined {
  const argv = splitCommand(line);
  if (typeof argv === "string") return `cannot read the command: ${argv}`;
  const word = argv[0] as string;
  if (findProgram(word)) return undefined;
  if (word.includes("/")) return `${resolve(word)} (the command "${line.slice(0, 200)}") is not an executable file`;
  const install = INSTALL[word] ? ` (${INSTALL[word]})` : "";
  return `the command "${line.slice(0, 200)}" cannot run: "${word}" is not installed in ${SEALED_PATH.join(", ")}, where the sealed proposer looks. Install it there${install}, give its full path in --param command, or leave out --param command to use hone's own meta-agent call`;
}

/**
 * The host folders the sealed command must see read-only: its program's folder when it is not a system program, and
 * the folder of each argument that is an absolute path to an existing file (`python3 /opt/agent/main.py`).
 */
export function visibleFolders(program: string, args: readonly string[]): string[] {
  const system = (p: string) => p.startsWith("/usr/") || SEALED_PATH.some((d) => p.startsWith(`${d}/`));
  const files = args.filter((a) => isAbsolute(a) && existsSync(a) && statSync(a).isFile());
  return [...new Set([program, ...files].filter((p) => !system(p)).map((p) => dirname(p)))];
}

const extraSchema = z
  .object({
    hypothesis: z.string().max(4000).optional(),
    axis: z.string().max(200).optional(),
    changes: z.string().max(4000).optional(),
  })
  .passthrough();

export interface CommandProposal extends ExternalProposal {
  hypothesis?: string;
  axis?: string;
  changes?: string;
}

/**
 * Runs the command once in `work` (the log folder, writable; its HOME and TMPDIR a folder of their own) with the task
 * prompt as its last argument, the proposer reachable only through the model proxy (OPENAI_BASE_URL, a one-run
 * OPENAI_API_KEY, HONE_MODEL), then reads `work/new/<name>/` folders as external.ts's readProposals does (no links,
 * bounded, a known parent in proposal.json), copied into `into`.
 */
export async function runProposerCommand(o: {
  command: string;
  prompt: string;
  work: string;
  into: string;
  known: ReadonlySet<string>;
  timeoutSec: number;
  proposer: { chat: ChatModel; model: string };
}): Promise<{ proposals: CommandProposal[]; refused: string[] }> {
  const argv = splitCommand(o.command);
  const problem = commandProblem(o.command);
  if (typeof argv === "string" || problem) throw new HoneError("usage", `meta-harness: --param command: ${problem}`);
  const program = findProgram(argv[0] as string) as string;
  const home = mkdtempSync(join(tmpdir(), "hone-mh-home-"));
  const proxy = await startModelProxy(o.proposer.chat, o.proposer.model);
  const port = await modelPort();
  try {
    const proc = await runSealed({
      argv: [program, ...argv.slice(1), o.prompt],
      readOnly: visibleFolders(program, argv.slice(1)),
      writable: [o.work, home],
      cwd: o.work,
      env: {
        HONE_MODEL: o.proposer.model,
        OPENAI_API_KEY: proxy.token,
        OPENAI_BASE_URL: modelBaseUrl(port),
        HOME: home,
        TMPDIR: home,
      },
      timeoutMs: o.timeoutSec * 1000,
      modelSocketDir: proxy.socketDir,
      modelPort: port,
    });
    const tail = proc.stderr.trim().split("\n").slice(-3).join(" | ");
    if (proc.timedOut)
      throw new HoneError("runFailed", `meta-harness: the proposer command did not finish within ${o.timeoutSec} s`);
    if (proc.code !== 0)
      throw new HoneError("runFailed", `meta-harness: the proposer command exited with code ${proc.code}: ${tail}`);
    const out = join(o.work, "new");
    if (!existsSync(out) || !lstatSync(out).isDirectory())
      throw new HoneError(
        "runFailed",
        `meta-harness: the proposer command left no new/ folder (a folder, not a link) in its work folder`,
      );
    mkdirSync(o.into, { recursive: true });
    const read = readProposals(out, o.into, o.known);
    const proposals = read.proposals.map((p) => {
      const text = readUntrusted(join(o.work, "new", p.name, "proposal.json"), 64 << 10);
      let extra: z.infer<typeof extraSchema> = {};
      try {
        const r = extraSchema.safeParse(text === undefined ? {} : JSON.parse(text));
        if (r.success) extra = r.data;
      } catch {
        // readProposals already parsed it; a change since is ignored
      }
      return { ...p, hypothesis: extra.hypothesis, axis: extra.axis, changes: extra.changes };
    });
    return { proposals, refused: read.refused };
  } finally {
    await proxy.close();
    rmSync(home, { recursive: true, force: true });
  }
}
