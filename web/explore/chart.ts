/**
 * The result chart (uPlot, a 50 KB canvas library; pies drawn on a canvas here). The query's
 * `render` hint decides the kind (timechart, linechart, areachart, columnchart, barchart, piechart,
 * scatterchart); without one, a result with a datetime column and a numeric column is drawn as a
 * time chart. A string column next to a single numeric column splits it into one series per value
 * (`summarize avg(x) by bin(timestamp, 1h), sensor`).
 */
import uPlot from 'uplot'
import { chartNumber, NUMERIC_TYPES, type QueryResult } from './result-values.js'

/** Okabe-Ito: tells series apart for most colour vision deficiencies (as the warm query chart). */
const COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#B8860B', '#6A3D9A', '#000000', '#8B4513']
const MAX_SERIES = 12

interface Series {
  readonly label: string
  readonly values: (number | null)[]
}

interface ChartData {
  readonly kind: string
  readonly xLabel: string
  readonly time: boolean
  /** x values (seconds for time charts, numbers for line charts, indexes for categories). */
  readonly xs: number[]
  readonly categories?: string[]
  readonly series: Series[]
}

function kindOf(result: QueryResult): string | undefined {
  const hinted = result.visualization?.kind?.toLowerCase()
  if (hinted && hinted !== 'table') return hinted
  if (hinted === 'table') return undefined
  const hasTime = result.columns.some((c) => c.type === 'datetime')
  const hasNumber = result.columns.some((c) => NUMERIC_TYPES.has(c.type))
  return hasTime && hasNumber ? 'timechart' : undefined
}

/** Turns rows into x values and series, or undefined when the result has nothing to draw. */
export function chartDataOf(result: QueryResult): ChartData | undefined {
  const kind = kindOf(result)
  if (!kind || result.results.length === 0) return undefined
  const categorical = kind === 'columnchart' || kind === 'barchart' || kind === 'piechart'
  const xColumn = categorical
    ? (result.columns.find((c) => c.type === 'string') ?? result.columns.find((c) => c.type === 'datetime') ?? result.columns[0]!)
    : (result.columns.find((c) => c.type === 'datetime') ?? result.columns.find((c) => NUMERIC_TYPES.has(c.type)))
  if (!xColumn) return undefined
  const numeric = result.columns.filter((c) => c !== xColumn && NUMERIC_TYPES.has(c.type))
  if (numeric.length === 0) return undefined
  const splitBy = !categorical && numeric.length === 1 ? result.columns.find((c) => c !== xColumn && c.type === 'string') : undefined
  const time = xColumn.type === 'datetime'
  const xOf = (value: unknown): number => (time ? Date.parse(String(value)) / 1000 : chartNumber(value))

  if (categorical) {
    const categories = result.results.map((row) => String(row[xColumn.name] ?? ''))
    return {
      kind,
      xLabel: xColumn.name,
      time: false,
      xs: categories.map((_, i) => i),
      categories,
      series: numeric
        .slice(0, MAX_SERIES)
        .map((c) => ({ label: c.name, values: result.results.map((row) => finite(chartNumber(row[c.name]))) })),
    }
  }
  const rows = result.results.filter((row) => Number.isFinite(xOf(row[xColumn.name])))
  const xs = [...new Set(rows.map((row) => xOf(row[xColumn.name])))].sort((a, b) => a - b)
  const at = new Map(xs.map((x, i) => [x, i]))
  const series: Series[] = []
  if (splitBy) {
    const byKey = new Map<string, (number | null)[]>()
    for (const row of rows) {
      const key = String(row[splitBy.name] ?? '')
      let values = byKey.get(key)
      if (!values) {
        if (byKey.size >= MAX_SERIES) continue
        values = new Array<number | null>(xs.length).fill(null)
        byKey.set(key, values)
      }
      values[at.get(xOf(row[xColumn.name]))!] = finite(chartNumber(row[numeric[0]!.name]))
    }
    for (const [key, values] of [...byKey].sort(([a], [b]) => a.localeCompare(b))) series.push({ label: key, values })
  } else {
    for (const column of numeric.slice(0, MAX_SERIES)) {
      const values = new Array<number | null>(xs.length).fill(null)
      for (const row of rows) values[at.get(xOf(row[xColumn.name]))!] = finite(chartNumber(row[column.name]))
      series.push({ label: column.name, values })
    }
  }
  return { kind, xLabel: xColumn.name, time, xs, series }
}

