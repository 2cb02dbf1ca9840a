// Measurement identity lives in measure/; re-exported here for callers that import it from loop/.
export { assertComparable, HONE_VERSION, type IdentityParts, identityDifferences, identityDigest } from "../measure/identity.ts";
