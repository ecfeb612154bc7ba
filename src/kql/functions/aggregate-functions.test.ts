import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KqlError } from '../kql-error.js'
import type { KqlType, KqlValue } from '../types.js'
import { parseDateTime } from '../values.js'
import { inferName } from './aggregate-definitions.js'
import type { AggregateOutput, ArgInfo } from './function-types.js'
import { lookupAggregate, lookupScalar } from './registry.js'

interface Arg {
  type: KqlType
  text?: string
  column?: string
  constant?: KqlValue
}

/** Runs an aggregate over rows of argument values; plain strings in `args` are column names of type long. */
function agg(
  name: string,
  args: readonly Arg[],
  rows: readonly (readonly KqlValue[])[],
  star?: readonly AggregateOutput[],
): { names: string[]; types: KqlType[]; values: readonly KqlValue[] } {
  const fn = lookupAggregate(name)
  assert.ok(fn, `${name} is registered`)
  const infos: ArgInfo[] = args.map((a, i) => ({
    type: a.type,
    text: a.text ?? a.column ?? `a${i}`,
    ...(a.column ? { columnName: a.column } : {}),
    ...(a.constant !== undefined ? { constant: { value: a.constant } } : {}),
  }))
  const bound = fn.bind(infos, { star: star !== undefined, inputColumns: star ?? [] })
  const acc = bound.create()
  for (const r of rows) acc.add(r)
  return { names: bound.outputs.map((o) => o.name), types: bound.outputs.map((o) => o.type), values: acc.result() }
}

const col = (column: string, type: KqlType = 'long'): Arg => ({ type, column })
const lit = (constant: KqlValue, type: KqlType = 'long'): Arg => ({ type, constant, text: String(constant) })
const pred: Arg = { type: 'bool', text: 'p' }
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i)

function bindFails(name: string, args: readonly Arg[]): void {
  assert.throws(
    () => agg(name, args, []),
    (e: unknown) => e instanceof KqlError && e.kind === 'semantic' && e.message.includes(name),
  )
}

describe('names', () => {
  it('infers Kusto result names from expressions', () => {
    assert.equal(inferName('Value'), 'Value')
    assert.equal(inferName("['my col']"), 'my col')
    assert.equal(inferName('todouble(Duration)'), 'Duration')
    assert.equal(inferName('d.x'), 'd_x')
    assert.equal(inferName("d['a'].b"), 'd_a_b')
    assert.equal(inferName('bin(Timestamp, 1h)'), 'Timestamp')
    assert.equal(inferName('x * 2'), undefined)
    assert.equal(inferName('(Value)'), 'Value')
    assert.equal(inferName('d[0]'), 'd_0')
    assert.equal(inferName('strlen(Name)'), 'strlen_Name')
    assert.equal(inferName('tostring(d.name)'), 'd_name')
    assert.equal(inferName('iff(a, b, c)'), undefined)
  })
  it('names unnamed arguments like Kusto.Language', () => {
    assert.deepEqual(agg('sum', [{ type: 'long', text: 'x * 2' }], [[2]]).names, ['sum_'])
    assert.deepEqual(
      agg(
        'arg_max',
        [
          { type: 'long', text: 'x + 1' },
          { type: 'long', text: 'y * 2' },
        ],
        [[1, 2]],
      ).names,
      ['max_', 'max__arg1'],
    )
    assert.deepEqual(agg('arg_min', [col('ts'), { type: 'long', text: 'y * 2' }], [[1, 2]]).names, ['ts', 'min_ts_arg1'])
    assert.deepEqual(agg('argmax', [col('ts'), col('y')], [[1, 2]]).names, ['ts', 'ts_y'])
    assert.deepEqual(agg('take_any', [col('a'), { type: 'long', text: 'a + 1' }], [[1, 2]]).names, ['a', 'any_arg1'])
    assert.deepEqual(agg('any', [col('a'), col('b')], [[1, 2]]).names, ['a', 'b'])
    assert.deepEqual(agg('anyif', [col('a'), pred], [[1, true]]).names, ['anyif_a'])
    assert.deepEqual(agg('take_anyif', [col('a'), pred], [[1, true]]).names, ['a'])
    assert.deepEqual(agg('make_dictionary', [col('p', 'dynamic')], [[{ a: 1 }]]).names, ['dictionary_p'])
    assert.deepEqual(agg('count', [pred], [[true], [false], [true]]).values, [2])
  })
})

