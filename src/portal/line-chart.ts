/**
 * @module
 * The warm query preview's line chart, drawn as inline SVG on the server (no chart library, no
 * CDN). A result gets a chart when it has a `timestamp` datetime column (what dashboards select,
 * spec 2.2) and a numeric column; a string column with a few distinct values splits the lines.
 */
import { type Html, html } from './html.js'

export interface ResultColumn {
  readonly name: string
  readonly type: string
}

export interface ChartPoint {
  readonly t: number
  readonly y: number
}

export interface ChartSeries {
  readonly name: string
  readonly points: readonly ChartPoint[]
}

export interface ChartData {
  readonly series: readonly ChartSeries[]
  /** The metric on the y axis (one numeric column, or "value" when several are drawn). */
  readonly yLabel: string
}

const NUMERIC_TYPES = new Set(['int', 'long', 'real', 'decimal'])
const MAX_SERIES = 8
/** Colour-blind-safe colours (Okabe–Ito, with a purple for its sky blue), all at least 3:1 against white. */
export const SERIES_COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#B8860B', '#6A3D9A', '#000000', '#8B4513'] as const

function numberOf(value: unknown): number | undefined {
  // a long beyond 2^53 is a bigint (src/kql/README.md); a chart only needs its nearest double
  const n =
    typeof value === 'number' || typeof value === 'bigint'
      ? Number(value)
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value)
        : Number.NaN
  return Number.isFinite(n) ? n : undefined
}

/** Which lines a result would draw, or undefined when it has no `timestamp` and numeric column. */
export function chartDataOf(columns: readonly ResultColumn[], rows: readonly Readonly<Record<string, unknown>>[]): ChartData | undefined {
  const time = columns.find((c) => c.name === 'timestamp' && c.type === 'datetime')
  const numeric = columns.filter((c) => NUMERIC_TYPES.has(c.type))
  if (!time || numeric.length === 0) return undefined
  const timeOf = (row: Readonly<Record<string, unknown>>) =>
    typeof row['timestamp'] === 'string' ? Date.parse(row['timestamp']) : Number.NaN

  let series: ChartSeries[]
  const splitBy = columns.find(
    (c) =>
      c.type === 'string' &&
      new Set(rows.map((r) => String(r[c.name] ?? ''))).size <= MAX_SERIES &&
      new Set(rows.map((r) => String(r[c.name] ?? ''))).size >= 2,
  )
  if (splitBy) {
    const metric = numeric[0]!
    const groups = new Map<string, ChartPoint[]>()
    for (const row of rows) {
      const t = timeOf(row)
      const y = numberOf(row[metric.name])
      if (!Number.isFinite(t) || y === undefined) continue
      const key = String(row[splitBy.name] ?? '')
      groups.set(key, [...(groups.get(key) ?? []), { t, y }])
    }
    series = [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([name, points]) => ({ name: `${name || '(empty)'}`, points }))
    if (series.length === 0) return undefined
    return finish(series, metric.name)
  }
  series = numeric.slice(0, MAX_SERIES).map((column) => ({
    name: column.name,
    points: rows.flatMap((row) => {
      const t = timeOf(row)
      const y = numberOf(row[column.name])
      return Number.isFinite(t) && y !== undefined ? [{ t, y }] : []
    }),
  }))
  return finish(series, numeric.length === 1 ? numeric[0]!.name : 'value')
}

function finish(series: ChartSeries[], yLabel: string): ChartData | undefined {
  const sorted = series.map((s) => ({ name: s.name, points: [...s.points].sort((a, b) => a.t - b.t) })).filter((s) => s.points.length > 0)
  // One point is not a line: the table says it better.
  if (sorted.reduce((n, s) => n + s.points.length, 0) < 2) return undefined
  return { series: sorted, yLabel }
}

