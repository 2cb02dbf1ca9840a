import { describe, expect, it } from "vitest";
import { pyFixed, pyFloatRepr, pyPercent, pyRound, pySignedPercent } from "../../../src/method/rules/pyfmt.ts";

// Expected values produced by CPython 3.11.7 on the same inputs (a scratch script outside the repository):
// [x, round(x, 2), round(x, 3), round(x), f"{x:.1f}", f"{x:.3f}", f"{x:.1%}", f"{x:+.1%}", repr(x)]
const PYTHON: [number, number, number, number, string, string, string, string, string][] = [
  [0.125, 0.12, 0.125, 0, "0.1", "0.125", "12.5%", "+12.5%", "0.125"],
  [2.5, 2.5, 2.5, 2, "2.5", "2.500", "250.0%", "+250.0%", "2.5"],
  [3.5, 3.5, 3.5, 4, "3.5", "3.500", "350.0%", "+350.0%", "3.5"],
  [2.675, 2.67, 2.675, 3, "2.7", "2.675", "267.5%", "+267.5%", "2.675"],
  [0.0625, 0.06, 0.062, 0, "0.1", "0.062", "6.2%", "+6.2%", "0.0625"],
  [-0.125, -0.12, -0.125, -0, "-0.1", "-0.125", "-12.5%", "-12.5%", "-0.125"],
  [1.0005, 1.0, 1.0, 1, "1.0", "1.000", "100.0%", "+100.0%", "1.0005"],
  [0.30000000000000004, 0.3, 0.3, 0, "0.3", "0.300", "30.0%", "+30.0%", "0.30000000000000004"],
  [123.456, 123.46, 123.456, 123, "123.5", "123.456", "12345.6%", "+12345.6%", "123.456"],
  [-2.5, -2.5, -2.5, -2, "-2.5", "-2.500", "-250.0%", "-250.0%", "-2.5"],
  [1e-5, 0.0, 0.0, 0, "0.0", "0.000", "0.0%", "+0.0%", "1e-05"],
  [0.0001, 0.0, 0.0, 0, "0.0", "0.000", "0.0%", "+0.0%", "0.0001"],
  [
    1e16,
    1e16,
    1e16,
    1e16,
    "10000000000000000.0",
    "10000000000000000.000",
    "1000000000000000000.0%",
    "+1000000000000000000.0%",
    "1e+16",
  ],
  [
    123456789012345.6,
    123456789012345.6,
    123456789012345.6,
    123456789012346,
    "123456789012345.6",
    "123456789012345.594",
    "12345678901234560.0%",
    "+12345678901234560.0%",
    "123456789012345.6",
  ],
  [0.1, 0.1, 0.1, 0, "0.1", "0.100", "10.0%", "+10.0%", "0.1"],
  [1.0, 1.0, 1.0, 1, "1.0", "1.000", "100.0%", "+100.0%", "1.0"],
  [7.0, 7.0, 7.0, 7, "7.0", "7.000", "700.0%", "+700.0%", "7.0"],
  [5e-324, 0.0, 0.0, 0, "0.0", "0.000", "0.0%", "+0.0%", "5e-324"],
];

describe("Python rounding and formatting", () => {
  it.each(PYTHON)("%s", (x, r2, r3, r0, f1, f3, p1, sp1, repr) => {
    expect(pyRound(x, 2)).toBe(r2);
    expect(pyRound(x, 3)).toBe(r3);
    expect(pyRound(x)).toBe(r0);
    expect(pyFixed(x, 1)).toBe(f1);
    expect(pyFixed(x, 3)).toBe(f3);
    expect(pyPercent(x, 1)).toBe(p1);
    expect(pySignedPercent(x, 1)).toBe(sp1);
    expect(pyFloatRepr(x)).toBe(repr);
  });
  it("differs from JavaScript exactly where Python breaks ties to even", () => {
    expect((0.125).toFixed(2)).toBe("0.13");
    expect(pyFixed(0.125, 2)).toBe("0.12");
    expect(Math.round(2.5)).toBe(3);
    expect(pyRound(2.5)).toBe(2);
  });
  it("keeps non-finite values", () => {
    expect(pyRound(Number.NaN, 2)).toBeNaN();
    expect(pyFixed(Number.POSITIVE_INFINITY, 1)).toBe("inf");
    expect(pyFloatRepr(Number.NEGATIVE_INFINITY)).toBe("-inf");
  });
});
