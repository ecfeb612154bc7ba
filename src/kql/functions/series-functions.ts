/**
 * @module
 * KQL series functions (see ./README.md): element-wise arithmetic, comparisons and math over
 * numeric dynamic arrays, statistics and similarity, gap filling, FIR/IIR filters, outliers,
 * seasonality and period detection, decomposition and forecasting, line/polynomial fitting and
 * the FFT.
 *
 * Functions that Kusto turns into several columns (`extend series_stats(x)` →
 * `series_stats_x_min`, ...) return one dynamic property bag here whose keys, in order, are the
 * column suffixes listed in `MULTI_COLUMN_SERIES` (see that constant for the expansion rule).
 * Non-numeric elements are treated as missing (null in, null out).
 */
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { inferName } from './aggregate-functions.js'
import { checkArity } from './function-definitions.js'
import type { ArgInfo, ScalarFunction } from './function-types.js'
import { asArray, checkKind, coercer, defineScalar } from './numeric-helpers.js'

type Num = number | null
type Bag = { [key: string]: DynamicValue }

/**
 * Functions whose result Kusto spreads over several columns. The library returns a bag with
 * exactly these keys (in this order). kql-core expands `f(x)` used as a whole `extend`/`project`
 * item into columns named `<f>_<x>_<suffix>` (x = the first argument's column name, inferred like
 * aggregate names), with the listed types; `extend (a, b, ...) = f(x)` names the first columns
 * a, b, ... instead (extend keeps only the named ones; project keeps the rest with default names).
 */
export const MULTI_COLUMN_SERIES: Readonly<Record<string, readonly { readonly suffix: string; readonly type: KqlType }[]>> = {
  series_stats: [
    { suffix: 'min', type: 'real' },
    { suffix: 'min_idx', type: 'long' },
    { suffix: 'max', type: 'real' },
    { suffix: 'max_idx', type: 'long' },
    { suffix: 'avg', type: 'real' },
    { suffix: 'stdev', type: 'real' },
    { suffix: 'variance', type: 'real' },
  ],
  series_fit_line: [
    { suffix: 'rsquare', type: 'real' },
    { suffix: 'slope', type: 'real' },
    { suffix: 'variance', type: 'real' },
    { suffix: 'rvariance', type: 'real' },
    { suffix: 'interception', type: 'real' },
    { suffix: 'line_fit', type: 'dynamic' },
  ],
  series_fit_2lines: [
    { suffix: 'rsquare', type: 'real' },
    { suffix: 'split_idx', type: 'long' },
    { suffix: 'variance', type: 'real' },
    { suffix: 'rvariance', type: 'real' },
    { suffix: 'line_fit', type: 'dynamic' },
    { suffix: 'right_rsquare', type: 'real' },
    { suffix: 'right_slope', type: 'real' },
    { suffix: 'right_interception', type: 'real' },
    { suffix: 'right_variance', type: 'real' },
    { suffix: 'right_rvariance', type: 'real' },
    { suffix: 'left_rsquare', type: 'real' },
    { suffix: 'left_slope', type: 'real' },
    { suffix: 'left_interception', type: 'real' },
    { suffix: 'left_variance', type: 'real' },
    { suffix: 'left_rvariance', type: 'real' },
  ],
  series_fit_poly: [
    { suffix: 'rsquare', type: 'real' },
    { suffix: 'coefficients', type: 'dynamic' },
    { suffix: 'variance', type: 'real' },
    { suffix: 'rvariance', type: 'real' },
    { suffix: 'poly_fit', type: 'dynamic' },
  ],
  series_decompose: [
    { suffix: 'baseline', type: 'dynamic' },
    { suffix: 'seasonal', type: 'dynamic' },
    { suffix: 'trend', type: 'dynamic' },
    { suffix: 'residual', type: 'dynamic' },
  ],
  series_decompose_anomalies: [
    { suffix: 'ad_flag', type: 'dynamic' },
    { suffix: 'ad_score', type: 'dynamic' },
    { suffix: 'baseline', type: 'dynamic' },
  ],
  series_periods_detect: [
    { suffix: 'periods', type: 'dynamic' },
    { suffix: 'scores', type: 'dynamic' },
  ],
  series_periods_validate: [
    { suffix: 'periods', type: 'dynamic' },
    { suffix: 'scores', type: 'dynamic' },
  ],
  series_fft: [
    { suffix: 'real', type: 'dynamic' },
    { suffix: 'imag', type: 'dynamic' },
  ],
  series_ifft: [
    { suffix: 'real', type: 'dynamic' },
    { suffix: 'imag', type: 'dynamic' },
  ],
}

/**
 * The default columns of a multi-column series function called on `arg` (its first argument):
 * `<function>_<name>_<suffix>`, where name is the argument's inferred result name, or empty when
 * it has none (`series_stats(series_add(x, 0))` → `series_stats__min`, as Kusto names it).
 * Undefined when `fn` is not a multi-column function.
 */
export function multiColumnOutputs(fn: string, arg: ArgInfo | undefined): { name: string; type: KqlType }[] | undefined {
  const cols = MULTI_COLUMN_SERIES[fn]
  if (!cols) return undefined
  const base = arg ? (arg.columnName ?? inferName(arg.text) ?? '') : ''
  return cols.map((c) => ({ name: `${fn}_${base}_${c.suffix}`, type: c.type }))
}

// ---------------------------------------------------------------------------------------------
// Basics
// ---------------------------------------------------------------------------------------------

/** A numeric element as a double (an exact long beyond 2^53 too, as Kusto reads it), else null. */
const num = (v: DynamicValue | undefined): Num => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null)

