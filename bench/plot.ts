/**
 * Line charts of the scaling series (rows carrying `series`, see harness.ts), written as plain
 * SVG so that RESULTS.md can show them on GitHub without a plotting dependency.
 *
 * One chart per series name, one line per `series.line` (default: the row's benchmark), y = the
 * row's median. Rows merged from several runs get a bar from the runs' lowest to highest median.
 * The x axis is logarithmic when every x is positive and they span 100× or more.
 */
import type { BenchRow } from "./harness.ts";

export interface ChartPoint {
  x: number;
  y: number;
  /** The spread behind `y` (min and max over runs), drawn as a bar. */
  low?: number;
  high?: number;
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  lines: { name: string; points: ChartPoint[] }[];
}

/** The charts of every series in `rows`, in the order the series first appear, with a file name each. */
export function seriesCharts(rows: readonly BenchRow[]): { file: string; chart: Chart }[] {
  const charts = new Map<string, Chart>();
  for (const row of rows) {
    if (!row.series || !Number.isFinite(row.median)) continue;
    const { name, x, xLabel } = row.series;
    let chart = charts.get(name);
    if (!chart) {
      chart = { title: name, xLabel, yLabel: row.series.yLabel ?? `median (${row.unit})`, lines: [] };
      charts.set(name, chart);
    }
    const lineName = row.series.line ?? row.benchmark;
    let line = chart.lines.find((candidate) => candidate.name === lineName);
    if (!line) {
      line = { name: lineName, points: [] };
      chart.lines.push(line);
    }
    const spread = row.runs?.median;
    line.points.push({ x, y: row.median, ...(spread ? { low: spread.min, high: spread.max } : {}) });
  }
  for (const chart of charts.values()) for (const line of chart.lines) line.points.sort((a, b) => a.x - b.x);
  return [...charts.values()].map((chart) => ({
    file: `plot-${chart.title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}.svg`,
    chart,
  }));
}

const WIDTH = 760;
const HEIGHT = 440;
const MARGIN = { left: 80, right: 210, top: 48, bottom: 60 };
/** Okabe–Ito: told apart also with colour blindness. */
const COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"];

interface Axis {
  /** Maps a value to its position in pixels. */
  at(value: number): number;
  ticks: number[];
}