describe('count, sum, avg, min, max', () => {
  it('count_ and countif_', () => {
    assert.deepEqual(agg('count', [], [[], [], []]), { names: ['count_'], types: ['long'], values: [3] })
    const r = agg(
      'countif',
      [pred],
      range(1, 10).map((x) => [x % 2 === 0]),
    )
    assert.deepEqual([r.names, r.values], [['countif_'], [5]])
    assert.deepEqual(agg('count', [], []).values, [0])
  })
  it('count(x) counts every row, nulls included, and is named count_x (summarize documentation)', () => {
    assert.deepEqual(agg('count', [col('y', 'real')], [[null], [5]]), { names: ['count_y'], types: ['long'], values: [2] })
    assert.deepEqual(agg('count', [col('x')], []).values, [0])
    assert.deepEqual(agg('count', [{ type: 'bool', text: 'x > 0', column: 'b' }], [[true], [false], [null]]), {
      names: ['count_'],
      types: ['long'],
      values: [1],
    })
  })
  it('sum and sumif (kusto-loco case)', () => {
    const r = agg(
      'sumif',
      [col('v'), pred],
      [
        [1, true],
        [2, false],
        [4, true],
        [8, true],
      ],
    )
    assert.deepEqual([r.names, r.types, r.values], [['sumif_v'], ['long'], [13]])
    assert.deepEqual(agg('sum', [col('x', 'real')], [[1.5], [null], [2]]).values, [3.5])
    assert.deepEqual(agg('sum', [col('x', 'int')], [[1]]).types, ['long'])
    assert.deepEqual(agg('sum', [col('x')], [[null]]).values, [0])
    assert.deepEqual(agg('sum', [col('x')], []).values, [0])
    assert.deepEqual(agg('sumif', [col('x'), pred], [[5, false]]).values, [0])
    assert.deepEqual(agg('sum', [col('t', 'timespan')], []).values, [0n])
    assert.deepEqual(agg('stdev', [col('x')], []).values, [0])
    assert.deepEqual(agg('varianceif', [col('x'), pred], [[1, false]]).values, [0])
    assert.deepEqual(agg('variancep', [col('x')], []).values, [null])
    assert.deepEqual(agg('make_list', [col('x')], []).values, [[]])
    assert.deepEqual(agg('make_set', [col('x')], []).values, [[]])
    bindFails('sum', [col('s', 'string')])
  })
  it('avg and avgif', () => {
    const r = agg(
      'avg',
      [col('Value')],
      range(1, 4).map((x) => [x]),
    )
    assert.deepEqual([r.names, r.types, r.values], [['avg_Value'], ['real'], [2.5]])
    assert.deepEqual(
      agg(
        'avgif',
        [col('x'), pred],
        [
          [1, true],
          [100, false],
          [3, true],
        ],
      ).values,
      [2],
    )
    assert.deepEqual(agg('avg', [col('t', 'timespan')], [[10n], [20n]]).values, [15n])
  })
  it('avg of no (non-null) values is NaN: 0 / 0 (summarize documentation, default values)', () => {
    assert.ok(Number.isNaN(agg('avg', [col('x')], []).values[0]))
    assert.ok(Number.isNaN(agg('avg', [col('x', 'real')], [[null], [null]]).values[0]))
    assert.ok(Number.isNaN(agg('avgif', [col('x'), pred], [[1, false]]).values[0]))
    assert.deepEqual(agg('avg', [col('y', 'real')], [[null], [5], [5], [5]]).values, [5])
    assert.deepEqual(agg('avg', [col('t', 'timespan')], []).values, [null])
  })
  it('min, max, minif, maxif ignore nulls and keep the type', () => {
    assert.deepEqual(agg('max', [col('x')], [[3], [null], [7], [5]]), { names: ['max_x'], types: ['long'], values: [7] })
    assert.deepEqual(agg('min', [col('s', 'string')], [['b'], [''], ['a']]).values, ['a'])
    const d1 = parseDateTime('2020-01-01')!
    const d2 = parseDateTime('2021-01-01')!
    assert.deepEqual(agg('max', [col('t', 'datetime')], [[d1], [d2]]).values, [d2])
    assert.deepEqual(
      agg(
        'maxif',
        [col('x'), pred],
        [
          [3, true],
          [9, false],
        ],
      ).values,
      [3],
    )
    assert.deepEqual(
      agg(
        'minif',
        [col('x'), pred],
        [
          [3, false],
          [9, true],
        ],
      ).names,
      ['minif_x'],
    )
    assert.deepEqual(agg('min', [col('x')], []).values, [null])
  })
})

