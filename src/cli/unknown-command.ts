import type { Command } from "commander";
import { nearestName } from "../nearest-name.ts";

/**
 * A verb that does something itself and also has subcommands (`hone tasks` and `tasks show`, `hone datasets` and
 * `datasets fetch`) takes no words of its own, so a word after it is a mistyped subcommand: say so, with the nearest
 * names, as commander does for verbs without an action (its own message would be "too many arguments"). Applied to
 * every verb under `program` once all are registered (commander itself answers for a verb without an action).
 */
export function refuseUnknownSubcommands(program: Command): void {
  for (const verb of program.commands) {
    refuseUnknownSubcommands(verb);
    if (verb.commands.length > 0 && verb.registeredArguments.length === 0) refuseWordsOf(verb);
  }
}

function refuseWordsOf(cmd: Command): void {
  cmd.allowExcessArguments(true);
  cmd.hook("preAction", (_hooked, actionCommand) => {
    if (actionCommand !== cmd || cmd.args.length === 0) return;
    const word = String(cmd.args[0]);
    const names = cmd.commands.map((c) => c.name());
    const near = nearestName(word, names);
    const hint = near
      ? `\n(Did you mean ${near}?)`
      : `\n(the commands of hone ${cmd.name()}: ${names.join(", ")}; \`hone ${cmd.name()}\` alone does its own work: see --help)`;
    cmd.error(`error: unknown command '${word}'${hint}`, { code: "commander.unknownCommand" });
  });
}

/**
 * `hone run --taks circle-packing`: commander checks required options before unknown ones, so the typo itself would
 * be answered "required option '--task' not specified" with no word of the flag that was mistyped. Required options
 * are checked here instead, after commander has refused (with a suggestion) every unknown option: the same message,
 * the same exit code, in the order a person fixes them.
 */
export function checkRequiredOptionsLast(cmd: Command): void {
  for (const sub of cmd.commands) checkRequiredOptionsLast(sub);
  const required = cmd.options.filter((o) => o.mandatory);
  if (required.length === 0) return;
  for (const o of required) o.makeOptionMandatory(false);
  cmd.hook("preAction", (_hooked, actionCommand) => {
    if (actionCommand !== cmd) return;
    const missing = required.find((o) => cmd.getOptionValue(o.attributeName()) === undefined);
    if (missing)
      cmd.error(`error: required option '${missing.flags}' not specified`, { code: "commander.missingMandatoryOptionValue" });
  });
}
