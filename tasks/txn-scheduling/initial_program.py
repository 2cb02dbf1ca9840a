"""Transaction scheduling: order the transactions of a workload to minimise the makespan."""


# EVOLVE-BLOCK-START
def get_best_schedule(workload, num_seqs):
    """Orders transactions by a weighted mix of length and writes (fewest first); returns a permutation of indices."""
    length_weight = 1.0
    write_weight = 0.5
    scored = []
    for i in range(len(workload)):
        ops = workload["txn%d" % i].split()
        writes = sum(1 for op in ops if op.startswith("w-"))
        scored.append((length_weight * len(ops) + write_weight * writes, i))
    return [i for _, i in sorted(scored)]
# EVOLVE-BLOCK-END
