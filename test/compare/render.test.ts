import { describe, expect, it } from "vitest";
import { reportHtml } from "../../src/compare/html.ts";
import { buildReport } from "../../src/compare/report.ts";
import { curveChart, niceTicks } from "../../src/compare/svg.ts";
import { alignedTable, reportText } from "../../src/compare/text.ts";
import { cellRecord } from "./records.ts";

describe("the terminal table", () => {
  it("pads text right and numbers left, so digits line up, and never wraps", () => {
    const t = alignedTable(
      [
        { header: "method", align: "left", value: (r: [string, string]) => r[0] },
        { header: "score", align: "right", value: (r: [string, string]) => r[1] },
      ],
      [
        ["random", "0.2500"],
        ["a-much-longer-method-name", "-12.5000"],
      ],
    );
    expect(t.split("\n")).toEqual([
      "method                        score",
      "-------------------------  --------",
      "random                       0.2500",
      "a-much-longer-method-name  -12.5000",
    ]);
  });

  it("says when there is nothing to compare", () => {
    expect(reportText(buildReport([cellRecord({ method: "random", seed: 0, final: [1] })]))).toContain(
      "(no other method to compare)",
    );
  });
});

describe("the HTML page", () => {
  const hostile = '<script>alert("x")</script>';
  const recs = [
    cellRecord({ method: "random", seed: 0, final: [0], curve: [[0, 0]] }),
    cellRecord({ method: "random", seed: 1, final: [0], curve: [[0, 0]] }),
    { ...cellRecord({ method: "m", seed: 0, final: [1], curve: [[0, 1]] }), benchmark: hostile },
  ];

  it("escapes every name a record carries and loads nothing: no script, no external reference", () => {
    const html = reportHtml(buildReport(recs), { title: `report ${hostile}` });
    expect(html).not.toContain("<script");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`);
    expect(html).not.toMatch(/\b(src|href)=/);
  });

  it("draws one series per method with a point per step, or says when nothing was measured", () => {
    const svg = curveChart(
      [
        {
          label: "a",
          color: "#000",
          band: [
            { x: 0, n: 1, mean: 1, min: 1, max: 1 },
            { x: 5, n: 2, mean: 2, min: 1, max: 3 },
          ],
          end: 9,
        },
      ],
      { unit: "seconds", size: 10, yLabel: "best" },
    );
    expect(svg.match(/<circle/g)).toHaveLength(2);
    expect(svg).toContain('data-points="2"');
    expect(reportHtml(buildReport([cellRecord({ method: "random", seed: 0, final: [1], curve: [] })]), { title: "t" })).toContain(
      "No curve points measured.",
    );
  });

  it("picks round ticks", () => {
    expect(niceTicks(0, 60)).toEqual([0, 20, 40, 60]); // at most five steps: 12 rounds up to 20
    expect(niceTicks(0.93, 2.07)).toEqual([1, 1.5, 2]);
    expect(niceTicks(3, 3)).toEqual([3]);
  });
});
