import { describe, expect, it } from "vitest";
import { mbpp } from "../../src/task/qa/benchmarks/mbpp.ts";
import { checkCode } from "../../src/task/qa/code/check-code.ts";
import { officialPasses } from "../helpers/official-python.ts";

// Tests that build the completion's own objects and pass them back into it, as MBPP's task 601 does
// (`max_chain_length([Pair(5, 24), …], 4) == 3`, Pair a class of the program). In the official single program this
// passes; hone's checker failed it with "unknown value tag 'H'": the completion's server gave every object a new
// handle each time it encoded it, so an argument list the call never changed looked changed, and the checker read
// the list back without turning handles into the completion's objects.
const PAIR = "class Pair(object):\n    def __init__(self, a, b):\n        self.a = a\n        self.b = b\n";
const CHAIN = `${PAIR}
def max_chain_length(arr, n):
    m = 0
    mcl = [1 for i in range(n)]
    for i in range(1, n):
        for j in range(0, i):
            if arr[i].a > arr[j].b and mcl[i] < mcl[j] + 1:
                mcl[i] = mcl[j] + 1
    for i in range(n):
        if m < mcl[i]:
            m = mcl[i]
    return m
`;
const CHAIN_TESTS = [
  "assert max_chain_length([Pair(5, 24), Pair(15, 25),Pair(27, 40), Pair(50, 60)], 4) == 3",
  "assert max_chain_length([Pair(1, 2), Pair(3, 4),Pair(5, 6), Pair(7, 8)], 4) == 4",
  "assert max_chain_length([Pair(19, 10), Pair(11, 12),Pair(13, 14), Pair(15, 16), Pair(31, 54)], 5) == 5",
];

const cases: [string, string, string, string[], boolean][] = [
  ["MBPP 601's reference solution", CHAIN, CHAIN_TESTS.join("\n"), ["max_chain_length"], true],
  [
    "a solution that sorts the list of the program's objects in place",
    `${PAIR}\ndef max_chain_length(arr, n):\n    arr.sort(key=lambda x: x.b)\n    dp = [1] * n\n    for i in range(1, n):\n        for j in range(i):\n            if arr[i].a > arr[j].b:\n                dp[i] = max(dp[i], dp[j] + 1)\n    return max(dp)\n`,
    `${CHAIN_TESTS.join("\n")}\nps = [Pair(3, 4), Pair(1, 2)]\nmax_chain_length(ps, 2)\nassert [p.a for p in ps] == [1, 3]`,
    ["max_chain_length"],
    true,
  ],
  [
    "an object passed back in a dict and a tuple",
    `${PAIR}\ndef total(d, t):\n    return sum(p.a + p.b for p in d.values()) + t[0].a\n`,
    "assert total({'x': Pair(1, 2), 'y': Pair(3, 4)}, (Pair(5, 6),)) == 15",
    ["total"],
    true,
  ],
  [
    "the program's object in a list the call only read stays the same object",
    `${PAIR}\ndef first_a(ps):\n    return ps[0].a\n`,
    "p = Pair(1, 2)\nps = [p]\nassert first_a(ps) == 1\nassert ps[0] is p",
    ["first_a"],
    true,
  ],
  [
    "a wrong chain length",
    CHAIN.replace("    return m\n", "    return m + 1\n"),
    CHAIN_TESTS.join("\n"),
    ["max_chain_length"],
    false,
  ],
];

describe("the completion's own objects passed back to it, as in one program", () => {
  it.each(cases)("%s", async (_name, program, tests, entries, official) => {
    expect(officialPasses(program, tests)).toBe(official);
    const v = await checkCode({ program, setup: "", tests, entries, timeoutSec: 3 });
    expect(v.passed, v.result).toBe(official);
  });

  it("the MBPP scorer passes task 601's reference solution and fails a wrong one", async () => {
    const gold = { code: CHAIN, test_imports: [], test_list: CHAIN_TESTS };
    expect(await mbpp.scorer.apply(CHAIN, gold)).toEqual({ "pass@1": 1 });
    expect(await mbpp.scorer.apply(mbpp.wrongAnswer?.(gold) ?? "", gold)).toEqual({ "pass@1": 0 });
  });
});
