/**
 * A plot over time: uPlot (bundled, drawn on canvas) with hours on the x axis in the site's
 * timezone and a legend that reads each line's value under the cursor. The numbers behind it
 * are also in the page's table and CSV, which screen readers and spreadsheets read.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { loneValues } from './kpi-series';

/** One line of a plot: its label, colour and one value (or null, a gap) per x. */
export interface PlotLine {
  label: string;
  colour: string;
  values: (number | null)[];
}

/** Colours for lines, distinct in both schemes; each line also has its label in the legend. */
export const LINE_COLOURS = ['#1565c0', '#e69500', '#2e7d32', '#c62828', '#7b1fa2', '#00838f', '#6d4c41', '#ad1457'];

const HEIGHT = 220;

/** A time plot of `lines` over `x` (Unix seconds); `format` prints a value for the axis and legend. */
export function TimePlot(props: { title: string; x: number[]; lines: PlotLine[]; timeZone: string; format: (v: number) => string; range?: [number, number]; testid: string }) {
  const box = useRef<HTMLDivElement>(null);
  const points = props.lines.reduce((n, l) => n + l.values.filter((v) => v !== null).length, 0);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    // Canvas takes colours, not CSS variables: read the scheme's text and grid colours once.
    const css = getComputedStyle(document.documentElement);
    const fg = css.getPropertyValue('--muted').trim() || '#4a5563';
    const grid = css.getPropertyValue('--line').trim() || '#c9d1db';
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const plot = new uPlot({
      width: Math.max(el.clientWidth, 300),
      height: HEIGHT,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), props.timeZone),
      scales: { x: { time: true }, y: props.range ? { range: props.range } : { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [{ ...axis, values: (_u, splits) => timeLabels(splits, props.timeZone) }, { ...axis, size: 60, values: (_u, splits) => splits.map(props.format) }],
      series: [
        { label: 'hour' },
        ...props.lines.map((l) => {
          // Points for every hour on a short period; on a long one only for an hour between gaps,
          // which a line cannot show (the first hour after the daemon started keeping figures).
          const lone = loneValues(l.values);
          return {
            label: l.label, stroke: l.colour, width: 2, spanGaps: false, value: (_u: uPlot, v: number | null) => (v === null ? '—' : props.format(v)),
            points: { show: props.x.length <= 48, size: 6, fill: l.colour, filter: (_u: uPlot, _i: number, show: boolean) => (show || lone.length === 0 ? null : lone) },
          };
        }),
      ],
    }, [props.x, ...props.lines.map((l) => l.values)], el);
    const onResize = () => plot.setSize({ width: Math.max(el.clientWidth, 300), height: HEIGHT });
    addEventListener('resize', onResize);
    return () => {
      removeEventListener('resize', onResize);
      plot.destroy();
    };
  }, [props.x, props.lines, props.timeZone, props.range?.[0], props.range?.[1]]);
  return (
    <figure class="plot card" data-testid={props.testid} data-points={points}>
      <figcaption><h2>{props.title}</h2></figcaption>
      <div ref={box} class="plot-box" />
      {points === 0 && <p class="small">No figures in this period yet.</p>}
    </figure>
  );
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * The x axis's labels in the site's time, on the 24-hour clock a site's shifts are named in:
 * the date alone where every tick is a midnight, else the time, with the date under the first
 * tick and under each midnight.
 */
function timeLabels(splits: number[], timeZone: string): string[] {
  const dates = splits.map((ts) => uPlot.tzDate(new Date(ts * 1000), timeZone));
  const day = (d: Date) => d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
  const midnight = (d: Date) => d.getHours() === 0 && d.getMinutes() === 0;
  if (dates.every(midnight)) return dates.map(day);
  return dates.map((d, i) => `${pad(d.getHours())}:${pad(d.getMinutes())}${i === 0 || midnight(d) ? `\n${day(d)}` : ''}`);
}
