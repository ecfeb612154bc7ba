import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KqlError } from '../kql-error.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { lookupScalar } from './registry.js'
import { MULTI_COLUMN_SERIES } from './series-functions.js'

const ctx = { now: 0n, random: () => 0 }

function call(name: string, types: readonly KqlType[], values: readonly KqlValue[]): KqlValue {
  const fn = lookupScalar(name)
  assert.ok(fn, `${name} is registered`)
  return fn.bind(types.map((type, i) => ({ type, text: `a${i}`, constant: { value: values[i] ?? null } }))).evaluate(values, ctx)
}
const dyn = (name: string, ...values: DynamicValue[]): KqlValue =>
  call(
    name,
    values.map((): KqlType => 'dynamic'),
    values,
  )

function close(actual: unknown, expected: number, what = '', tol = 1e-9): void {
  assert.equal(typeof actual, 'number', `${what}: ${String(actual)}`)
  const a = actual as number
  assert.ok(Math.abs(a - expected) <= tol * Math.max(1, Math.abs(expected)), `${what}: expected ${expected}, got ${a}`)
}
function closeAll(actual: unknown, expected: readonly number[], tol = 1e-9): void {
  assert.ok(Array.isArray(actual), `array expected, got ${JSON.stringify(actual)}`)
  assert.equal((actual as unknown[]).length, expected.length)
  expected.forEach((e, i) => {
    close((actual as number[])[i], e, `[${i}]`, tol)
  })
}

describe('element-wise', () => {
  it('arithmetic (documentation examples)', () => {
    const rows = [
      [
        [1, 2, 4],
        [4, 2, 1],
      ],
      [
        [2, 4, 8],
        [8, 4, 2],
      ],
      [
        [3, 6, 12],
        [12, 6, 3],
      ],
    ] as const
    assert.deepEqual(
      rows.map(([a, b]) => dyn('series_add', [...a], [...b])),
      [
        [5, 4, 5],
        [10, 8, 10],
        [15, 12, 15],
      ],
    )
    assert.deepEqual(
      rows.map(([a, b]) => dyn('series_subtract', [...a], [...b])),
      [
        [-3, 0, 3],
        [-6, 0, 6],
        [-9, 0, 9],
      ],
    )
    assert.deepEqual(
      rows.map(([a, b]) => dyn('series_multiply', [...a], [...b])),
      [
        [4, 4, 4],
        [16, 16, 16],
        [36, 36, 36],
      ],
    )
    assert.deepEqual(
      rows.map(([a, b]) => dyn('series_divide', [...a], [...b])),
      [
        [0.25, 1, 4],
        [0.25, 1, 4],
        [0.25, 1, 4],
      ],
    )
    assert.deepEqual(dyn('series_pow', [1, 2, 4], [4, 2, 1]), [1, 4, 4])
    assert.deepEqual(dyn('series_divide', [2], [0]), [Infinity])
  })
  it('different lengths, non-numbers and scalars', () => {
    assert.deepEqual(dyn('series_add', [1, 2, 3], [1]), [2, null, null])
    assert.deepEqual(dyn('series_add', [1, 'a'], [1, 1]), [2, null])
    assert.deepEqual(call('series_multiply', ['long', 'dynamic'], [10, [1, -1, 0]]), [10, -10, 0])
    assert.deepEqual(call('series_greater_equals', ['dynamic', 'real'], [[1, 2, 1.5], 1.5]), [false, true, true])
    assert.equal(dyn('series_add', 'x', [1]), null)
    assert.throws(() => call('series_add', ['string', 'dynamic'], ['a', [1]]), KqlError)
  })
  it('comparisons (documentation examples)', () => {
    assert.deepEqual(dyn('series_less', [1, 2, 4], [4, 2, 1]), [true, false, false])
    assert.deepEqual(dyn('series_less_equals', [1, 2, 4], [4, 2, 1]), [true, true, false])
    assert.deepEqual(dyn('series_greater', [1, 2, 4], [4, 2, 1]), [false, false, true])
    assert.deepEqual(dyn('series_greater_equals', [1, 2, 4], [4, 2, 1]), [false, true, true])
    assert.deepEqual(dyn('series_equals', [1, 2, 4], [4, 2, 1]), [false, true, false])
    assert.deepEqual(dyn('series_not_equals', [1, 2, 4], [4, 2, 1]), [true, false, true])
  })
  it('unary math', () => {
    assert.deepEqual(dyn('series_sign', [-6, 0, 8]), [-1, 0, 1])
    assert.deepEqual(dyn('series_abs', [-6, 0, 8]), [6, 0, 8])
    assert.deepEqual(dyn('series_ceiling', [-1.5, 1.2]), [-1, 2])
    assert.deepEqual(dyn('series_floor', [-1.5, 1.2]), [-2, 1])
    closeAll(dyn('series_exp', [0, 1]), [1, Math.E])
    assert.deepEqual(dyn('series_log', [1, -1, null]), [0, null, null])
    closeAll(dyn('series_cos', [0]), [1])
    assert.deepEqual(dyn('series_acos', [2]), [null])
  })
})