/** An SVG document of `chart`: axes with ticks and labels, a title, a legend, one line per entry. */
export function lineChartSvg(chart: Chart): string {
  const points = chart.lines.flatMap((line) => line.points);
  if (points.length === 0) throw new Error(`chart "${chart.title}" has no points`);
  const plotRight = WIDTH - MARGIN.right;
  const plotBottom = HEIGHT - MARGIN.bottom;
  const xs = points.map((point) => point.x);
  const ys = points.flatMap((point) => [point.y, point.low ?? point.y, point.high ?? point.y]);
  const logX = Math.min(...xs) > 0 && Math.max(...xs) / Math.min(...xs) >= 100;
  const xAxis = logX ? logAxis(xs, MARGIN.left, plotRight) : linearAxis(xs, MARGIN.left, plotRight);
  const yAxis = linearAxis(ys, plotBottom, MARGIN.top);
  const parts: string[] = [
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    text(WIDTH / 2 - MARGIN.right / 2 + MARGIN.left / 2, 26, chart.title, {
      size: 16,
      anchor: "middle",
      weight: "bold",
    }),
  ];
  for (const tick of yAxis.ticks) {
    const y = yAxis.at(tick);
    parts.push(`<line x1="${MARGIN.left}" y1="${y}" x2="${plotRight}" y2="${y}" stroke="#e5e5e5"/>`);
    parts.push(text(MARGIN.left - 8, y + 4, tickLabel(tick), { anchor: "end" }));
  }
  for (const tick of xAxis.ticks) {
    const x = xAxis.at(tick);
    parts.push(`<line x1="${x}" y1="${plotBottom}" x2="${x}" y2="${plotBottom + 5}" stroke="#333333"/>`);
    parts.push(text(x, plotBottom + 20, tickLabel(tick), { anchor: "middle" }));
  }
  parts.push(
    `<polyline points="${MARGIN.left},${MARGIN.top} ${MARGIN.left},${plotBottom} ${plotRight},${plotBottom}" fill="none" stroke="#333333"/>`,
  );
  parts.push(
    text((MARGIN.left + plotRight) / 2, HEIGHT - 16, logX ? `${chart.xLabel} (log scale)` : chart.xLabel, {
      anchor: "middle",
    }),
  );
  parts.push(text(18, (MARGIN.top + plotBottom) / 2, chart.yLabel, { anchor: "middle", rotate: true }));
  chart.lines.forEach((line, index) => {
    parts.push(...drawLine(line.points, COLOURS[index % COLOURS.length]!, xAxis, yAxis));
    const legendY = MARGIN.top + 10 + index * 22;
    parts.push(
      `<line x1="${plotRight + 20}" y1="${legendY}" x2="${plotRight + 44}" y2="${legendY}" stroke="${COLOURS[index % COLOURS.length]}" stroke-width="2"/>`,
    );
    parts.push(text(plotRight + 50, legendY + 4, line.name));
  });
  if (points.some((point) => point.low !== undefined)) {
    parts.push(
      text(plotRight + 20, MARGIN.top + 10 + chart.lines.length * 22 + 8, "bars: min–max over runs", {
        size: 11,
        colour: "#666666",
      }),
    );
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif">\n${parts.join("\n")}\n</svg>\n`;
}

function drawLine(points: readonly ChartPoint[], colour: string, xAxis: Axis, yAxis: Axis): string[] {
  const at = (point: ChartPoint) => `${round(xAxis.at(point.x))},${round(yAxis.at(point.y))}`;
  const parts = [`<polyline points="${points.map(at).join(" ")}" fill="none" stroke="${colour}" stroke-width="2"/>`];
  for (const point of points) {
    const x = round(xAxis.at(point.x));
    if (point.low !== undefined && point.high !== undefined) {
      const [top, bottom] = [round(yAxis.at(point.high)), round(yAxis.at(point.low))];
      parts.push(
        `<path d="M${x},${top}V${bottom}M${x - 4},${top}H${x + 4}M${x - 4},${bottom}H${x + 4}" stroke="${colour}" stroke-width="1"/>`,
      );
    }
    parts.push(
      `<circle cx="${x}" cy="${round(yAxis.at(point.y))}" r="3.5" fill="${colour}"><title>${escapeXml(`${tickLabel(point.x)}: ${tickLabel(point.y)}`)}</title></circle>`,
    );
  }
  return parts;
}

/** From 0 (when every value is ≥ 0) up to a round number past the largest, 4 to 10 ticks. */
function linearAxis(values: readonly number[], from: number, to: number): Axis {
  const smallest = Math.min(...values);
  const largest = Math.max(...values);
  let low = Math.min(smallest, 0);
  let high = largest > low ? largest : low + 1;
  const step = niceStep((high - low) / 5);
  low = Math.floor(low / step) * step;
  high = Math.ceil(high / step) * step;
  const ticks: number[] = [];
  for (let tick = low; tick <= high + step / 2; tick += step) ticks.push(Number(tick.toPrecision(12)));
  return { at: (value) => from + ((value - low) / (high - low)) * (to - from), ticks };
}

/** Whole decades around the values, a tick at each power of 10. */
function logAxis(values: readonly number[], from: number, to: number): Axis {
  const low = Math.floor(Math.log10(Math.min(...values)));
  const high = Math.ceil(Math.log10(Math.max(...values)));
  const ticks = Array.from({ length: high - low + 1 }, (_, index) => 10 ** (low + index));
  return { at: (value) => from + ((Math.log10(value) - low) / (high - low)) * (to - from), ticks };
}

/** 1, 2 or 5 times a power of 10, at least `rough`. */
function niceStep(rough: number): number {
  const power = 10 ** Math.floor(Math.log10(rough));
  for (const factor of [1, 2, 5, 10]) if (factor * power >= rough) return factor * power;
  return 10 * power;
}

function tickLabel(value: number): string {
  return value.toLocaleString("en-US", { maximumSignificantDigits: 4 });
}

function text(
  x: number,
  y: number,
  content: string,
  style: {
    size?: number;
    anchor?: "start" | "middle" | "end";
    weight?: "bold";
    colour?: string;
    rotate?: boolean;
  } = {},
): string {
  const attributes = [
    `x="${round(x)}"`,
    `y="${round(y)}"`,
    `font-size="${style.size ?? 12}"`,
    `fill="${style.colour ?? "#222222"}"`,
    ...(style.anchor ? [`text-anchor="${style.anchor}"`] : []),
    ...(style.weight ? [`font-weight="${style.weight}"`] : []),
    ...(style.rotate ? [`transform="rotate(-90 ${round(x)} ${round(y)})"`] : []),
  ];
  return `<text ${attributes.join(" ")}>${escapeXml(content)}</text>`;
}

function escapeXml(content: string): string {
  return content.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
