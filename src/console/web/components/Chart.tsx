import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface LegendItem {
  label: string;
  value: string;
  color?: string;
}

interface Props {
  data: uPlot.AlignedData;
  series: uPlot.Series[];
  height?: number;
  xLabel: string;
  yLabel: string;
  testId: string;
  /** Exposed for tests and screen readers: how many points the chart shows. */
  pointCount: number;
  /** What the legend says for the data index under the cursor, or for the chart as a whole (null: no cursor). */
  legend: (idx: number | null) => LegendItem[];
}

/**
 * A uPlot chart that keeps its instance across data updates (setData, not re-creation), in a box of fixed height,
 * so a live run gaining rounds never moves the page. Its legend is ours: the values under the cursor, and the
 * latest ones when the cursor is elsewhere (uPlot's own shows "--" wherever a series has no point).
 */
export function Chart({ data, series, height = 320, xLabel, yLabel, testId, pointCount, legend }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [idx, setIdx] = useState<number | null>(null);
  const shape = JSON.stringify(series.map((s) => s.label));

  // biome-ignore lint/correctness/useExhaustiveDependencies: re-created only when the set of series changes
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: el.clientWidth || 800,
      height,
      series: [{ label: xLabel }, ...series],
      axes: [
        // Rounds are whole numbers: ticks only there.
        { label: xLabel, stroke: "#444", grid: { stroke: "#eee" }, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500] },
        { label: yLabel, stroke: "#444", grid: { stroke: "#eee" }, size: 70 },
      ],
      scales: { x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] } },
      legend: { show: false },
      cursor: { drag: { x: true, y: false } },
      hooks: { setCursor: [(u) => setIdx(u.cursor.idx ?? null)] },
    };
    plot.current = new uPlot(opts, data, el);
    const observer = new ResizeObserver(() => plot.current?.setSize({ width: el.clientWidth, height }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape, height, xLabel, yLabel]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return (
    <>
      <div ref={box} className="chart" style={{ height }} data-testid={testId} data-points={pointCount} />
      <div className="chart-legend" data-testid={`${testId}-legend`} data-cursor={idx === null ? "none" : String(idx)}>
        {legend(idx).map((item) => (
          <span key={item.label} className="item">
            {item.color && <i style={{ background: item.color }} />}
            {item.label} <b className="mono">{item.value}</b>
          </span>
        ))}
      </div>
    </>
  );
}
