// The Reports page's two charts as plain SVG (docs/web.md, "Reports": why no charting library):
// bars for one series and lines with markers for others, an axis at each side, labels on the
// x axis thinned to fit. Nothing is told by colour alone: the bars are hatched, each line has its
// own marker shape and dash, the legend shows both, and every figure carries a table of its
// numbers for screen readers (the SVG itself is hidden from them; the page's visible table has
// the same numbers for everyone).
import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { labelStride, ticks, type AxisKind } from './report-scale';

export type Marker = 'circle' | 'square' | 'diamond';

export interface Axis {
  /** The largest value the axis shows (the chart rounds it up to a whole tick). */
  max: number;
  format: (v: number) => string;
  kind: AxisKind;
}

export interface BarSeries {
  label: string;
  values: (number | null)[];
}

export interface LineSeries {
  label: string;
  values: (number | null)[];
  marker: Marker;
  dashed?: boolean;
  color: string;
  axis: 'left' | 'right';
}

export interface ChartProps {
  id: string;
  title: string;
  /** One line under the title (what the chart is of, which zone). */
  note?: ComponentChildren;
  /** The x axis: a short label per point (axis) and its full name (tables, tooltips). */
  labels: { short: string; full: string }[];
  /** The heading of the first column of the figure's table (Day, Week, Priority...). */
  keyHeading: string;
  bar?: BarSeries;
  lines: LineSeries[];
  left: Axis;
  right?: Axis;
  /** Lines join their points when the x axis is time; for groups (priority, team) only the markers show. */
  joined: boolean;
}

const BAR_COLOR = '#1d4ed8';
const INK = '#334155';
const GRID = '#e2e8f0';
const HEIGHT = 240;
const PAD = { top: 16, bottom: 34, left: 56, right: 56 };

let charts = 0;

function useWidth(): [RefObject<HTMLDivElement>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth);
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width];
}

function MarkerShape({ shape, x, y, color, size = 4.5 }: { shape: Marker; x: number; y: number; color: string; size?: number }) {
  if (shape === 'square') return <rect x={x - size} y={y - size} width={size * 2} height={size * 2} fill="#fff" stroke={color} stroke-width={2} />;
  if (shape === 'diamond') return <path d={`M${x} ${y - size - 1}L${x + size + 1} ${y}L${x} ${y + size + 1}L${x - size - 1} ${y}Z`} fill={color} stroke="#fff" stroke-width={1} />;
  return <circle cx={x} cy={y} r={size} fill={color} stroke="#fff" stroke-width={1} />;
}

/** A legend entry's swatch: the bar's hatch, or the line's dash with its marker. */
function Swatch({ kind, hatch, line }: { kind: 'bar' | 'line'; hatch?: string; line?: LineSeries }) {
  return (
    <svg width="34" height="14" aria-hidden="true" focusable="false" class="swatch">
      {kind === 'bar' ? (
        <rect x="1" y="1" width="32" height="12" fill={`url(#${hatch})`} stroke={BAR_COLOR} />
      ) : (
        <>
          <line x1="1" x2="33" y1="7" y2="7" stroke={line!.color} stroke-width="2" stroke-dasharray={line!.dashed ? '5 3' : undefined} />
          <MarkerShape shape={line!.marker} x={17} y={7} color={line!.color} size={4} />
        </>
      )}
    </svg>
  );
}

