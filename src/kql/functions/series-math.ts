/**
 * @module
 * The numerical routines behind the series functions (split out of series-functions.ts, issue 19
 * item 6): statistics and similarity, gap filling, FIR/IIR filters, outlier scores, period
 * detection, decomposition, line/polynomial fitting and the FFT. Plain numbers in, plain numbers
 * or property bags out; series-functions.ts binds them to KQL calls.
 */
import type { DynamicValue, KqlValue } from '../types.js'
import { asArray } from './numeric-helpers.js'

export type Num = number | null
type Bag = { [key: string]: DynamicValue }
// ---------------------------------------------------------------------------------------------
// Basics
// ---------------------------------------------------------------------------------------------

/** A numeric element as a double (an exact long beyond 2^53 too, as Kusto reads it), else null. */
export const num = (v: DynamicValue | undefined): Num => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null)

/** The numeric elements of a dynamic array (null for non-numbers), or null when it is not an array. */
export function numbers(v: KqlValue | undefined): Num[] | null {
  const a = asArray(v)
  return a ? a.map(num) : null
}

export const finite = (x: Num): x is number => x !== null && Number.isFinite(x)

export function sum(xs: readonly number[]): number {
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
export function pearson(a: readonly number[], b: readonly number[]): number {
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

// ---------------------------------------------------------------------------------------------
// Statistics and similarity
// ---------------------------------------------------------------------------------------------

export function stats(xs: readonly Num[], ignoreNonfinite: boolean): Bag {
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

export function pick(bag: Bag, keys: readonly string[]): Bag {
  const out: Bag = {}
  for (const k of keys) out[k] = bag[k] ?? null
  return out
}

/** Pairs of elements where both series are numeric (used by correlations). */
export function pairs(a: readonly Num[], b: readonly Num[]): [number[], number[]] {
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
export function missingMask(raw: readonly DynamicValue[], placeholder: KqlValue | undefined): boolean[] {
  const ph = placeholder === undefined || placeholder === null ? null : placeholder
  return raw.map((v) => v === null || typeof v !== 'number' || (ph !== null && v === ph))
}

export function fillForward(raw: readonly DynamicValue[], missing: readonly boolean[]): DynamicValue[] {
  const out = [...raw]
  let last: DynamicValue | undefined
  for (let i = 0; i < out.length; i++) {
    if (!missing[i]) last = out[i]!
    else if (last !== undefined) out[i] = last
  }
  return out
}

export function fillBackward(raw: readonly DynamicValue[], missing: readonly boolean[]): DynamicValue[] {
  const out = [...raw]
  let next: DynamicValue | undefined
  for (let i = out.length - 1; i >= 0; i--) {
    if (!missing[i]) next = out[i]!
    else if (next !== undefined) out[i] = next
  }
  return out
}

export function fillLinear(
  raw: readonly DynamicValue[],
  missing: readonly boolean[],
  fillEdges: boolean,
  constant: DynamicValue,
): DynamicValue[] {
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

export function fir(xs: readonly Num[], filter: readonly number[], normalize: boolean, center: boolean): DynamicValue[] {
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

export function iir(xs: readonly Num[], b: readonly number[], a: readonly number[]): DynamicValue[] {
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
export function outlierScores(xs: readonly Num[], lowPct: number, highPct: number, ignore?: number): number[] {
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
export function periodScore(xs: readonly number[], p: number): number {
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
export function detectPeriods(
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

export function seasonalComponent(xs: readonly Num[], period: number, training: number): number[] {
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

export function decompose(
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
  const { rsquare, variance, rvariance, ssres } = fitQuality(ys, fit)
  return { rsquare, slope, interception, variance, rvariance, fit, ssres }
}

/** How well `fit` follows `ys`: R², the sample (n - 1) variances of the series and of the residuals. */
function fitQuality(
  ys: readonly number[],
  fit: readonly number[],
): { rsquare: number; variance: number; rvariance: number; ssres: number } {
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
    variance: n > 1 ? sstot / (n - 1) : 0,
    rvariance: n > 1 ? ssres / (n - 1) : 0,
    ssres,
  }
}

export function fitLineBag(ys: readonly number[]): Bag {
  const f = fitLineAt(ys, 1)
  return { rsquare: f.rsquare, slope: f.slope, variance: f.variance, rvariance: f.rvariance, interception: f.interception, line_fit: f.fit }
}

export function fit2Lines(ys: readonly number[]): { flat: Bag; nested: Bag } | null {
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

export function fitPoly(ys: readonly number[], xs: readonly number[], degree: number): Bag | null {
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
  const { rsquare, variance, rvariance } = fitQuality(ys, fit)
  return { rsquare, coefficients: [...coef].reverse(), variance, rvariance, poly_fit: fit }
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

export function fourier(reIn: readonly number[], imIn: readonly number[], inverse: boolean): [number[], number[]] {
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