describe('statistics and similarity', () => {
  const x = [23, 46, 23, 87, 4, 8, 3, 75, 2, 56, 13, 75, 32, 16, 29]
  it('series_stats_dynamic (documentation case) and series_stats columns', () => {
    const s = dyn('series_stats_dynamic', x) as Record<string, number>
    assert.deepEqual(
      { min: s['min'], min_idx: s['min_idx'], max: s['max'], max_idx: s['max_idx'], avg: s['avg'], sum: s['sum'], len: s['len'] },
      { min: 2, min_idx: 8, max: 87, max_idx: 3, avg: 32.8, sum: 492, len: 15 },
    )
    close(s['stdev'], 28.50363385354827)
    close(s['variance'], 812.4571428571429)
    const cols = dyn('series_stats', x) as Record<string, number>
    assert.deepEqual(
      Object.keys(cols),
      MULTI_COLUMN_SERIES['series_stats']!.map((c) => c.suffix),
    )
    close(cols['stdev'], 28.5036338535483)
    assert.equal(cols['min'], 2)
  })
  it('non-finite values give nulls unless ignored', () => {
    assert.equal((dyn('series_stats_dynamic', [1, null, 3]) as Record<string, unknown>)['avg'], null)
    assert.equal((call('series_stats_dynamic', ['dynamic', 'bool'], [[1, null, 3], true]) as Record<string, unknown>)['avg'], 2)
  })
  it('sum, magnitude, dot product, pearson, cosine similarity', () => {
    assert.equal(dyn('series_sum', [1, 2, 3, 4]), 10)
    assert.equal(dyn('series_magnitude', [3, 4]), 5)
    assert.equal(dyn('series_dot_product', [1, 2, 3], [4, 5, 6]), 32)
    assert.deepEqual(
      [
        [1, 2, 4],
        [2, 4, 8],
        [3, 6, 12],
      ].map((s1) => dyn('series_dot_product', s1, [...s1].reverse())),
      [12, 48, 108],
    )
    assert.deepEqual(
      [
        [1, 2, 4],
        [2, 4, 8],
        [3, 6, 12],
      ].map((s1, i) => call('series_dot_product', ['dynamic', 'long'], [s1, i + 1])),
      [7, 28, 63],
    )
    assert.equal(dyn('series_dot_product', [1, 2, 3], [2]), 2)
    assert.equal(dyn('series_dot_product', [], [2]), null)
    close(dyn('series_magnitude', [1, 2, 3, 4]), 5.4772255750516612)
    assert.equal(dyn('series_pearson_correlation', [1, 2, 3], [1, 2]), null)
    close(dyn('series_pearson_correlation', [1, 2, 4, 7], [10, 20, 40, 70]), 1)
    close(dyn('series_pearson_correlation', [1, 2, 3], [3, 2, 1]), -1)
    close(dyn('series_cosine_similarity', [0.1, 0.2, 0.1, 0.2], [0.11, 0.2, 0.11, 0.21]), 0.99935343825504)
    close(dyn('series_cosine_similarity', [0.1, 0.2, 0.1, 0.2], [1, 2, 3, 4]), 0.923760430703401)
  })
})

