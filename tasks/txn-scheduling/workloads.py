"""Transaction workloads for the scheduling task, generated from a seed by hone's own rule: 3 workloads of 40
transactions, each 4-16 read/write operations on 60 keys with a skew towards hot keys ("w-17 r-5 ...")."""
import random


def generate_workloads(seed=7, count=3, transactions=40, keys=60):
    rng = random.Random(seed)
    workloads = []
    for _ in range(count):
        w = {}
        for t in range(transactions):
            ops = []
            for _ in range(rng.randint(4, 16)):
                kind = "w" if rng.random() < 0.35 else "r"
                ops.append("%s-%d" % (kind, int(keys * rng.random() ** 2)))
            w["txn%d" % t] = " ".join(ops)
        workloads.append(w)
    return workloads


def parse(workload):
    """[(set of keys read, set of keys written, length)] in transaction order txn0, txn1, ..."""
    out = []
    for i in range(len(workload)):
        ops = workload["txn%d" % i].split()
        reads = {int(op[2:]) for op in ops if op.startswith("r-")}
        writes = {int(op[2:]) for op in ops if op.startswith("w-")}
        out.append((reads, writes, len(ops)))
    return out


def makespan(workload, schedule):
    """hone's cost model: each operation takes one time unit; a transaction starts once every earlier-scheduled
    transaction it conflicts with (a shared key that at least one of them writes) has finished; the makespan is
    the last finish time. Non-conflicting transactions overlap."""
    txns = parse(workload)
    finish = []
    end = 0
    for pos, t in enumerate(schedule):
        reads, writes, length = txns[t]
        start = 0
        for prev_pos in range(pos):
            u = schedule[prev_pos]
            ur, uw, _ = txns[u]
            if writes & (ur | uw) or reads & uw:
                start = max(start, finish[prev_pos])
        finish.append(start + length)
        end = max(end, start + length)
    return end