/** About `count` round tick values covering [min, max]. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  // A range too narrow to divide (equal values, or differences lost to rounding) gets padding.
  if (!(max - min > Math.max(Math.abs(min), Math.abs(max), 1e-300) * 1e-9)) {
    const pad = Math.abs(min) > 1e-6 ? Math.abs(min) * 0.1 : 1
    return niceTicks(min - pad, max + pad, count)
  }
  const rawStep = (max - min) / Math.max(1, count)
  const magnitude = 10 ** Math.floor(Math.log10(rawStep))
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rawStep)!
  const ticks: number[] = []
  let start = Math.floor(min / step) * step
  if (start > min) start -= step
  for (let v = start; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)))
  if (ticks[ticks.length - 1]! < max) ticks.push(Number((ticks[ticks.length - 1]! + step).toPrecision(12)))
  return ticks
}

function formatTick(value: number): string {
  if (Math.abs(value) >= 1e6 || (Math.abs(value) < 1e-3 && value !== 0)) return value.toExponential(1)
  return String(Number(value.toPrecision(6)))
}

function formatTime(ms: number, spanMs: number): string {
  const iso = new Date(ms).toISOString()
  if (spanMs <= 2 * 86_400_000) return iso.slice(11, 16)
  return iso.slice(5, 10)
}

export interface ChartOptions {
  readonly width?: number
  readonly height?: number
}

/** The chart as inline SVG plus an HTML legend, or undefined when the result is not chartable. */
export function renderLineChart(data: ChartData, options: ChartOptions = {}): Html {
  const width = options.width ?? 760
  const height = options.height ?? 300
  const m = { top: 16, right: 20, bottom: 40, left: 64 }
  const plotW = width - m.left - m.right
  const plotH = height - m.top - m.bottom
  const all = data.series.flatMap((s) => s.points)
  const tMin = Math.min(...all.map((p) => p.t))
  const tMax = Math.max(...all.map((p) => p.t))
  const yTicks = niceTicks(Math.min(...all.map((p) => p.y)), Math.max(...all.map((p) => p.y)))
  const yMin = yTicks[0]!
  const yMax = yTicks[yTicks.length - 1]!
  const span = tMax - tMin
  const x = (t: number) => m.left + (span === 0 ? plotW / 2 : ((t - tMin) / span) * plotW)
  const y = (v: number) => m.top + plotH - ((v - yMin) / (yMax - yMin)) * plotH
  const xTicks = span === 0 ? [tMin] : Array.from({ length: 5 }, (_, i) => tMin + (span * i) / 4)
  const round = (n: number) => Math.round(n * 10) / 10
  const first = new Date(tMin).toISOString().slice(0, 16).replace('T', ' ')
  const last = new Date(tMax).toISOString().slice(0, 16).replace('T', ' ')
  const label = `Line chart of ${data.yLabel} over time (UTC), ${data.series.length} line${data.series.length > 1 ? 's' : ''}, from ${first} to ${last}`

  return html`<figure class="chart">
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" role="img" aria-label="${label}" class="chart-svg">
<title>${label}</title>
<g class="chart-grid">${yTicks.map((v) => html`<line x1="${m.left}" x2="${m.left + plotW}" y1="${round(y(v))}" y2="${round(y(v))}" stroke="#d6d9de" stroke-width="1"/><text x="${m.left - 8}" y="${round(y(v)) + 4}" text-anchor="end" font-size="12" fill="#3d434b">${formatTick(v)}</text>`)}</g>
<g class="chart-axis">${xTicks.map((t) => html`<line x1="${round(x(t))}" x2="${round(x(t))}" y1="${m.top + plotH}" y2="${m.top + plotH + 5}" stroke="#3d434b"/><text x="${round(x(t))}" y="${m.top + plotH + 20}" text-anchor="middle" font-size="12" fill="#3d434b">${formatTime(t, span)}</text>`)}
<line x1="${m.left}" x2="${m.left + plotW}" y1="${m.top + plotH}" y2="${m.top + plotH}" stroke="#3d434b"/>
<text x="${m.left + plotW / 2}" y="${height - 4}" text-anchor="middle" font-size="12" fill="#3d434b">timestamp (UTC${span > 2 * 86_400_000 ? ', month-day' : ''})</text>
<text x="14" y="${m.top + plotH / 2}" text-anchor="middle" font-size="12" fill="#3d434b" transform="rotate(-90 14 ${m.top + plotH / 2})">${data.yLabel}</text></g>
${data.series.map((s, i) => {
  const colour = SERIES_COLOURS[i % SERIES_COLOURS.length]!
  const path = s.points.map((p) => `${round(x(p.t))},${round(y(p.y))}`).join(' ')
  return html`<g class="chart-series"><polyline points="${path}" fill="none" stroke="${colour}" stroke-width="2" stroke-linejoin="round"/>${s.points.length <= 200 ? s.points.map((p) => html`<circle cx="${round(x(p.t))}" cy="${round(y(p.y))}" r="3" fill="${colour}"><title>${s.name}: ${formatTick(p.y)} at ${new Date(p.t).toISOString()}</title></circle>`) : ''}</g>`
})}
</svg>
<figcaption><ul class="chart-legend">${data.series.map((s, i) => html`<li><span class="swatch swatch-${i % SERIES_COLOURS.length}" aria-hidden="true"></span>${s.name} <span class="muted">(${s.points.length} point${s.points.length === 1 ? '' : 's'})</span></li>`)}</ul></figcaption>
</figure>`
}
