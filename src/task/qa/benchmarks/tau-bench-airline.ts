import { tauBenchmark } from "./tau-bench.ts";

/** τ-bench airline: flights, reservations and users of an airline; 50 test tasks. */
export const tauBenchAirline = tauBenchmark({
  domain: "airline",
  files: [
    { name: "data/flights.json", sha256: "444d7565c68434a3e3fb72efd717f9f9cd5c56dce227f6f56e078f1cb0ed233a", bytes: 2114218 },
    {
      name: "data/reservations.json",
      sha256: "1cf0bbc58ad984be9de7c24dba6dd27393f94cdbd482d8524f6a54db1f561a8c",
      bytes: 2325594,
    },
    { name: "data/users.json", sha256: "bd264e2a31e0fa35cdfef8987e70a0dd3776828b582fe90e7a44823a12eb4cea", bytes: 595947 },
    { name: "wiki.md", sha256: "56c335801c16e26b54f600f9db99eb04d31db477e86eb160341d5c66b796c5c8", bytes: 6155 },
    {
      name: "tasks_test.py",
      split: "test",
      sha256: "14cdb6b4fe810faac9a0cc8395d3c7b32c883a979d1cde8c8003ae25a93d2ff3",
      bytes: 67250,
    },
  ],
  sizes: { test: 50 },
});