describe('distinct counts', () => {
  it('dcount, dcountif, count_distinct are exact', () => {
    assert.deepEqual(agg('dcount', [col('x')], [[1], [2], [2], [null], [3]]), { names: ['dcount_x'], types: ['long'], values: [3] })
    assert.deepEqual(agg('dcount', [col('x'), lit(1)], [[1]]).names, ['dcount_x'])
    assert.deepEqual(
      agg(
        'dcountif',
        [col('x'), pred],
        [
          [1, true],
          [2, false],
          [1, true],
        ],
      ).values,
      [1],
    )
    assert.deepEqual(agg('count_distinct', [col('s', 'string')], [['a'], ['b'], ['a']]), {
      names: ['count_distinct_s'],
      types: ['long'],
      values: [2],
    })
    assert.deepEqual(
      agg(
        'count_distinctif',
        [col('s', 'string'), pred],
        [
          ['a', true],
          ['b', false],
        ],
      ).names,
      ['count_distinctif_s'],
    )
  })
})

describe('percentiles', () => {
  it('nearest rank with Kusto names', () => {
    const rows = range(1, 100).map((x) => [x])
    assert.deepEqual(agg('percentile', [col('x'), lit(50)], rows), { names: ['percentile_x_50'], types: ['long'], values: [50] })
    const r = agg('percentiles', [col('x'), lit(5), lit(50), lit(95), lit(99.5, 'real')], rows)
    assert.deepEqual(r.names, ['percentile_x_5', 'percentile_x_50', 'percentile_x_95', 'percentile_x_99_5'])
    assert.deepEqual(r.values, [5, 50, 95, 100])
    assert.deepEqual(agg('percentile', [col('x'), lit(0)], rows).values, [1])
    assert.deepEqual(agg('percentile', [col('x'), lit(100)], rows).values, [100])
    assert.deepEqual(agg('percentile', [col('x'), lit(50)], [[3], [1], [2], [4]]).values, [2])
  })
  it('percentiles_array with a list or a dynamic array', () => {
    const rows = range(1, 10).map((x) => [x])
    assert.deepEqual(agg('percentiles_array', [col('Value'), lit(50), lit(90)], rows), {
      names: ['percentiles_Value'],
      types: ['dynamic'],
      values: [[5, 9]],
    })
    assert.deepEqual(agg('percentiles_array', [col('Value'), lit([50, 90], 'dynamic')], rows).values, [[5, 9]])
  })
  it('weighted percentiles (documentation example)', () => {
    const rows = [
      [10, 8],
      [20, 6],
      [30, 3],
      [40, 1],
    ]
    const r = agg('percentilesw', [col('LatencyBucket'), col('ReqCount'), lit(50), lit(75), lit(99.9, 'real')], rows)
    assert.deepEqual(r.names, ['percentile_LatencyBucket_50', 'percentile_LatencyBucket_75', 'percentile_LatencyBucket_99_9'])
    assert.deepEqual(r.values, [20, 20, 40])
    assert.deepEqual(agg('percentilesw_array', [col('LatencyBucket'), col('ReqCount'), lit(50), lit(75), lit(99.9, 'real')], rows), {
      names: ['percentile_LatencyBucket'],
      types: ['dynamic'],
      values: [[20, 20, 40]],
    })
    assert.deepEqual(agg('percentilew', [col('LatencyBucket'), col('ReqCount'), lit(50)], rows).values, [20])
  })
  it('rejects non-constant percentiles', () => {
    bindFails('percentile', [col('x'), col('p')])
  })
})

