// A run is replayed or resumed only by the hone version that recorded it: a version's rules (what it sends a model,
// when it re-evaluates, what its task hash covers) decide which records a run holds, so another version's replay
// would meet records it never made, and a resume would mix two versions' decisions in one run.
import { HoneError } from "../errors.ts";
import { HONE_VERSION } from "../measure/identity.ts";
import { oneLine } from "../printable.ts";

/**
 * Refuses (exit 2) to `verb` the run in `dir` when another hone version recorded it (`recorded`, as
 * `recordedHoneVersion` read it from the run's hone.db while its caller had it open), naming both versions.
 */
export function refuseOtherVersion(dir: string, verb: "replay" | "resume", recorded: string | null): void {
  if (recorded === null || recorded === HONE_VERSION) return;
  // The recorded text is the run's (a run someone sent is untrusted): shown escaped and short.
  const then = oneLine(recorded.slice(0, 40));
  const what = verb === "replay" ? "replay it exactly" : "go on with it";
  throw new HoneError(
    "usage",
    `${dir} was recorded by hone ${then}, and this is hone ${HONE_VERSION}: another version's rules make other records, so only hone ${then} can ${what} (check out that version, or start a new run)`,
  );
}