describe('filling', () => {
  const arr = [null, 111.5, null, 36.5, 41, null, null, 16, 61, 33, null, null]
  it('series_fill_linear (documentation example shape)', () => {
    const doc = [null, 111.0, null, 36.0, 41.0, null, null, 16.0, 61.0, 33.0, null, null]
    closeAll(dyn('series_fill_linear', doc), [111, 111, 73.5, 36, 41, 32.666666666666664, 24.333333333333332, 16, 61, 33, 33, 33])
    assert.deepEqual((call('series_fill_linear', ['dynamic', 'real', 'bool'], [doc, null, false]) as DynamicValue[]).slice(0, 3), [
      null,
      111,
      73.5,
    ])
    assert.deepEqual(call('series_fill_linear', ['dynamic', 'real', 'bool'], [[null, null], null, false]), [0, 0])
    assert.deepEqual(
      call('series_fill_linear', ['dynamic', 'real', 'bool', 'real'], [[null, null], null, true, 3.14159]),
      [3.14159, 3.14159],
    )
    assert.deepEqual(call('series_fill_linear', ['dynamic', 'long'], [[1, 0, 3], 0]), [1, 2, 3])
  })
  it('forward, backward, const', () => {
    assert.deepEqual(dyn('series_fill_forward', arr), [null, 111.5, 111.5, 36.5, 41, 41, 41, 16, 61, 33, 33, 33])
    assert.deepEqual(dyn('series_fill_backward', arr), [111.5, 111.5, 36.5, 36.5, 41, 16, 16, 16, 61, 33, null, null])
    assert.deepEqual(call('series_fill_const', ['dynamic', 'real'], [arr, 0.0]), [0, 111.5, 0, 36.5, 41, 0, 0, 16, 61, 33, 0, 0])
    assert.deepEqual(call('series_fill_forward', ['dynamic', 'long'], [[1, -1, -1, 5], -1]), [1, 1, 1, 5])
    assert.deepEqual(call('series_fill_const', ['dynamic', 'long', 'long'], [[1, -1, 3], 9, -1]), [1, 9, 3])
  })
})

describe('filters', () => {
  const val = [0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 20, 40, 100, 40, 20, 10, 0, 0, 0, 0, 0, 0, 0, 0]
  it('series_fir moving average, centered and differences (documentation examples)', () => {
    const avg = dyn('series_fir', val, [1, 1, 1, 1, 1]) as number[]
    assert.equal(avg[13], 42)
    const centered = call('series_fir', ['dynamic', 'dynamic', 'bool', 'bool'], [val, [1, 1, 1, 1, 1], true, true]) as number[]
    assert.equal(centered[12], 44)
    const diff = call('series_fir', ['dynamic', 'dynamic', 'bool', 'bool'], [[0, 0, 0, 0, 2, 2, 2, 2, 3, 3, 3, 3], [1, -1], false, false])
    assert.deepEqual(diff, [0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0])
    assert.equal(call('series_fir', ['dynamic', 'dynamic', 'bool'], [[1, 2], [1, -1], true]), null)
  })
  it('series_iir cumulative sum (documentation examples)', () => {
    assert.deepEqual(dyn('series_iir', [1, 2, 3, 4], [1], [1, -1]), [1, 3, 6, 10])
    assert.equal((dyn('series_iir', [0, 1, 2, 3, 4], [1], [1, -1]) as number[])[4], 10)
  })
})