describe('lists, sets, bags', () => {
  const shapes: [string, number][] = [
    ['triangle', 3],
    ['square', 4],
    ['rectangle', 4],
    ['pentagon', 5],
    ['hexagon', 6],
    ['heptagon', 7],
    ['octagon', 8],
    ['nonagon', 9],
    ['decagon', 10],
  ]
  it('make_list (documentation example) and variants', () => {
    const r = agg(
      'make_list',
      [col('name', 'string')],
      shapes.map(([n]) => [n]),
    )
    assert.deepEqual(r.names, ['list_name'])
    assert.deepEqual(r.values, [shapes.map(([n]) => n)])
    assert.deepEqual(agg('make_list', [col('x'), lit(2)], [[1], [2], [3]]).values, [[1, 2]])
    assert.deepEqual(agg('make_list', [col('x')], [[1], [null], [3]]).values, [[1, 3]])
    assert.deepEqual(agg('make_list_with_nulls', [col('x')], [[1], [null], [3]]).values, [[1, null, 3]])
    assert.deepEqual(
      agg(
        'make_list_if',
        [col('x'), pred],
        [
          [1, true],
          [2, false],
          [3, true],
        ],
      ),
      { names: ['list_x'], types: ['dynamic'], values: [[1, 3]] },
    )
    assert.deepEqual(agg('make_list', [col('t', 'datetime')], [[parseDateTime('2020-01-01')!]]).values, [['2020-01-01T00:00:00Z']])
  })
  it('make_set flattens arrays (documentation example)', () => {
    const rows = [
      [1, ['A1', 'A2', 'A3']],
      [5, ['A2', 'C1']],
      [7, ['C2', 'A3']],
      [5, ['C2', 'A1']],
    ]
    assert.deepEqual(
      agg(
        'make_set',
        [col('Val', 'int')],
        rows.map((r) => [r[0]!]),
      ).values,
      [[1, 5, 7]],
    )
    assert.deepEqual(
      agg(
        'make_set',
        [col('Arr1', 'dynamic')],
        rows.map((r) => [r[1]!]),
      ),
      { names: ['set_Arr1'], types: ['dynamic'], values: [['A1', 'A2', 'A3', 'C1', 'C2']] },
    )
    assert.deepEqual(
      agg(
        'make_set_if',
        [col('x'), pred],
        [
          [1, true],
          [1, true],
          [2, false],
        ],
      ).values,
      [[1]],
    )
  })
  it('make_bag merges bags and skips other values (documentation example)', () => {
    const r = agg('make_bag', [col('p', 'dynamic')], [[{ prop01: 'val_a' }], [{ prop02: 'val_b' }], [{ prop03: 'val_c' }], [[1]], [null]])
    assert.deepEqual(r, { names: ['bag_p'], types: ['dynamic'], values: [{ prop01: 'val_a', prop02: 'val_b', prop03: 'val_c' }] })
    bindFails('make_bag', [col('x')])
  })
})

describe('arg_max, arg_min, take_any', () => {
  it('arg_max returns the row of the maximum, ignoring nulls (documentation example)', () => {
    const fruit: [string, string, number | null][] = [
      ['Apple', 'Red', 1],
      ['Apple', 'Green', null],
      ['Banana', 'Yellow', null],
      ['Banana', 'Green', null],
      ['Pear', 'Brown', 1],
      ['Pear', 'Green', 2],
    ]
    const cols: AggregateOutput[] = [
      { name: 'Color', type: 'string' },
      { name: 'Version', type: 'int' },
    ]
    const byFruit = (f: string): KqlValue[][] => fruit.filter((r) => r[0] === f).map((r) => [r[2], r[1], r[2]])
    const apple = agg('arg_max', [col('Version', 'int')], byFruit('Apple'), cols)
    assert.deepEqual(apple.names, ['Version', 'Color'])
    assert.deepEqual(apple.values, [1, 'Red'])
    assert.deepEqual(agg('arg_max', [col('Version', 'int')], byFruit('Banana'), cols).values, [null, 'Yellow'])
    assert.deepEqual(agg('arg_max', [col('Version', 'int')], byFruit('Pear'), cols).values, [2, 'Green'])
  })
  it('arg_min with explicit return columns', () => {
    const r = agg(
      'arg_min',
      [col('BeginLat', 'real'), col('BeginLocation', 'string')],
      [
        [34.9, 'A'],
        [12.5, 'B'],
        [40, 'C'],
      ],
    )
    assert.deepEqual(r, { names: ['BeginLat', 'BeginLocation'], types: ['real', 'string'], values: [12.5, 'B'] })
    assert.deepEqual(
      agg(
        'argmax',
        [col('x'), col('y')],
        [
          [1, 10],
          [3, 30],
        ],
      ).values,
      [3, 30],
    )
  })
  it('take_any prefers a non-empty value; any() prefixes any_', () => {
    assert.deepEqual(agg('take_any', [col('State', 'string')], [[''], ['TEXAS'], ['OHIO']]), {
      names: ['State'],
      types: ['string'],
      values: ['TEXAS'],
    })
    assert.deepEqual(agg('any', [col('State', 'string')], [['OHIO']]).names, ['any_State'])
    const cols: AggregateOutput[] = [
      { name: 'a', type: 'long' },
      { name: 'b', type: 'string' },
    ]
    assert.deepEqual(
      agg(
        'take_any',
        [],
        [
          [1, 'x'],
          [2, 'y'],
        ],
        cols,
      ),
      { names: ['a', 'b'], types: ['long', 'string'], values: [1, 'x'] },
    )
    assert.deepEqual(
      agg(
        'take_anyif',
        [col('x'), pred],
        [
          [1, false],
          [2, true],
        ],
      ).values,
      [2],
    )
  })
})