export function BarLineChart(props: ChartProps) {
  const { id, title, note, labels, bar, lines, left, right, joined, keyHeading } = props;
  // Each chart's own pattern id (not preact's useId: it would grow the chunk every page shares).
  const hatch = useMemo(() => `hatch-${++charts}`, []);
  const [ref, width] = useWidth();
  const n = labels.length;
  const plotW = Math.max(40, width - PAD.left - (right ? PAD.right : 16));
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const leftTicks = ticks(left);
  const rightTicks = right ? ticks(right) : [];
  const leftMax = leftTicks[leftTicks.length - 1] || 1;
  const rightMax = rightTicks[rightTicks.length - 1] || 1;
  const slot = plotW / Math.max(n, 1);
  const xAt = (i: number) => PAD.left + slot * (i + 0.5);
  const yAt = (v: number, axis: 'left' | 'right') => PAD.top + plotH - (v / (axis === 'left' ? leftMax : rightMax)) * plotH;
  const stride = labelStride(n, plotW, 52);
  const barW = Math.max(2, Math.min(36, slot * 0.6));
  const showBarValues = !!bar && barW >= 14;

  return (
    <figure class="chart card" id={id} data-testid={id}>
      <figcaption>
        <strong class="chart-title">{title}</strong>
        {note ? <span class="muted chart-note">{note}</span> : null}
        <span class="legend">
          {bar ? (
            <span class="legend-item">
              <Swatch kind="bar" hatch={hatch} /> {bar.label} (hatched bars, left axis)
            </span>
          ) : null}
          {lines.map((l) => (
            <span key={l.label} class="legend-item">
              <Swatch kind="line" line={l} /> {l.label} ({l.dashed ? 'dashed line' : 'line'}, {l.marker === 'circle' ? 'circles' : l.marker === 'square' ? 'squares' : 'diamonds'}, {l.axis} axis)
            </span>
          ))}
        </span>
      </figcaption>
      <div class="chart-box" ref={ref}>
        {width > 0 ? (
          <svg width={width} height={HEIGHT} viewBox={`0 0 ${width} ${HEIGHT}`} aria-hidden="true" focusable="false" class="chart-svg" data-points={n}>
            <defs>
              <pattern id={hatch} patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)">
                <rect width="6" height="6" fill="#dbe4ff" />
                <line x1="0" y1="0" x2="0" y2="6" stroke={BAR_COLOR} stroke-width="3" />
              </pattern>
            </defs>
            {leftTicks.map((v) => (
              <g key={`l${v}`}>
                <line x1={PAD.left} x2={PAD.left + plotW} y1={yAt(v, 'left')} y2={yAt(v, 'left')} stroke={GRID} />
                <text x={PAD.left - 6} y={yAt(v, 'left') + 4} text-anchor="end" class="tick">
                  {left.format(v)}
                </text>
              </g>
            ))}
            {right
              ? rightTicks.map((v) => (
                  <text key={`r${v}`} x={PAD.left + plotW + 6} y={yAt(v, 'right') + 4} class="tick">
                    {right.format(v)}
                  </text>
                ))
              : null}
            <line x1={PAD.left} x2={PAD.left + plotW} y1={PAD.top + plotH} y2={PAD.top + plotH} stroke={INK} />
            {labels.map((l, i) =>
              i % stride === 0 ? (
                <text key={`x${i}`} x={xAt(i)} y={HEIGHT - PAD.bottom + 16} text-anchor="middle" class="tick">
                  {l.short}
                </text>
              ) : null,
            )}
            {bar
              ? bar.values.map((v, i) =>
                  v === null ? null : (
                    <g key={`b${i}`} class="bar" data-value={v}>
                      <rect x={xAt(i) - barW / 2} y={yAt(v, 'left')} width={barW} height={Math.max(0, PAD.top + plotH - yAt(v, 'left'))} fill={`url(#${hatch})`} stroke={BAR_COLOR}>
                        <title>{`${labels[i]!.full}: ${bar.label} ${left.format(v)}`}</title>
                      </rect>
                      {showBarValues && v > 0 ? (
                        <text x={xAt(i)} y={yAt(v, 'left') - 4} text-anchor="middle" class="bar-value">
                          {left.format(v)}
                        </text>
                      ) : null}
                    </g>
                  ),
                )
              : null}
            {lines.map((l) => {
              // A null (nothing to measure) breaks the line: no point is drawn at zero for it.
              const runs: string[] = [];
              let run = '';
              l.values.forEach((v, i) => {
                if (v === null) {
                  if (run) runs.push(run);
                  run = '';
                  return;
                }
                run += `${run ? 'L' : 'M'}${xAt(i).toFixed(1)} ${yAt(v, l.axis).toFixed(1)}`;
              });
              if (run) runs.push(run);
              const axis = l.axis === 'left' ? left : right!;
              return (
                <g key={l.label} class="line" data-series={l.label}>
                  {joined ? runs.map((d) => <path key={d} d={d} fill="none" stroke={l.color} stroke-width={2} stroke-dasharray={l.dashed ? '6 4' : undefined} />) : null}
                  {l.values.map((v, i) =>
                    v === null ? null : (
                      <g key={i}>
                        <MarkerShape shape={l.marker} x={xAt(i)} y={yAt(v, l.axis)} color={l.color} />
                        <title>{`${labels[i]!.full}: ${l.label} ${axis.format(v)}`}</title>
                      </g>
                    ),
                  )}
                </g>
              );
            })}
          </svg>
        ) : null}
      </div>
      {/* A table box ignores overflow: the hiding wrapper is a div. */}
      <div class="sr-only">
      <table>
        <caption>{title}: the numbers of the chart</caption>
        <thead>
          <tr>
            <th scope="col">{keyHeading}</th>
            {bar ? <th scope="col">{bar.label}</th> : null}
            {lines.map((l) => (
              <th key={l.label} scope="col">
                {l.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {labels.map((l, i) => (
            <tr key={i}>
              <th scope="row">{l.full}</th>
              {bar ? <td>{bar.values[i] === null ? 'none' : left.format(bar.values[i]!)}</td> : null}
              {lines.map((s) => (
                <td key={s.label}>{s.values[i] === null || s.values[i] === undefined ? 'none' : (s.axis === 'left' ? left : right!).format(s.values[i])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      </div>
    </figure>
  );
}