/** The numeric elements of a dynamic array (null for non-numbers), or null when it is not an array. */
function numbers(v: KqlValue | undefined): Num[] | null {
  const a = asArray(v)
  return a ? a.map(num) : null
}

const finite = (x: Num): x is number => x !== null && Number.isFinite(x)

function sum(xs: readonly number[]): number {
  let s = 0
  for (const x of xs) s += x
  return s
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : sum(xs) / xs.length
}

/** Sample variance (n - 1); 0 for a single value. */
function sampleVariance(xs: readonly number[]): number {
  const n = xs.length
  if (n === 0) return NaN
  if (n === 1) return 0
  const m = mean(xs)
  let s = 0
  for (const x of xs) s += (x - m) ** 2
  return s / (n - 1)
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const n = s.length
  if (n === 0) return NaN
  return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2
}

/** Linear-interpolation percentile (0..100) of sorted values. */
function percentileOf(sorted: readonly number[], p: number): number {
  const n = sorted.length
  if (n === 0) return NaN
  const pos = (p / 100) * (n - 1)
  const lo = Math.floor(pos)
  const hi = Math.min(n - 1, lo + 1)
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo)
}

/** Pearson correlation of two equally long numeric vectors; NaN when undefined. */
function pearson(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length)
  if (n < 2) return NaN
  let ma = 0,
    mb = 0
  for (let i = 0; i < n; i++) {
    ma += a[i]!
    mb += b[i]!
  }
  ma /= n
  mb /= n
  let sab = 0,
    saa = 0,
    sbb = 0
  for (let i = 0; i < n; i++) {
    const da = a[i]! - ma
    const db = b[i]! - mb
    sab += da * db
    saa += da * da
    sbb += db * db
  }
  return sab / Math.sqrt(saa * sbb)
}

