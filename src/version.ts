/**
 * hone's version: in every measurement identity, a run's records (`meta`), a job a worker takes and `hone --version`.
 * It goes up with every change to what a run sends, evaluates, decides or hashes, since a run is replayed and resumed
 * only by the version that recorded it (loop/hone-version.ts).
 */
export const HONE_VERSION = "0.5.0";