function finite(n: number): number | null {
  return Number.isFinite(n) ? n : null
}

let current: uPlot | undefined

/** Draws the chart into `host` (emptied first); returns the kind drawn, or undefined for none. */
export function renderChart(host: HTMLElement, result: QueryResult): string | undefined {
  current?.destroy()
  current = undefined
  host.replaceChildren()
  const data = chartDataOf(result)
  if (!data) return undefined
  const width = Math.max(320, host.clientWidth - 24)
  const height = 300
  if (data.kind === 'piechart') {
    drawPie(host, data, width)
    return data.kind
  }
  const bars = data.kind === 'columnchart' || data.kind === 'barchart'
  const scatter = data.kind === 'scatterchart'
  const options: uPlot.Options = {
    width,
    height,
    // categories sit at 0..n-1: half a slot of room on each side keeps the outer bars whole
    scales: { x: data.categories ? { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] } : { time: data.time } },
    legend: { show: true },
    axes: [
      {
        label: data.xLabel,
        ...(data.categories ? { values: (_u: uPlot, ticks: number[]) => ticks.map((t) => data.categories![t] ?? '') } : {}),
      },
      {},
    ],
    series: [
      { label: data.xLabel, ...(data.categories ? { value: (_u: uPlot, v: number) => data.categories![v] ?? '' } : {}) },
      ...data.series.map((s, i) => ({
        label: s.label,
        stroke: COLOURS[i % COLOURS.length]!,
        width: 2,
        spanGaps: true,
        ...(bars
          ? {
              fill: `${COLOURS[i % COLOURS.length]!}cc`,
              paths: uPlot.paths.bars!({ size: [0.8 / data.series.length, 64] }),
              points: { show: false },
            }
          : {}),
        ...(data.kind === 'areachart' ? { fill: `${COLOURS[i % COLOURS.length]!}33` } : {}),
        ...(scatter ? { paths: () => null, points: { show: true, size: 5 } } : {}),
      })),
    ],
  }
  current = new uPlot(options, [data.xs, ...data.series.map((s) => s.values)] as uPlot.AlignedData, host)
  return data.kind
}

function drawPie(host: HTMLElement, data: ChartData, width: number): void {
  const values = data.series[0]!.values.map((v) => Math.max(0, v ?? 0))
  const total = values.reduce((a, b) => a + b, 0)
  const size = Math.min(280, width)
  const canvas = document.createElement('canvas')
  const ratio = window.devicePixelRatio || 1
  canvas.width = size * ratio
  canvas.height = size * ratio
  canvas.style.width = `${size}px`
  canvas.style.height = `${size}px`
  canvas.setAttribute('role', 'img')
  canvas.setAttribute('aria-label', `Pie chart of ${data.series[0]!.label} by ${data.xLabel}`)
  const g = canvas.getContext('2d')!
  g.scale(ratio, ratio)
  let angle = -Math.PI / 2
  values.forEach((v, i) => {
    const slice = total > 0 ? (v / total) * 2 * Math.PI : 0
    g.beginPath()
    g.moveTo(size / 2, size / 2)
    g.arc(size / 2, size / 2, size / 2 - 4, angle, angle + slice)
    g.closePath()
    g.fillStyle = COLOURS[i % COLOURS.length]!
    g.fill()
    angle += slice
  })
  const legend = document.createElement('ul')
  legend.className = 'chart-legend'
  data.categories!.forEach((label, i) => {
    const item = document.createElement('li')
    const swatch = document.createElement('span')
    swatch.className = `swatch swatch-${i % COLOURS.length}`
    item.append(swatch, `${label}: ${values[i]}`)
    legend.append(item)
  })
  const wrap = document.createElement('div')
  wrap.className = 'pie'
  wrap.append(canvas, legend)
  host.append(wrap)
}