describe('dispersion and bitwise folds', () => {
  it('stdevif (documentation case) and friends', () => {
    const r = agg(
      'stdevif',
      [col('x'), pred],
      range(1, 100).map((x) => [x, x % 2 === 0]),
    )
    assert.deepEqual(r.names, ['stdevif_x'])
    assert.ok(Math.abs((r.values[0] as number) - 29.1547594742265) < 1e-9)
    const xs = [[1], [2], [3], [4]]
    assert.ok(Math.abs((agg('variance', [col('x')], xs).values[0] as number) - 5 / 3) < 1e-12)
    assert.equal(agg('variancep', [col('x')], xs).values[0], 1.25)
    assert.ok(Math.abs((agg('stdevp', [col('x')], xs).values[0] as number) - Math.sqrt(1.25)) < 1e-12)
    assert.deepEqual(agg('stdev', [col('x')], [[5]]).values, [0])
    assert.deepEqual(
      agg(
        'varianceif',
        [col('x'), pred],
        [
          [1, true],
          [3, true],
          [100, false],
        ],
      ).values,
      [2],
    )
  })
  it('binary_all_and/or/xor (documentation case)', () => {
    const rows = [[0xffffffff], [0xfffff00f], [0xcffffffd], [0xfafeffff]]
    assert.deepEqual(agg('binary_all_and', [col('num')], rows), { names: ['num'], types: ['long'], values: [0xcafef00d] })
    assert.deepEqual(agg('binary_all_or', [col('num')], [[1], [2], [4]]).values, [7])
    assert.deepEqual(agg('binary_all_xor', [col('num')], [[1], [3]]).values, [2])
  })
})

describe('buildschema', () => {
  it('documentation example', () => {
    const rows = [[{ x: 1, y: 3.5 }], [{ x: 'somevalue', z: [1, 2, 3] }], [{ y: { w: 'zzz' }, t: ['aa', 'bb'], z: ['foo'] }]]
    const r = agg('buildschema', [col('value', 'dynamic')], rows)
    assert.deepEqual(r.names, ['schema_value'])
    assert.deepEqual(r.values[0], {
      x: ['long', 'string'],
      y: ['double', { w: 'string' }],
      z: { '`indexer`': ['long', 'string'] },
      t: { '`indexer`': 'string' },
    })
  })
})

