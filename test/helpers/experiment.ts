import { INITIAL_HARNESS } from "./fixtures.ts";

/**
 * An experiment file of one circle-packing task group, the initial harness, the methods given (YAML list items), seed
 * 0, a budget of evaluator calls and the search line given.
 */
export const packingExperiment = (
  methods: string,
  budget: number,
  search = "search: { proposals: 1, max_evals: 3, noise_repeats: 1 }",
) => `name: x
tasks:
  - name: packing
    splits: { train: [circle-packing] }
harnesses:
  - name: initial
    path: ${INITIAL_HARNESS}
methods:
${methods}
seeds: [0]
budget: { unit: evaluator_calls, size: ${budget} }
${search}
`;