describe('seasonality and periods', () => {
  it('series_seasonal with detection (documentation examples)', () => {
    const s1 = [2, 5, 3, 4, 3, 2, 1, 2, 3, 4, 3, 2, 1, 2, 3, 4, 3, 2, 1, 2, 3, 4, 3, 2, 1]
    assert.deepEqual(dyn('series_seasonal', s1), [1, 2, 3, 4, 3, 2, 1, 2, 3, 4, 3, 2, 1, 2, 3, 4, 3, 2, 1, 2, 3, 4, 3, 2, 1])
    const s2 = [8, 12, 14, 12, 10, 10, 12, 14, 12, 10, 10, 12, 14, 12, 10, 10, 12, 14, 12, 10]
    assert.deepEqual(dyn('series_seasonal', s2), [10, 12, 14, 12, 10, 10, 12, 14, 12, 10, 10, 12, 14, 12, 10, 10, 12, 14, 12, 10])
    assert.deepEqual(dyn('series_seasonal', [1, 3, 5, 2, 4, 6, 1, 3, 5, 2, 4, 6]), new Array(12).fill(0))
  })
  it('series_seasonal with a forced period (documentation examples)', () => {
    assert.deepEqual(call('series_seasonal', ['dynamic', 'long'], [[1, 3, 5, 1, 3, 5, 2, 4, 6], 3]), [1, 3, 5, 1, 3, 5, 1, 3, 5])
    assert.deepEqual(call('series_seasonal', ['dynamic', 'long', 'long'], [[1, 3, 5, 1, 3, 5, 9, 9, 9], 3, 3]), [1, 3, 5, 1, 3, 5, 1, 3, 5])
    assert.deepEqual(
      call('series_seasonal', ['dynamic', 'long'], [[1, 3, 5, 2, 4, 6, 1, 3, 5, 2, 4, 6], 3]),
      [1.5, 3.5, 5.5, 1.5, 3.5, 5.5, 1.5, 3.5, 5.5, 1.5, 3.5, 5.5],
    )
  })
  const y = [
    80, 139, 87, 110, 68, 54, 50, 51, 53, 133, 86, 141, 97, 156, 94, 149, 95, 140, 77, 61, 50, 54, 47, 133, 72, 152, 94, 148, 105, 162, 101,
    160, 87, 63, 53, 55, 54, 151, 103, 189, 108, 183, 113, 175, 113, 178, 90, 71, 62, 62, 65, 165, 109, 181, 115, 182, 121, 178, 114, 170,
  ]
  it('series_periods_detect finds the 14-point period (documentation example)', () => {
    const r = call('series_periods_detect', ['dynamic', 'real', 'real', 'long'], [y, 0, 50, 2]) as Record<string, number[]>
    assert.deepEqual(Object.keys(r), ['periods', 'scores'])
    assert.deepEqual(r['periods'], [14, 0])
    assert.ok(r['scores']![0]! > 0.7 && r['scores']![1] === 0)
  })
  it('series_periods_validate scores the given periods', () => {
    const r = call('series_periods_validate', ['dynamic', 'real', 'real'], [y, 14, 10]) as Record<string, number[]>
    assert.deepEqual(r['periods'], [14, 10])
    assert.ok(r['scores']![0]! > 0.7 && r['scores']![1]! < 0.2)
    assert.deepEqual((call('series_periods_validate', ['dynamic', 'real'], [y, 3]) as Record<string, number[]>)['scores'], [0])
  })
})

describe('outliers and decomposition', () => {
  it('series_outliers scores Tukey fences', () => {
    const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 100]
    const scores = dyn('series_outliers', xs) as number[]
    assert.ok(scores[9]! > 1.5)
    assert.deepEqual(scores.slice(1, 8), [0, 0, 0, 0, 0, 0, 0])
    const tukey = call('series_outliers', ['dynamic', 'string'], [xs, 'tukey']) as number[]
    assert.ok(tukey[9]! > scores[9]!)
    assert.equal((dyn('series_outliers', [1, null, 2]) as number[])[1], 0)
  })
  it('series_decompose with a given period and linefit trend', () => {
    const xs = Array.from({ length: 28 }, (_, i) => [5, 1, 1, 1, 1, 1, 5][i % 7]! + 0.5 * i)
    const d = call('series_decompose', ['dynamic', 'long', 'string'], [xs, 7, 'linefit']) as Record<string, number[]>
    assert.deepEqual(
      Object.keys(d),
      MULTI_COLUMN_SERIES['series_decompose']!.map((c) => c.suffix),
    )
    for (const r of d['residual']!) assert.ok(Math.abs(r) < 2)
    const none = call('series_decompose', ['dynamic', 'long', 'string'], [[1, 2, 3], 0, 'none']) as Record<string, number[]>
    assert.deepEqual(none['baseline'], [0, 0, 0])
    assert.deepEqual(none['residual'], [1, 2, 3])
  })
  it('series_decompose_anomalies flags a spike; forecast extends the trend', () => {
    const xs = Array.from({ length: 40 }, (_, i) => (i === 30 ? 50 : 10 + (i % 2)))
    const a = call('series_decompose_anomalies', ['dynamic', 'real', 'long'], [xs, 1.5, 0]) as Record<string, number[]>
    assert.equal(a['ad_flag']![30], 1)
    assert.equal(a['ad_flag']![10], 0)
    const f = call(
      'series_decompose_forecast',
      ['dynamic', 'long', 'long'],
      [Array.from({ length: 20 }, (_, i) => (i < 15 ? i : null)), 5, 0],
    ) as number[]
    closeAll(f.slice(15), [15, 16, 17, 18, 19], 1e-9)
  })
})