describe('sketches', () => {
  const ctx = { now: 0n, random: () => 0 }
  const scalar = (name: string, types: KqlType[], values: KqlValue[]): KqlValue =>
    lookupScalar(name)!
      .bind(types.map((type, i) => ({ type, text: `a${i}`, constant: { value: values[i] ?? null } })))
      .evaluate(values, ctx)
  it('"" is a value for dcount, dcountif, count_distinct, hll and make_set alike; null is not (issue 17 item 6)', () => {
    const rows = [[''], ['a'], ['a'], ['']]
    const s = col('s', 'string')
    assert.equal(agg('dcount', [s], rows).values[0], 2)
    const withFlag = rows.map((r) => [r[0]!, true])
    assert.equal(agg('dcountif', [s, col('p', 'bool')], withFlag).values[0], 2)
    assert.equal(agg('count_distinct', [s], rows).values[0], 2)
    assert.equal(scalar('dcount_hll', ['dynamic'], [agg('hll', [s], rows).values[0]!]), 2)
    assert.equal((agg('make_set', [s], rows).values[0] as unknown[]).length, 2)
    assert.equal(agg('dcount', [col('x')], [[null], [1], [null]]).values[0], 1)
  })

  it('hll / hll_merge / dcount_hll are exact', () => {
    const a = agg('hll', [col('x')], [[1], [2], [2]])
    assert.deepEqual(a.names, ['hll_x'])
    const b = agg('hll', [col('x')], [[2], [3]])
    const merged = agg('hll_merge', [col('hll_x', 'dynamic')], [[a.values[0]!], [b.values[0]!]])
    assert.equal(scalar('dcount_hll', ['dynamic'], [merged.values[0]!]), 3)
    assert.equal(scalar('dcount_hll', ['dynamic'], [scalar('hll_merge', ['dynamic', 'dynamic'], [a.values[0]!, b.values[0]!])]), 3)
  })
  it('tdigest / percentile_tdigest / merge', () => {
    const t = agg(
      'tdigest',
      [col('x')],
      range(1, 100).map((x) => [x]),
    )
    assert.deepEqual(t.names, ['tdigest_x'])
    assert.equal(scalar('percentile_tdigest', ['dynamic', 'long'], [t.values[0]!, 50]), 50)
    assert.deepEqual(scalar('percentile_array_tdigest', ['dynamic', 'long', 'long'], [t.values[0]!, 5, 95]), [5, 95])
    assert.equal(scalar('rank_tdigest', ['dynamic', 'long'], [t.values[0]!, 10]), 10)
    assert.equal(
      lookupScalar('percentile_tdigest')!.bind([
        { type: 'dynamic', text: 't' },
        { type: 'long', text: '5' },
      ]).type,
      'dynamic',
    )
    assert.equal(
      lookupScalar('percentile_tdigest')!.bind([
        { type: 'dynamic', text: 't' },
        { type: 'long', text: '5' },
        { type: 'string', text: 'typeof(long)', constant: { value: 'long' } },
      ]).type,
      'long',
    )
    assert.deepEqual(scalar('percentiles_array_tdigest', ['dynamic', 'dynamic'], [t.values[0]!, [5, 95]]), [5, 95])
    assert.equal(scalar('percentrank_tdigest', ['dynamic', 'long'], [t.values[0]!, 25]), 25)
    const m = agg('tdigest_merge', [col('t', 'dynamic')], [[t.values[0]!], [t.values[0]!]])
    assert.deepEqual(m.names, ['merge_tdigests_t'])
    assert.equal(scalar('percentile_tdigest', ['dynamic', 'long'], [m.values[0]!, 50]), 50)
  })
})

describe('properties', async () => {
  const fc = (await import('fast-check')).default
  it('percentiles are members of the data, monotonic in P, with P0 = min and P100 = max', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1e6, max: 1e6 }), { minLength: 1, maxLength: 60 }), (xs) => {
        const r = agg(
          'percentiles',
          [col('x'), lit(0), lit(25), lit(50), lit(75), lit(100)],
          xs.map((x) => [x]),
        ).values as number[]
        const mono = r.every((v, i) => i === 0 || v >= r[i - 1]!)
        return mono && r.every((v) => xs.includes(v)) && r[0] === Math.min(...xs) && r[4] === Math.max(...xs)
      }),
      { numRuns: 200 },
    )
  })
  it('dcount equals the number of distinct values; sum matches a plain sum', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -20, max: 20 })), (xs) => {
        const rows = xs.map((x) => [x])
        return (
          agg('dcount', [col('x')], rows).values[0] === new Set(xs).size &&
          agg('sum', [col('x')], rows).values[0] === xs.reduce((a, b) => a + b, 0)
        )
      }),
      { numRuns: 200 },
    )
  })
})