/** Binds a function of `n` dynamic series plus optional extra parameters. */
function seriesFunction(
  name: string,
  spec: {
    readonly series: number
    readonly extra?: readonly ('number' | 'integer' | 'bool' | 'string' | 'scalar')[]
    readonly optional?: number
    readonly rest?: boolean
    readonly result: KqlType
    readonly impl: (series: (Num[] | null)[], extra: readonly KqlValue[], args: readonly ArgInfo[]) => KqlValue
  },
): ScalarFunction {
  const extra = spec.extra ?? []
  return {
    name,
    bind(args) {
      const max = spec.rest ? Infinity : spec.series + extra.length
      checkArity(name, args, spec.series + extra.length - (spec.optional ?? 0), max)
      for (let i = 0; i < spec.series; i++) checkKind(name, args, i, 'dynamic')
      const converters = args.slice(spec.series).map((a, i) => {
        const kind = extra[Math.min(i, extra.length - 1)] ?? 'scalar'
        if (kind !== 'scalar') checkKind(name, args, spec.series + i, kind)
        return kind === 'scalar' ? (v: KqlValue) => v : coercer(kind, a.type)
      })
      return {
        type: spec.result,
        evaluate(values) {
          const series = values.slice(0, spec.series).map((v) => numbers(v ?? null))
          const more = values.slice(spec.series).map((v, i) => converters[i]!(v ?? null))
          return spec.impl(series, more, args)
        },
      }
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Element-wise operations
// ---------------------------------------------------------------------------------------------

/** An element-wise binary operation; either side may be a numeric scalar (broadcast). */
function elementWise2(name: string, op: (a: number, b: number) => DynamicValue): ScalarFunction {
  return {
    name,
    bind(args) {
      checkArity(name, args, 2)
      const sides = args.map((a, i) => {
        if (a.type === 'dynamic') return { array: true, read: (v: KqlValue) => v }
        checkKind(name, args, i, 'number')
        const c = coercer('number', a.type)
        return { array: false, read: c }
      })
      return {
        type: 'dynamic',
        evaluate(values) {
          const [a, b] = values.map((v, i) => sides[i]!.read(v ?? null))
          const xa = sides[0]!.array ? numbers(a) : null
          const xb = sides[1]!.array ? numbers(b) : null
          if ((sides[0]!.array && !xa) || (sides[1]!.array && !xb)) return null
          const sa = sides[0]!.array ? null : num(a as DynamicValue)
          const sb = sides[1]!.array ? null : num(b as DynamicValue)
          const n = Math.max(xa?.length ?? 0, xb?.length ?? 0)
          if (!xa && !xb) return sa === null || sb === null ? null : [op(sa, sb)]
          const out: DynamicValue[] = new Array(n)
          for (let i = 0; i < n; i++) {
            const x = xa ? (xa[i] ?? null) : sa
            const y = xb ? (xb[i] ?? null) : sb
            out[i] = x === null || y === null ? null : op(x, y)
          }
          return out
        },
      }
    },
  }
}

function elementWise1(name: string, op: (x: number) => number | null): ScalarFunction {
  return defineScalar(name, {
    params: ['dynamic'],
    result: 'dynamic',
    impl: ([s]) => {
      const xs = numbers(s)
      return xs ? xs.map((x) => (x === null ? null : op(x))) : null
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Statistics and similarity
// ---------------------------------------------------------------------------------------------

function stats(xs: readonly Num[], ignoreNonfinite: boolean): Bag {
  const empty: Bag = { min: null, min_idx: null, max: null, max_idx: null, avg: null, stdev: null, variance: null, sum: null, len: null }
  const values: number[] = []
  let min = Infinity,
    max = -Infinity,
    minIdx = -1,
    maxIdx = -1
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!
    if (!finite(x)) {
      if (!ignoreNonfinite) return empty
      continue
    }
    values.push(x)
    if (x < min) {
      min = x
      minIdx = i
    }
    if (x > max) {
      max = x
      maxIdx = i
    }
  }
  if (values.length === 0) return { ...empty, len: 0 }
  const variance = sampleVariance(values)
  return {
    min,
    min_idx: minIdx,
    max,
    max_idx: maxIdx,
    avg: mean(values),
    stdev: Math.sqrt(variance),
    variance,
    sum: sum(values),
    len: values.length,
  }
}

function pick(bag: Bag, keys: readonly string[]): Bag {
  const out: Bag = {}
  for (const k of keys) out[k] = bag[k] ?? null
  return out
}

/** Pairs of elements where both series are numeric (used by correlations). */
function pairs(a: readonly Num[], b: readonly Num[]): [number[], number[]] {
  const n = Math.min(a.length, b.length)
  const xs: number[] = []
  const ys: number[] = []
  for (let i = 0; i < n; i++) {
    const x = a[i]
    const y = b[i]
    if (finite(x ?? null) && finite(y ?? null)) {
      xs.push(x!)
      ys.push(y!)
    }
  }
  return [xs, ys]
}

// ---------------------------------------------------------------------------------------------
// Filling
// ---------------------------------------------------------------------------------------------

/** Marks missing elements: null/non-numeric, or equal to the placeholder when one is given. */
function missingMask(raw: readonly DynamicValue[], placeholder: KqlValue | undefined): boolean[] {
  const ph = placeholder === undefined || placeholder === null ? null : placeholder
  return raw.map((v) => v === null || typeof v !== 'number' || (ph !== null && v === ph))
}

function fillForward(raw: readonly DynamicValue[], missing: readonly boolean[]): DynamicValue[] {
  const out = [...raw]
  let last: DynamicValue | undefined
  for (let i = 0; i < out.length; i++) {
    if (!missing[i]) last = out[i]!
    else if (last !== undefined) out[i] = last
  }
  return out
}

function fillBackward(raw: readonly DynamicValue[], missing: readonly boolean[]): DynamicValue[] {
  const out = [...raw]
  let next: DynamicValue | undefined
  for (let i = out.length - 1; i >= 0; i--) {
    if (!missing[i]) next = out[i]!
    else if (next !== undefined) out[i] = next
  }
  return out
}

function fillLinear(raw: readonly DynamicValue[], missing: readonly boolean[], fillEdges: boolean, constant: DynamicValue): DynamicValue[] {
  const known: number[] = []
  missing.forEach((m, i) => {
    if (!m) known.push(i)
  })
  if (known.length === 0) return raw.map(() => constant)
  const out = [...raw]
  for (let k = 0; k + 1 < known.length; k++) {
    const i0 = known[k]!
    const i1 = known[k + 1]!
    const y0 = raw[i0] as number
    const y1 = raw[i1] as number
    for (let i = i0 + 1; i < i1; i++) out[i] = y0 + ((y1 - y0) * (i - i0)) / (i1 - i0)
  }
  if (fillEdges) {
    const first = known[0]!
    const last = known[known.length - 1]!
    for (let i = 0; i < first; i++) out[i] = raw[first]!
    for (let i = last + 1; i < out.length; i++) out[i] = raw[last]!
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------------------------

function fir(xs: readonly Num[], filter: readonly number[], normalize: boolean, center: boolean): DynamicValue[] {
  const total = normalize ? sum(filter) : 1
  const n = xs.length
  const k = filter.length
  const shift = center ? Math.floor(k / 2) : 0
  const out: DynamicValue[] = new Array(n)
  for (let i = 0; i < n; i++) {
    let acc = 0
    for (let j = 0; j < k; j++) {
      const idx = i + shift - j
      const x = idx >= 0 && idx < n ? xs[idx] : 0
      acc += filter[j]! * (x ?? 0)
    }
    out[i] = acc / total
  }
  return out
}

function iir(xs: readonly Num[], b: readonly number[], a: readonly number[]): DynamicValue[] {
  const a0 = a[0]!
  const y: number[] = []
  for (let i = 0; i < xs.length; i++) {
    let acc = 0
    for (let j = 0; j < b.length; j++) if (i - j >= 0) acc += b[j]! * (xs[i - j] ?? 0)
    for (let j = 1; j < a.length; j++) if (i - j >= 0) acc -= a[j]! * y[i - j]!
    y.push(acc / a0)
  }
  return y
}

// ---------------------------------------------------------------------------------------------
// Outliers, seasonality, periods, decomposition
// ---------------------------------------------------------------------------------------------

/** Tukey fence scores: (x - Q3)/IQR above Q3, (x - Q1)/IQR below Q1, 0 inside and for missing. */
function outlierScores(xs: readonly Num[], lowPct: number, highPct: number, ignore?: number): number[] {
  const valid = xs.filter((x): x is number => finite(x) && x !== ignore).sort((a, b) => a - b)
  const q1 = percentileOf(valid, lowPct)
  const q3 = percentileOf(valid, highPct)
  const iqr = q3 - q1
  return xs.map((x) => {
    if (!finite(x) || x === ignore || valid.length === 0) return 0
    if (x > q3) return (x - q3) / iqr
    if (x < q1) return (x - q1) / iqr
    return 0
  })
}

/** Autocorrelation score of a lag: Pearson correlation of the series with itself shifted, at least 0. */
function periodScore(xs: readonly number[], p: number): number {
  const n = xs.length
  if (p < 4 || p > n / 2) return 0
  const r = pearson(xs.slice(0, n - p), xs.slice(p))
  return Number.isFinite(r) && r > 0 ? r : 0
}

/** Internal significance a detected period must reach (matches the documented detections). */
const MIN_PERIOD_SCORE = 0.7

/**
 * Finds significant periods: integer lags (at least 4 points, fewer than half the series) whose
 * autocorrelation score is a local maximum, dropping multiples of a stronger period.
 */
function detectPeriods(
  xs: readonly Num[],
  minP: number,
  maxP: number,
  count: number,
  threshold = MIN_PERIOD_SCORE,
): { periods: number[]; scores: number[] } {
  const values = xs.map((x) => (finite(x) ? x : 0))
  const n = values.length
  const lo = Math.max(4, Math.ceil(minP))
  const hi = Math.min(Math.floor(maxP), Math.floor((n - 1) / 2))
  const score = (p: number): number => (p < 4 || p >= n / 2 ? 0 : periodScore(values, p))
  const candidates: { p: number; s: number }[] = []
  for (let p = lo; p <= hi; p++) {
    const s = score(p)
    if (s >= threshold && s >= score(p - 1) && s >= score(p + 1)) candidates.push({ p, s })
  }
  // A multiple of a detected period repeats it (28 for 14): keep the fundamental only.
  const fundamental = candidates.filter((c) => !candidates.some((d) => d.p < c.p && c.p % d.p === 0))
  fundamental.sort((a, b) => b.s - a.s || a.p - b.p)
  const chosen: { p: number; s: number }[] = []
  for (const c of fundamental) {
    chosen.push(c)
    if (chosen.length >= count) break
  }
  const periods = chosen.map((c) => c.p)
  const scores = chosen.map((c) => c.s)
  while (periods.length < count) {
    periods.push(0)
    scores.push(0)
  }
  return { periods, scores }
}

function seasonalComponent(xs: readonly Num[], period: number, training: number): number[] {
  const n = xs.length
  if (period <= 0) return new Array<number>(n).fill(0)
  const phases: number[][] = Array.from({ length: period }, () => [])
  for (let i = 0; i < training; i++) {
    const x = xs[i]
    if (finite(x ?? null)) phases[i % period]!.push(x!)
  }
  const med = phases.map((ph) => (ph.length ? median(ph) : 0))
  return Array.from({ length: n }, (_, i) => med[i % period]!)
}

function detectSeason(xs: readonly Num[], seasonality: number, threshold: number, training: number): number {
  if (seasonality >= 0) return seasonality
  const { periods } = detectPeriods(xs.slice(0, training), 4, training / 2, 1, threshold)
  return periods[0] ?? 0
}

/** Least-squares line over (x, y) pairs: slope and interception. */
function lineFit(xs: readonly number[], ys: readonly number[]): { slope: number; interception: number } {
  const n = xs.length
  const mx = mean(xs)
  const my = mean(ys)
  let sxy = 0,
    sxx = 0
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my)
    sxx += (xs[i]! - mx) ** 2
  }
  const slope = sxx === 0 ? 0 : sxy / sxx
  return { slope, interception: my - slope * mx }
}

function decompose(
  xs: readonly Num[],
  seasonality: number,
  trend: string,
  testPoints: number,
  threshold: number,
): { baseline: number[]; seasonal: number[]; trend: number[]; residual: Num[] } {
  const n = xs.length
  const training = Math.max(0, n - Math.max(0, testPoints))
  const period = detectSeason(xs, seasonality, threshold, training)
  const seasonal = seasonalComponent(xs, period, training)
  const deseasoned: [number, number][] = []
  for (let i = 0; i < training; i++) {
    const x = xs[i]
    if (finite(x ?? null)) deseasoned.push([i, x! - seasonal[i]!])
  }
  let trendSeries: number[]
  if (trend === 'none') trendSeries = new Array<number>(n).fill(0)
  else if (trend === 'linefit') {
    const { slope, interception } = lineFit(
      deseasoned.map(([i]) => i),
      deseasoned.map(([, v]) => v),
    )
    trendSeries = Array.from({ length: n }, (_, i) => slope * i + interception)
  } else {
    const avg = deseasoned.length ? mean(deseasoned.map(([, v]) => v)) : 0
    trendSeries = new Array<number>(n).fill(avg)
  }
  const baseline = seasonal.map((s, i) => s + trendSeries[i]!)
  const residual = xs.map((x, i) => (finite(x) ? x - baseline[i]! : null))
  return { baseline, seasonal, trend: trendSeries, residual }
}

// ---------------------------------------------------------------------------------------------
// Regression
// ---------------------------------------------------------------------------------------------

interface LineStats {
  rsquare: number
  slope: number
  interception: number
  variance: number
  rvariance: number
  fit: number[]
  ssres: number
}

/** series_fit_line over positions 1..n (Kusto's x axis), with sample (n - 1) variances. */
function fitLineAt(ys: readonly number[], firstX: number): LineStats {
  const xs = ys.map((_, i) => firstX + i)
  const { slope, interception } = lineFit(xs, ys)
  const fit = xs.map((x) => slope * x + interception)
  const m = mean(ys)
  let ssres = 0,
    sstot = 0
  ys.forEach((y, i) => {
    ssres += (y - fit[i]!) ** 2
    sstot += (y - m) ** 2
  })
  const n = ys.length
  return {
    rsquare: sstot === 0 ? 1 : 1 - ssres / sstot,
    slope,
    interception,
    variance: n > 1 ? sstot / (n - 1) : 0,
    rvariance: n > 1 ? ssres / (n - 1) : 0,
    fit,
    ssres,
  }
}

function fitLineBag(ys: readonly number[]): Bag {
  const f = fitLineAt(ys, 1)
  return { rsquare: f.rsquare, slope: f.slope, variance: f.variance, rvariance: f.rvariance, interception: f.interception, line_fit: f.fit }
}

function fit2Lines(ys: readonly number[]): { flat: Bag; nested: Bag } | null {
  const n = ys.length
  if (n < 4) return null
  const m = mean(ys)
  const sstot = ys.reduce((s, y) => s + (y - m) ** 2, 0)
  let best: { split: number; left: LineStats; right: LineStats; r2: number } | null = null
  for (let split = 2; split <= n - 2; split++) {
    const left = fitLineAt(ys.slice(0, split), 1)
    const right = fitLineAt(ys.slice(split), split + 1)
    const r2 = sstot === 0 ? 1 : 1 - (left.ssres + right.ssres) / sstot
    if (!best || r2 > best.r2) best = { split, left, right, r2 }
  }
  const { split, left, right, r2 } = best!
  const side = (s: LineStats): Bag => ({
    rsquare: s.rsquare,
    slope: s.slope,
    interception: s.interception,
    variance: s.variance,
    rvariance: s.rvariance,
  })
  const common: Bag = {
    rsquare: r2,
    split_idx: split,
    variance: n > 1 ? sstot / (n - 1) : 0,
    rvariance: n > 1 ? (left.ssres + right.ssres) / (n - 1) : 0,
    line_fit: [...left.fit, ...right.fit],
  }
  const flat: Bag = { ...common }
  for (const [prefix, s] of [
    ['right', right],
    ['left', left],
  ] as const) {
    for (const [k, v] of Object.entries(side(s))) flat[`${prefix}_${k}`] = v
  }
  return { flat, nested: { ...common, right: side(right), left: side(left) } }
}

/** Solves A·x = b (Gaussian elimination with partial pivoting); null when singular. */
function solve(a: number[][], b: number[]): number[] | null {
  const n = b.length
  const m = a.map((row, i) => [...row, b[i]!])
  for (let c = 0; c < n; c++) {
    let p = c
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r
    if (Math.abs(m[p]![c]!) < 1e-300) return null
    ;[m[c], m[p]] = [m[p]!, m[c]!]
    for (let r = c + 1; r < n; r++) {
      const f = m[r]![c]! / m[c]![c]!
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!
    }
  }
  const x = new Array<number>(n).fill(0)
  for (let r = n - 1; r >= 0; r--) {
    let s = m[r]![n]!
    for (let k = r + 1; k < n; k++) s -= m[r]![k]! * x[k]!
    x[r] = s / m[r]![r]!
  }
  return x
}

function fitPoly(ys: readonly number[], xs: readonly number[], degree: number): Bag | null {
  const d = Math.max(0, Math.floor(degree))
  const size = d + 1
  const ata = Array.from({ length: size }, () => new Array<number>(size).fill(0))
  const aty = new Array<number>(size).fill(0)
  for (let i = 0; i < ys.length; i++) {
    const pw: number[] = [1]
    for (let k = 1; k <= 2 * d; k++) pw.push(pw[k - 1]! * xs[i]!)
    for (let r = 0; r < size; r++) {
      aty[r]! += pw[r]! * ys[i]!
      for (let c = 0; c < size; c++) ata[r]![c]! += pw[r + c]!
    }
  }
  const coef = solve(ata, aty)
  if (!coef) return null
  const fit = xs.map((x) => coef.reduce((s, c, k) => s + c * x ** k, 0))
  const m = mean([...ys])
  let ssres = 0,
    sstot = 0
  ys.forEach((y, i) => {
    ssres += (y - fit[i]!) ** 2
    sstot += (y - m) ** 2
  })
  const n = ys.length
  return {
    rsquare: sstot === 0 ? 1 : 1 - ssres / sstot,
    coefficients: [...coef].reverse(),
    variance: n > 1 ? sstot / (n - 1) : 0,
    rvariance: n > 1 ? ssres / (n - 1) : 0,
    poly_fit: fit,
  }
}

// ---------------------------------------------------------------------------------------------
// Fourier transform
// ---------------------------------------------------------------------------------------------

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0
}

/** In-place iterative radix-2 FFT. */
function fftRadix2(re: number[], im: number[], inverse: boolean): void {
  const n = re.length
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1
    for (; j & bit; bit >>= 1) j ^= bit
    j ^= bit
    if (i < j) {
      ;[re[i], re[j]] = [re[j]!, re[i]!]
      ;[im[i], im[j]] = [im[j]!, im[i]!]
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const ang = ((inverse ? 2 : -2) * Math.PI) / len
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < len / 2; k++) {
        const wr = Math.cos(ang * k)
        const wi = Math.sin(ang * k)
        const ur = re[i + k]!,
          ui = im[i + k]!
        const vr = re[i + k + len / 2]! * wr - im[i + k + len / 2]! * wi
        const vi = re[i + k + len / 2]! * wi + im[i + k + len / 2]! * wr
        re[i + k] = ur + vr
        im[i + k] = ui + vi
        re[i + k + len / 2] = ur - vr
        im[i + k + len / 2] = ui - vi
      }
    }
  }
}

function fourier(reIn: readonly number[], imIn: readonly number[], inverse: boolean): [number[], number[]] {
  const n = reIn.length
  let re = [...reIn]
  let im = [...imIn]
  if (isPowerOfTwo(n)) fftRadix2(re, im, inverse)
  else {
    const sign = inverse ? 1 : -1
    const outRe = new Array<number>(n).fill(0)
    const outIm = new Array<number>(n).fill(0)
    for (let k = 0; k < n; k++) {
      let sr = 0,
        si = 0
      for (let t = 0; t < n; t++) {
        const ang = (sign * 2 * Math.PI * ((k * t) % n)) / n
        const c = Math.cos(ang),
          s = Math.sin(ang)
        sr += re[t]! * c - im[t]! * s
        si += re[t]! * s + im[t]! * c
      }
      outRe[k] = sr
      outIm[k] = si
    }
    re = outRe
    im = outIm
  }
  if (inverse) {
    re = re.map((x) => x / n)
    im = im.map((x) => x / n)
  }
  return [re, im]
}

// ---------------------------------------------------------------------------------------------
// The family
// ---------------------------------------------------------------------------------------------

const zeros = (xs: readonly Num[]): number[] => xs.map((x) => (finite(x) ? x : 0))

const firFn: ScalarFunction = seriesFunction('series_fir', {
  series: 2,
  extra: ['bool', 'bool'],
  optional: 2,
  result: 'dynamic',
  impl: ([xs, filter], [normalize, center]) => {
    if (!xs || !filter || filter.length === 0 || filter.some((f) => f === null)) return null
    const coefs = filter as number[]
    const hasNegative = coefs.some((c) => c < 0)
    const norm = normalize === undefined || normalize === null ? !hasNegative : normalize === true
    if (norm && hasNegative) return null
    return fir(xs, coefs, norm, center === true)
  },
})

const iirFn: ScalarFunction = seriesFunction('series_iir', {
  series: 3,
  result: 'dynamic',
  impl: ([xs, b, a]) => {
    if (!xs || !b || !a || a.length === 0 || b.some((x) => x === null) || a.some((x) => x === null) || a[0] === 0) return null
    return iir(xs, b as number[], a as number[])
  },
})

function fillFunction(name: string, kind: 'forward' | 'backward'): ScalarFunction {
  return {
    name,
    bind(args) {
      checkArity(name, args, 1, 2)
      checkKind(name, args, 0, 'dynamic')
      return {
        type: 'dynamic',
        evaluate([s, ph]) {
          const raw = asArray(s ?? null)
          if (!raw) return null
          const missing = missingMask(raw, ph ?? null)
          return kind === 'forward' ? fillForward(raw, missing) : fillBackward(raw, missing)
        },
      }
    },
  }
}

const fillConst: ScalarFunction = {
  name: 'series_fill_const',
  bind(args) {
    checkArity('series_fill_const', args, 1, 3)
    checkKind('series_fill_const', args, 0, 'dynamic')
    const t = args[1]?.type ?? 'long'
    return {
      type: 'dynamic',
      evaluate([s, c, ph]) {
        const raw = asArray(s ?? null)
        if (!raw) return null
        const fill =
          c === undefined ? 0 : typeof c === 'bigint' ? Number(c) : t === 'string' ? (c as string) : ((c ?? null) as DynamicValue)
        const missing = missingMask(raw, ph ?? null)
        return raw.map((v, i) => (missing[i] ? fill : v))
      },
    }
  },
}

const fillLinearFn: ScalarFunction = {
  name: 'series_fill_linear',
  bind(args) {
    checkArity('series_fill_linear', args, 1, 4)
    checkKind('series_fill_linear', args, 0, 'dynamic')
    if (args[2]) checkKind('series_fill_linear', args, 2, 'bool')
    return {
      type: 'dynamic',
      evaluate([s, ph, edges, constant]) {
        const raw = asArray(s ?? null)
        if (!raw) return null
        const missing = missingMask(raw, ph ?? null)
        const fillEdges = edges === undefined || edges === null ? true : edges === true
        const c = args.length >= 4 ? (typeof constant === 'number' ? constant : null) : 0
        return fillLinear(raw, missing, fillEdges, c)
      },
    }
  },
}

const outliersFn: ScalarFunction = seriesFunction('series_outliers', {
  series: 1,
  extra: ['string', 'number', 'number', 'number', 'integer'],
  optional: 5,
  result: 'dynamic',
  impl: ([xs], [kind, ignore, minP, maxP]) => {
    if (!xs) return null
    const k = typeof kind === 'string' && kind !== '' ? kind.toLowerCase() : 'ctukey'
    if (k !== 'tukey' && k !== 'ctukey') return null
    const lo = k === 'tukey' ? 25 : typeof minP === 'number' ? minP : 10
    const hi = k === 'tukey' ? 75 : typeof maxP === 'number' ? maxP : 90
    return outlierScores(xs, lo, hi, typeof ignore === 'number' ? ignore : undefined)
  },
})

const seasonalFn: ScalarFunction = seriesFunction('series_seasonal', {
  series: 1,
  extra: ['integer', 'integer'],
  optional: 2,
  result: 'dynamic',
  impl: ([xs], [period, testPoints]) => {
    if (!xs) return null
    const training = Math.max(0, xs.length - (typeof testPoints === 'number' ? testPoints : 0))
    const p = typeof period === 'number' ? period : -1
    const resolved = p === -1 ? (detectPeriods(xs.slice(0, training), 4, training / 2, 1, 0.7).periods[0] ?? 0) : p > 0 ? p : 0
    return seasonalComponent(xs, resolved, training)
  },
})

const periodsDetect: ScalarFunction = seriesFunction('series_periods_detect', {
  series: 1,
  extra: ['number', 'number', 'integer'],
  result: 'dynamic',
  impl: ([xs], [minP, maxP, count]) => {
    if (!xs || typeof minP !== 'number' || typeof maxP !== 'number' || typeof count !== 'number') return null
    const { periods, scores } = detectPeriods(xs, minP, maxP, Math.max(0, count))
    return { periods, scores }
  },
})

const periodsValidate: ScalarFunction = seriesFunction('series_periods_validate', {
  series: 1,
  extra: ['number'],
  rest: true,
  result: 'dynamic',
  impl: ([xs], periods) => {
    if (!xs) return null
    const values = zeros(xs)
    const ps = periods.map((p) => (typeof p === 'number' ? p : 0))
    return { periods: ps, scores: ps.map((p) => periodScore(values, Math.round(p))) }
  },
})

function decomposeArgs(
  seasonality: KqlValue,
  trend: KqlValue,
  testPoints: KqlValue,
  threshold: KqlValue,
  defaultTrend: string,
): [number, string, number, number] {
  return [
    typeof seasonality === 'number' ? seasonality : -1,
    typeof trend === 'string' && trend !== '' ? trend.toLowerCase() : defaultTrend,
    typeof testPoints === 'number' ? testPoints : 0,
    typeof threshold === 'number' ? threshold : 0.6,
  ]
}

const decomposeFn: ScalarFunction = seriesFunction('series_decompose', {
  series: 1,
  extra: ['integer', 'string', 'integer', 'number'],
  optional: 4,
  result: 'dynamic',
  impl: ([xs], [s, t, tp, th]) => {
    if (!xs) return null
    const d = decompose(xs, ...decomposeArgs(s ?? null, t ?? null, tp ?? null, th ?? null, 'avg'))
    return { baseline: d.baseline, seasonal: d.seasonal, trend: d.trend, residual: d.residual }
  },
})

const decomposeAnomalies: ScalarFunction = seriesFunction('series_decompose_anomalies', {
  series: 1,
  extra: ['number', 'integer', 'string', 'integer', 'string', 'number'],
  optional: 6,
  result: 'dynamic',
  impl: ([xs], [threshold, s, t, tp, method, th]) => {
    if (!xs) return null
    const k = typeof threshold === 'number' ? threshold : 1.5
    const d = decompose(xs, ...decomposeArgs(s ?? null, t ?? null, tp ?? null, th ?? null, 'avg'))
    const m = typeof method === 'string' && method !== '' ? method.toLowerCase() : 'ctukey'
    const score = outlierScores(d.residual, m === 'tukey' ? 25 : 10, m === 'tukey' ? 75 : 90)
    return { ad_flag: score.map((x) => (x > k ? 1 : x < -k ? -1 : 0)), ad_score: score, baseline: d.baseline }
  },
})

const decomposeForecast: ScalarFunction = seriesFunction('series_decompose_forecast', {
  series: 1,
  extra: ['integer', 'integer', 'string', 'number'],
  optional: 3,
  result: 'dynamic',
  impl: ([xs], [points, s, t, th]) => {
    if (!xs || typeof points !== 'number') return null
    return decompose(xs, ...decomposeArgs(s ?? null, t ?? null, points, th ?? null, 'linefit')).baseline
  },
})

function numericOnly(xs: Num[] | null | undefined): number[] | null {
  if (!xs || xs.some((x) => !finite(x))) return null
  return xs as number[]
}

const fitPolyFn: ScalarFunction = {
  name: 'series_fit_poly',
  bind(args) {
    checkArity('series_fit_poly', args, 1, 3)
    checkKind('series_fit_poly', args, 0, 'dynamic')
    if (args[1]) checkKind('series_fit_poly', args, 1, 'dynamic')
    if (args[2]) checkKind('series_fit_poly', args, 2, 'integer')
    return {
      type: 'dynamic',
      evaluate([y, x, d]) {
        const ys = numericOnly(numbers(y ?? null))
        if (!ys) return null
        const xv = x === undefined || x === null ? null : numericOnly(numbers(x))
        if (x !== undefined && x !== null && (!xv || xv.length !== ys.length)) return null
        const xs = xv ?? ys.map((_, i) => i + 1)
        return fitPoly(ys, xs, typeof d === 'number' ? d : 1)
      },
    }
  },
}

function fourierFunction(name: string, inverse: boolean): ScalarFunction {
  return seriesFunction(name, {
    series: 2,
    optional: 1,
    result: 'dynamic',
    impl: ([re, im]) => {
      if (!re) return null
      const r = zeros(re)
      const i = im ? r.map((_, k) => (finite(im[k] ?? null) ? im[k]! : 0)) : r.map(() => 0)
      const [outRe, outIm] = fourier(r, i, inverse)
      return { real: outRe, imag: outIm }
    },
  })
}

const statsFunction = (name: string, keys: readonly string[]): ScalarFunction =>
  seriesFunction(name, {
    series: 1,
    extra: ['bool'],
    optional: 1,
    result: 'dynamic',
    impl: ([xs], [ignore]) => (xs ? pick(stats(xs, ignore === true), keys) : null),
  })

/**
 * series_dot_product(s1, s2): either side may be a numeric scalar (broadcast); the longer series
 * is truncated to the shorter; non-numeric elements are ignored; an empty input gives null.
 */
const dotProduct: ScalarFunction = {
  name: 'series_dot_product',
  bind(args) {
    checkArity('series_dot_product', args, 2)
    const sides = args.map((a, i) => {
      if (a.type === 'dynamic') return null
      checkKind('series_dot_product', args, i, 'number')
      return coercer('number', a.type)
    })
    if (sides[0] && sides[1]) checkKind('series_dot_product', args, 0, 'dynamic')
    return {
      type: 'real',
      evaluate(values) {
        const read = (i: number, other: Num[] | null): Num[] | null => {
          const conv = sides[i]
          if (!conv) return numbers(values[i] ?? null)
          const x = conv(values[i] ?? null)
          return other && typeof x === 'number' ? other.map(() => x) : null
        }
        const a0 = sides[0] ? null : numbers(values[0] ?? null)
        const b0 = sides[1] ? null : numbers(values[1] ?? null)
        const a = a0 ?? read(0, b0)
        const b = b0 ?? read(1, a0)
        if (!a || !b || a.length === 0 || b.length === 0) return null
        const [xs, ys] = pairs(a, b)
        return xs.reduce((s, x, i) => s + x * ys[i]!, 0)
      },
    }
  },
}

const cosineSimilarity: ScalarFunction = seriesFunction('series_cosine_similarity', {
  series: 2,
  extra: ['number', 'number'],
  optional: 2,
  result: 'real',
  impl: ([a, b], [m1, m2]) => {
    if (!a || !b) return null
    const [xs, ys] = pairs(a, b)
    const dot = xs.reduce((s, x, i) => s + x * ys[i]!, 0)
    const na = typeof m1 === 'number' ? m1 : Math.sqrt(xs.reduce((s, x) => s + x * x, 0))
    const nb = typeof m2 === 'number' ? m2 : Math.sqrt(ys.reduce((s, y) => s + y * y, 0))
    return dot / (na * nb)
  },
})

const logOrNull =
  (f: (x: number) => number) =>
  (x: number): number | null =>
    x < 0 ? null : f(x)

export const seriesFunctions: readonly ScalarFunction[] = [
  elementWise2('series_add', (a, b) => a + b),
  elementWise2('series_subtract', (a, b) => a - b),
  elementWise2('series_multiply', (a, b) => a * b),
  elementWise2('series_divide', (a, b) => a / b),
  elementWise2('series_pow', (a, b) => Math.pow(a, b)),
  elementWise2('series_equals', (a, b) => a === b),
  elementWise2('series_not_equals', (a, b) => a !== b),
  elementWise2('series_greater', (a, b) => a > b),
  elementWise2('series_greater_equals', (a, b) => a >= b),
  elementWise2('series_less', (a, b) => a < b),
  elementWise2('series_less_equals', (a, b) => a <= b),
  elementWise1('series_abs', Math.abs),
  elementWise1('series_acos', (x) => (x < -1 || x > 1 ? null : Math.acos(x))),
  elementWise1('series_asin', (x) => (x < -1 || x > 1 ? null : Math.asin(x))),
  elementWise1('series_atan', Math.atan),
  elementWise1('series_ceiling', Math.ceil),
  elementWise1('series_floor', Math.floor),
  elementWise1('series_cos', Math.cos),
  elementWise1('series_sin', Math.sin),
  elementWise1('series_tan', Math.tan),
  elementWise1('series_exp', Math.exp),
  elementWise1('series_log', logOrNull(Math.log)),
  elementWise1('series_sign', (x) => (Number.isNaN(x) ? NaN : x > 0 ? 1 : x < 0 ? -1 : 0)),
  seriesFunction('series_sum', { series: 1, result: 'real', impl: ([xs]) => (xs ? sum(xs.filter(finite)) : null) }),
  // like series_sum: elements that are not finite numbers are left out
  seriesFunction('series_product', {
    series: 1,
    result: 'real',
    impl: ([xs]) => (xs ? xs.filter(finite).reduce((p, x) => p * x, 1) : null),
  }),
  seriesFunction('series_magnitude', {
    series: 1,
    result: 'real',
    impl: ([xs]) => (xs ? Math.sqrt(sum(xs.filter(finite).map((x) => x * x))) : null),
  }),
  dotProduct,
  seriesFunction('series_pearson_correlation', {
    series: 2,
    result: 'real',
    impl: ([a, b]) => {
      // documented: a non-numeric element or arrays of different sizes give null
      if (!a || !b || a.length !== b.length || a.some((x) => !finite(x)) || b.some((x) => !finite(x))) return null
      return pearson(a as number[], b as number[])
    },
  }),
  cosineSimilarity,
  statsFunction(
    'series_stats',
    MULTI_COLUMN_SERIES['series_stats']!.map((c) => c.suffix),
  ),
  statsFunction('series_stats_dynamic', ['min', 'min_idx', 'max', 'max_idx', 'avg', 'stdev', 'variance', 'sum', 'len']),
  fillFunction('series_fill_forward', 'forward'),
  fillFunction('series_fill_backward', 'backward'),
  fillConst,
  fillLinearFn,
  firFn,
  iirFn,
  outliersFn,
  seasonalFn,
  periodsDetect,
  periodsValidate,
  decomposeFn,
  decomposeAnomalies,
  decomposeForecast,
  seriesFunction('series_fit_line', {
    series: 1,
    result: 'dynamic',
    impl: ([xs]) => {
      const ys = numericOnly(xs)
      return ys && ys.length > 0 ? fitLineBag(ys) : null
    },
  }),
  seriesFunction('series_fit_line_dynamic', {
    series: 1,
    result: 'dynamic',
    impl: ([xs]) => {
      const ys = numericOnly(xs)
      return ys && ys.length > 0 ? fitLineBag(ys) : null
    },
  }),
  seriesFunction('series_fit_2lines', {
    series: 1,
    result: 'dynamic',
    impl: ([xs]) => {
      const ys = numericOnly(xs)
      return ys ? (fit2Lines(ys)?.flat ?? null) : null
    },
  }),
  seriesFunction('series_fit_2lines_dynamic', {
    series: 1,
    result: 'dynamic',
    impl: ([xs]) => {
      const ys = numericOnly(xs)
      return ys ? (fit2Lines(ys)?.nested ?? null) : null
    },
  }),
  fitPolyFn,
  fourierFunction('series_fft', false),
  fourierFunction('series_ifft', true),
]