describe('regression', () => {
  it('series_fit_line (documentation example)', () => {
    const f = dyn('series_fit_line', [2, 5, 6, 8, 11, 15, 17, 18, 25, 26, 30, 30]) as Record<string, number | number[]>
    assert.deepEqual(
      Object.keys(f),
      MULTI_COLUMN_SERIES['series_fit_line']!.map((c) => c.suffix),
    )
    close(f['rsquare'], 0.982900730884447)
    close(f['slope'], 2.73076923076923)
    close(f['variance'], 98.62878787878786)
    close(f['rvariance'], 1.6864801864801862)
    close(f['interception'], -1.6666666666666745)
    close((f['line_fit'] as number[])[0], 1.064102564102564)
    assert.deepEqual(dyn('series_fit_line_dynamic', [1, 2, 3]), {
      rsquare: 1,
      slope: 1,
      variance: 1,
      rvariance: 0,
      interception: 0,
      line_fit: [1, 2, 3],
    })
  })
  it('series_fit_2lines finds the break', () => {
    const ys = [1, 2, 3, 4, 5, 6, 10, 9, 8, 7]
    const flat = dyn('series_fit_2lines', ys) as Record<string, unknown>
    assert.deepEqual(
      Object.keys(flat),
      MULTI_COLUMN_SERIES['series_fit_2lines']!.map((c) => c.suffix),
    )
    assert.equal(flat['split_idx'], 6)
    close(flat['rsquare'], 1)
    close(flat['left_slope'], 1)
    close(flat['right_slope'], -1)
    const nested = dyn('series_fit_2lines_dynamic', ys) as Record<string, Record<string, number>>
    close(nested['right']!['slope'], -1)
  })
  it('series_fit_poly recovers a quadratic', () => {
    const xs = [1, 2, 3, 4, 5, 6]
    const ys = xs.map((x) => 2 * x * x - 3 * x + 1)
    const p = call('series_fit_poly', ['dynamic', 'dynamic', 'long'], [ys, xs, 2]) as Record<string, unknown>
    assert.deepEqual(
      Object.keys(p),
      MULTI_COLUMN_SERIES['series_fit_poly']!.map((c) => c.suffix),
    )
    closeAll(p['coefficients'], [2, -3, 1], 1e-7)
    close(p['rsquare'], 1)
    const line = dyn('series_fit_poly', [2, 5, 6, 8, 11, 15, 17, 18, 25, 26, 30, 30]) as Record<string, number[]>
    closeAll(line['coefficients'], [2.73076923076923, -1.6666666666666745], 1e-9)
  })
})

describe('fourier', () => {
  it('series_fft / series_ifft round trip and a known transform', () => {
    const f = dyn('series_fft', [1, 0, 0, 0]) as Record<string, number[]>
    closeAll(f['real'], [1, 1, 1, 1])
    closeAll(f['imag'], [0, 0, 0, 0])
    const signal = [1, 2, 3, 4, 5]
    const t = dyn('series_fft', signal) as Record<string, number[]>
    close(t['real']![0], 15)
    const back = dyn('series_ifft', t['real']!, t['imag']!) as Record<string, number[]>
    closeAll(back['real'], signal, 1e-9)
    closeAll(
      back['imag'],
      [0, 0, 0, 0, 0].map(() => 0),
      1e-9,
    )
  })
})

describe('multi-column naming', () => {
  it('names columns <function>_<argument>_<suffix>', async () => {
    const { multiColumnOutputs } = await import('./series-functions.js')
    assert.deepEqual(
      multiColumnOutputs('series_stats', { type: 'dynamic', text: 'x', columnName: 'x' })!
        .map((c) => c.name)
        .slice(0, 2),
      ['series_stats_x_min', 'series_stats_x_min_idx'],
    )
    assert.deepEqual(multiColumnOutputs('series_stats', { type: 'dynamic', text: 'series_add(TimeStamp, 0)' })![0], {
      name: 'series_stats__min',
      type: 'real',
    })
    assert.equal(multiColumnOutputs('series_fit_poly', { type: 'dynamic', text: 'y' })![4]!.name, 'series_fit_poly_y_poly_fit')
    assert.equal(multiColumnOutputs('series_add', { type: 'dynamic', text: 'y' }), undefined)
  })
})
