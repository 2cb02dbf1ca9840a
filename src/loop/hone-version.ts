// A run is replayed or resumed only by the hone version that recorded it: a version's rules (what it sends a model,
// when it re-evaluates, what its task hash covers) decide which records a run holds, so another version's replay
// would meet records it never made, and a resume would mix two versions' decisions in one run.
import { join } from "node:path";
import { HoneError } from "../errors.ts";
import { oneLine } from "../harness/printable.ts";
import { HONE_VERSION } from "../measure/identity.ts";
import { openDb } from "../store/db.ts";
import { recordedHoneVersion } from "../store/receipts.ts";

/** Refuses (exit 2) to `verb` the run in `dir` when another hone version recorded it, naming both versions. */
export function refuseOtherVersion(dir: string, verb: "replay" | "resume"): void {
  const db = openDb(join(dir, "hone.db"), { readonly: true });
  let recorded: string | null;
  try {
    recorded = recordedHoneVersion(db);
  } finally {
    db.close();
  }
  if (recorded === null || recorded === HONE_VERSION) return;
  // The recorded text is the run's (a run someone sent is untrusted): shown escaped and short.
  const then = oneLine(recorded.slice(0, 40));
  const what = verb === "replay" ? "replay it exactly" : "go on with it";
  throw new HoneError(
    "usage",
    `${dir} was recorded by hone ${then}, and this is hone ${HONE_VERSION}: another version's rules make other records, so only hone ${then} can ${what} (check out that version, or start a new run)`,
  );
}
