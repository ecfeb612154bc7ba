/**
 * @module
 * KQL series functions (see ./README.md): element-wise arithmetic, comparisons and math over
 * numeric dynamic arrays, statistics and similarity, gap filling, FIR/IIR filters, outliers,
 * seasonality and period detection, decomposition and forecasting, line/polynomial fitting and
 * the FFT. The numerical routines are in ./series-math.ts; this file binds them to KQL calls.
 *
 * Functions that Kusto turns into several columns (`extend series_stats(x)` →
 * `series_stats_x_min`, ...) return one dynamic property bag here whose keys, in order, are the
 * column suffixes listed in `MULTI_COLUMN_SERIES` (see that constant for the expansion rule).
 * Non-numeric elements are treated as missing (null in, null out).
 */
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { inferName } from './aggregate-definitions.js'
import { defineScalar, expectKind } from './function-definitions.js'
import type { ArgInfo, ScalarFunction } from './function-types.js'
import { asArray, coercer } from './numeric-helpers.js'
import type { ParamKind } from './param-kinds.js'
import {
  decompose,
  detectPeriods,
  fillBackward,
  fillForward,
  fillLinear,
  finite,
  fir,
  fit2Lines,
  fitLineBag,
  fitPoly,
  fourier,
  iir,
  missingMask,
  type Num,
  num,
  numbers,
  outlierScores,
  pairs,
  pearson,
  periodScore,
  pick,
  seasonalComponent,
  stats,
  sum,
} from './series-math.js'

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
  const seriesKinds = Array.from({ length: spec.series }, (): ParamKind => 'dynamic')
  return defineScalar({
    name,
    // without extra parameters, arguments past the series (rest) are any scalar
    params: [...seriesKinds, ...(extra.length > 0 ? extra : (['scalar'] as const))],
    min: spec.series + extra.length - (spec.optional ?? 0),
    max: spec.rest ? Infinity : spec.series + extra.length,
    result: spec.result,
    bind(args) {
      const converters = args.slice(spec.series).map((a, i) => {
        const kind = extra[Math.min(i, extra.length - 1)] ?? 'scalar'
        return kind === 'scalar' ? (v: KqlValue) => v : coercer(kind, a.type)
      })
      return (values) => {
        const series = values.slice(0, spec.series).map((v) => numbers(v ?? null))
        const more = values.slice(spec.series).map((v, i) => converters[i]!(v ?? null))
        return spec.impl(series, more, args)
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Element-wise operations
// ---------------------------------------------------------------------------------------------

/** An element-wise binary operation; either side may be a numeric scalar (broadcast). */
function elementWise2(name: string, op: (a: number, b: number) => DynamicValue): ScalarFunction {
  return defineScalar({
    name,
    params: ['number', 'number'],
    result: 'dynamic',
    bind(args) {
      const sides = args.map((a) => {
        if (a.type === 'dynamic') return { array: true, read: (v: KqlValue) => v }
        const c = coercer('number', a.type)
        return { array: false, read: c }
      })
      return (values) => {
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
      }
    },
  })
}

function elementWise1(name: string, op: (x: number) => number | null): ScalarFunction {
  return defineScalar({
    name,
    params: ['dynamic'],
    result: 'dynamic',
    impl: ([s]) => {
      const xs = numbers(s)
      return xs ? xs.map((x) => (x === null ? null : op(x))) : null
    },
  })
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
  return defineScalar({
    name,
    params: ['dynamic', 'scalar'],
    min: 1,
    result: 'dynamic',
    bind() {
      return ([s, ph]) => {
        const raw = asArray(s ?? null)
        if (!raw) return null
        const missing = missingMask(raw, ph ?? null)
        return kind === 'forward' ? fillForward(raw, missing) : fillBackward(raw, missing)
      }
    },
  })
}

const fillConst = defineScalar({
  name: 'series_fill_const',
  params: ['dynamic', 'scalar', 'scalar'],
  min: 1,
  result: 'dynamic',
  bind(args) {
    const t = args[1]?.type ?? 'long'
    return ([s, c, ph]) => {
      const raw = asArray(s ?? null)
      if (!raw) return null
      const fill = c === undefined ? 0 : typeof c === 'bigint' ? Number(c) : t === 'string' ? (c as string) : ((c ?? null) as DynamicValue)
      const missing = missingMask(raw, ph ?? null)
      return raw.map((v, i) => (missing[i] ? fill : v))
    }
  },
})

const fillLinearFn = defineScalar({
  name: 'series_fill_linear',
  params: ['dynamic', 'scalar', 'bool', 'scalar'],
  min: 1,
  result: 'dynamic',
  bind(args) {
    return ([s, ph, edges, constant]) => {
      const raw = asArray(s ?? null)
      if (!raw) return null
      const missing = missingMask(raw, ph ?? null)
      const fillEdges = edges === undefined || edges === null ? true : edges === true
      const c = args.length >= 4 ? (typeof constant === 'number' ? constant : null) : 0
      return fillLinear(raw, missing, fillEdges, c)
    }
  },
})

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

const fitPolyFn = defineScalar({
  name: 'series_fit_poly',
  params: ['dynamic', 'dynamic', 'integer'],
  min: 1,
  result: 'dynamic',
  bind() {
    return ([y, x, d]) => {
      const ys = numericOnly(numbers(y ?? null))
      if (!ys) return null
      const xv = x === undefined || x === null ? null : numericOnly(numbers(x))
      if (x !== undefined && x !== null && (!xv || xv.length !== ys.length)) return null
      const xs = xv ?? ys.map((_, i) => i + 1)
      return fitPoly(ys, xs, typeof d === 'number' ? d : 1)
    }
  },
})

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
const dotProduct = defineScalar({
  name: 'series_dot_product',
  params: ['number', 'number'],
  result: 'real',
  bind(args) {
    const sides = args.map((a) => {
      if (a.type === 'dynamic') return null
      return coercer('number', a.type)
    })
    // a rule across arguments (not a kind): two scalars have no series between them
    if (sides[0] && sides[1]) expectKind('series_dot_product', args, 0, 'dynamic')
    return (values) => {
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
    }
  },
})

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
