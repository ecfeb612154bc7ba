import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KqlError } from '../kql-error.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { parseDateTime, parseTimespan } from '../values.js'
import type { ArgInfo } from './function-types.js'
import { lookupScalar } from './registry.js'

const ctx = { now: 0n, random: () => 0.5 }

/** Binds with constant arguments; `d` marks a dynamic argument. */
function call(name: string, types: readonly KqlType[], values: readonly KqlValue[], infos?: Partial<ArgInfo>[]): KqlValue {
  const fn = lookupScalar(name)
  assert.ok(fn, `${name} is registered`)
  const args = types.map((type, i) => ({ type, text: `a${i}`, constant: { value: values[i] ?? null }, ...(infos?.[i] ?? {}) }))
  return fn.bind(args).evaluate(values, ctx)
}

const d = (...values: DynamicValue[]): { types: KqlType[]; values: DynamicValue[] } => ({
  types: values.map(() => 'dynamic' as KqlType),
  values,
})
const dyn = (name: string, ...values: DynamicValue[]): KqlValue => {
  const x = d(...values)
  return call(name, x.types, x.values)
}

function bindFails(name: string, types: readonly KqlType[]): void {
  assert.throws(
    () => lookupScalar(name)!.bind(types.map((type, i) => ({ type, text: `a${i}` }))),
    (e: unknown) => e instanceof KqlError && e.kind === 'semantic' && e.message.includes(name),
  )
}

describe('array shape', () => {
  it('array_length, array_reverse, array_sum, array_concat', () => {
    assert.equal(dyn('array_length', [1, 2, 3]), 3)
    assert.equal(dyn('array_length', { a: 1 }), null)
    assert.deepEqual(dyn('array_reverse', ['this', 'is', 'an', 'example', '!']), ['!', 'example', 'an', 'is', 'this'])
    assert.equal(dyn('array_sum', [1, 2, 3, 4]), 10)
    assert.equal(dyn('array_sum', [1, 'a']), null)
    assert.deepEqual(dyn('array_concat', [1, 2, 3], [4, 5], [6]), [1, 2, 3, 4, 5, 6])
    assert.equal(dyn('array_concat', [1], 5), null)
    bindFails('array_length', ['string'])
  })
  it('array_slice (documentation examples)', () => {
    const s = (arr: DynamicValue, a: number, b: number): KqlValue => call('array_slice', ['dynamic', 'long', 'long'], [arr, a, b])
    assert.deepEqual(s([1, 2, 3], 1, 2), [2, 3])
    assert.deepEqual(s([1, 2, 3, 4, 5], 2, -1), [3, 4, 5])
    assert.deepEqual(s([1, 2, 3, 4, 5], -3, -2), [3, 4])
    assert.deepEqual(s([1, 2, 3], 2, 1), [])
    assert.deepEqual(s([1, 2, 3], 0, 10), [1, 2, 3])
  })
  it('array_split (documentation examples)', () => {
    assert.deepEqual(call('array_split', ['dynamic', 'long'], [[1, 2, 3, 4, 5], 2]), [
      [1, 2],
      [3, 4, 5],
    ])
    assert.deepEqual(dyn('array_split', [1, 2, 3, 4, 5], [1, 3]), [[1], [2, 3], [4, 5]])
    assert.deepEqual(call('array_split', ['dynamic', 'long'], [[1, 2, 3, 4, 5], -2]), [
      [1, 2, 3],
      [4, 5],
    ])
  })
  it('array_index_of (documentation example)', () => {
    const arr = ['this', 'is', 'an', 'example', 'an', 'example']
    const idx = (v: string, ...rest: number[]): KqlValue =>
      call('array_index_of', ['dynamic', 'string', ...rest.map((): KqlType => 'long')], [arr, v, ...rest])
    assert.deepEqual(
      [
        idx('an'),
        idx('example', 1, 3),
        idx('example', 1, 2),
        idx('is', 2, 4),
        idx('example', 2, -1),
        idx('an', 1, -1, 2),
        idx('an', 1, -1, 3),
        idx('an', -3),
        idx('is', -4),
      ],
      [2, 3, -1, -1, 3, 4, -1, 4, -1],
    )
    assert.equal(idx('an', 0, -2), null)
    assert.equal(call('array_index_of', ['dynamic', 'long'], [[1, 2, 3], 3]), 2)
  })
  it('array_iff (documentation examples)', () => {
    assert.deepEqual(dyn('array_iff', [true, false, true], [1, 2, 3], [4, 5, 6]), [1, 5, 3])
    assert.deepEqual(dyn('array_iff', [1, 0, 5, 0], [1, 2, 3, 4], [4, 5, 6, 7]), [1, 5, 3, 7])
    assert.deepEqual(call('array_iff', ['dynamic', 'long', 'long'], [[true, false, true, false], 1, 0]), [1, 0, 1, 0])
    assert.deepEqual(dyn('array_iff', [true, true, true], [1, 2], [3, 4]), [1, 2, null])
    assert.deepEqual(dyn('array_iif', [true, 'x'], [1, 2], [3, 4]), [1, null])
  })
})

describe('shifting, rotating, sorting', () => {
  it('array_shift_left/right (documentation examples)', () => {
    assert.deepEqual(call('array_shift_left', ['dynamic', 'long'], [[1, 2, 3, 4, 5], 2]), [3, 4, 5, null, null])
    assert.deepEqual(call('array_shift_left', ['dynamic', 'long', 'long'], [[1, 2, 3, 4, 5], 2, -1]), [3, 4, 5, -1, -1])
    assert.deepEqual(call('array_shift_left', ['dynamic', 'long', 'long'], [[1, 2, 3, 4, 5], -2, -1]), [-1, -1, 1, 2, 3])
    assert.deepEqual(call('array_shift_right', ['dynamic', 'long'], [[1, 2, 3, 4, 5], 1]), [null, 1, 2, 3, 4])
    assert.deepEqual(call('array_shift_right', ['dynamic', 'long', 'long'], [[1, 2, 3, 4, 5], 1, -1]), [-1, 1, 2, 3, 4])
    assert.deepEqual(call('array_shift_right', ['dynamic', 'long', 'long'], [[1, 2, 3, 4, 5], -1, -1]), [2, 3, 4, 5, -1])
    assert.deepEqual(call('array_shift_left', ['dynamic', 'long'], [['a', 'b'], 1]), ['b', ''])
  })
  it('array_rotate_left/right (documentation examples)', () => {
    assert.deepEqual(call('array_rotate_left', ['dynamic', 'long'], [[1, 2, 3, 4, 5], 2]), [3, 4, 5, 1, 2])
    assert.deepEqual(call('array_rotate_left', ['dynamic', 'long'], [[1, 2, 3, 4, 5], -2]), [4, 5, 1, 2, 3])
    assert.deepEqual(call('array_rotate_right', ['dynamic', 'long'], [[1, 2, 3, 4, 5], 2]), [4, 5, 1, 2, 3])
    assert.deepEqual(call('array_rotate_right', ['dynamic', 'long'], [[1, 2, 3, 4, 5], -2]), [3, 4, 5, 1, 2])
  })
  it('array_sort_asc/desc (documentation examples)', () => {
    assert.deepEqual(dyn('array_sort_asc', [1, 3, 4, 5, 2], ['a', 'b', 'c', 'd', 'e']), [
      [1, 2, 3, 4, 5],
      ['a', 'e', 'b', 'c', 'd'],
    ])
    assert.deepEqual(dyn('array_sort_desc', [1, 3, 4, 5, 2], ['a', 'b', 'c', 'd', 'e']), [
      [5, 4, 3, 2, 1],
      ['d', 'c', 'b', 'e', 'a'],
    ])
    assert.deepEqual(dyn('array_sort_asc', ['John', 'Paul', 'George', 'Ringo']), ['George', 'John', 'Paul', 'Ringo'])
    assert.deepEqual(dyn('array_sort_asc', [null, 'blue', 'yellow', 'green', null]), ['blue', 'green', 'yellow', null, null])
    assert.deepEqual(call('array_sort_asc', ['dynamic', 'bool'], [[null, 'blue', 'yellow', 'green', null], false]), [
      null,
      null,
      'blue',
      'green',
      'yellow',
    ])
    assert.deepEqual(dyn('array_sort_desc', [null, 'blue', 'yellow', 'green', null]), ['yellow', 'green', 'blue', null, null])
    assert.deepEqual(dyn('array_sort_asc', ['b', 1, 'a', 0.5]), [0.5, 1, 'a', 'b'])
    assert.deepEqual(dyn('array_sort_asc', [3, 1, 2], [1, 2]), [[1, 2, 3], null])
    const times = ['2019-07-15T00:00:00Z', '2019-07-02T00:00:00Z', '2019-07-22T00:00:00Z']
    assert.deepEqual((dyn('array_sort_asc', times, ['chmod', 'ls', 'dir']) as DynamicValue[])[1], ['ls', 'chmod', 'dir'])
  })
})

describe('sets', () => {
  it('set_union, set_intersect, set_difference (documentation examples)', () => {
    assert.deepEqual(dyn('set_union', [1, 2, 1, 4], [1, 2], [8]), [1, 2, 4, 8])
    assert.deepEqual(dyn('set_intersect', [1, 2, 1, 4], [1, 2], [1, 2, 8]), [1, 2])
    assert.deepEqual(dyn('set_difference', [1, 2, 1, 4], [1, 2], [1, 2, 8]), [4])
    assert.deepEqual(dyn('set_difference', [1, 2, 3], [1, 2, 3]), [])
  })
  it('set_has_element and jaccard_index', () => {
    assert.equal(call('set_has_element', ['dynamic', 'string'], [['this', 'is', 'an', 'example'], 'example']), true)
    assert.equal(call('set_has_element', ['dynamic', 'string'], [['this', 'is'], 'test']), false)
    assert.equal(call('set_has_element', ['dynamic', 'long'], [[1, 2, 3], 2]), true)
    assert.equal(dyn('jaccard_index', [1, 2, 3], [1, 2, 3, 4]), 0.75)
    assert.equal(dyn('jaccard_index', [1, 1, 2], [2, 3]), 1 / 3)
  })
})

describe('property bags', () => {
  it('bag_keys (documentation example)', () => {
    assert.deepEqual(dyn('bag_keys', { a: 'b', c: 123 }), ['a', 'c'])
    assert.deepEqual(dyn('bag_keys', { a: 'b', c: [{ d: 123 }] }), ['a', 'c'])
    assert.equal(dyn('bag_keys', null), null)
    assert.deepEqual(dyn('bag_keys', {}), [])
    assert.equal(dyn('bag_keys', 'a'), null)
    assert.equal(dyn('bag_keys', []), null)
  })
  it('bag_merge keeps the first value of a duplicated key', () => {
    assert.deepEqual(dyn('bag_merge', { A1: 12, B1: 2, C1: 3 }, { A2: 81, B2: 82, A1: 1 }), { A1: 12, B1: 2, C1: 3, A2: 81, B2: 82 })
  })
  it('bag_set_key with root and JSONPath keys (documentation examples)', () => {
    const set = (b: DynamicValue, k: string, v: KqlValue, t: KqlType): KqlValue => call('bag_set_key', ['dynamic', 'string', t], [b, k, v])
    assert.deepEqual(set({ key1: 1, key2: 2 }, 'key3', 3, 'long'), { key1: 1, key2: 2, key3: 3 })
    assert.deepEqual(set({ key1: 1, key3: 'abc' }, 'key3', 3, 'long'), { key1: 1, key3: 3 })
    assert.deepEqual(set({ key1: 123, key2: { prop1: 123, prop2: 'xyz' } }, '$.key2.prop1', 'abc', 'string'), {
      key1: 123,
      key2: { prop1: 'abc', prop2: 'xyz' },
    })
    assert.deepEqual(set({ key1: 123 }, '$.key2.prop1', 'abc', 'string'), { key1: 123, key2: { prop1: 'abc' } })
    assert.equal(set([1], 'a', 1, 'long'), null)
  })
  it('bag_remove_keys (documentation examples)', () => {
    assert.deepEqual(dyn('bag_remove_keys', { key1: 123, key2: 'abc' }, ['key2', 'key4']), { key1: 123 })
    assert.deepEqual(dyn('bag_remove_keys', { key1: 'value', key3: 42.0 }, ['key2', 'key4']), { key1: 'value', key3: 42 })
    assert.deepEqual(
      dyn('bag_remove_keys', { key1: 123, key2: { prop1: 'abc', prop2: 'xyz' }, key3: [100, 200] }, ['$.key2.prop1', 'key3']),
      { key1: 123, key2: { prop2: 'xyz' } },
    )
  })
  it('bag_has_key', () => {
    const has = (b: DynamicValue, k: string): KqlValue => call('bag_has_key', ['dynamic', 'string'], [b, k])
    assert.equal(has({ a: 1, b: { c: 2 } }, 'a'), true)
    assert.equal(has({ a: 1, b: { c: 2 } }, '$.b.c'), true)
    assert.equal(has({ a: 1, b: { c: 2 } }, "$['b']['d']"), false)
    assert.equal(has({ a: 1 }, 'z'), false)
  })
  it('bag_zip (documentation examples)', () => {
    assert.deepEqual(dyn('bag_zip', ['a', 'b', 'c'], [1, '2', 3.4]), { a: 1, b: '2', c: 3.4 })
    assert.deepEqual(dyn('bag_zip', ['a', 'b', 'c'], [1, '2']), { a: 1, b: '2', c: null })
    assert.deepEqual(dyn('bag_zip', ['a', 'b'], [1, '2', 2.5]), { a: 1, b: '2' })
    assert.deepEqual(dyn('bag_zip', ['a', 8, 'b'], [1, '2', 2.5]), { a: 1, b: 2.5 })
    assert.deepEqual(dyn('bag_zip', ['a', 8, 'b'], 1), { a: null, b: null })
    assert.equal(dyn('bag_zip', 'a', [1, '2', 2.5]), null)
  })
  it('bag_pack / pack and bag_pack_columns', () => {
    assert.deepEqual(call('bag_pack', ['string', 'long', 'string', 'string'], ['Level', 1, 'Message', 'hi']), { Level: 1, Message: 'hi' })
    assert.deepEqual(call('pack', ['string', 'datetime'], ['t', parseDateTime('2020-01-01')!]), { t: '2020-01-01T00:00:00Z' })
    assert.throws(() => call('bag_pack', ['string'], ['a']), KqlError)
    assert.deepEqual(call('bag_pack_columns', ['string', 'long'], ['x', 5], [{ columnName: 'Name' }, { columnName: 'Count' }]), {
      Name: 'x',
      Count: 5,
    })
  })
})

describe('packing and generating', () => {
  it('pack_all packs the row, optionally skipping nulls and empty strings (documentation case)', () => {
    const cols = [{ columnName: 'Source' }, { columnName: 'Target' }, { columnName: 'CharsCount' }]
    const row = ['555-1313', '', 42]
    assert.deepEqual(call('pack_all', ['string', 'string', 'long'], row, cols), { Source: '555-1313', Target: '', CharsCount: 42 })
    assert.deepEqual(call('pack_all', ['bool', 'string', 'string', 'long'], [true, ...row], [{}, ...cols]), {
      Source: '555-1313',
      CharsCount: 42,
    })
  })
  it('pack_array converts typed values', () => {
    assert.deepEqual(call('pack_array', ['long', 'string', 'timespan'], [1, 'a', parseTimespan('1h')!]), [1, 'a', '01:00:00'])
  })
  it('zip (documentation examples)', () => {
    assert.deepEqual(dyn('zip', [1, 3, 5], [2, 4, 6]), [
      [1, 2],
      [3, 4],
      [5, 6],
    ])
    assert.deepEqual(dyn('zip', ['A', 1, 1.5], [{}, 'B']), [
      ['A', {}],
      [1, 'B'],
      [1.5, null],
    ])
  })
  it('repeat (documentation example)', () => {
    assert.deepEqual(call('repeat', ['long', 'long'], [1, 3]), [1, 1, 1])
    assert.deepEqual(call('repeat', ['string', 'long'], ['a', 0]), [])
    assert.equal(call('repeat', ['string', 'long'], ['a', -1]), null)
  })
  it('range (documentation examples)', () => {
    assert.deepEqual(call('range', ['long', 'long', 'long'], [1, 8, 3]), [1, 4, 7])
    assert.deepEqual(call('range', ['long', 'long'], [1, 3]), [1, 2, 3])
    assert.deepEqual(call('range', ['timespan', 'timespan'], [parseTimespan('1h')!, parseTimespan('5h')!]), [
      '01:00:00',
      '02:00:00',
      '03:00:00',
      '04:00:00',
      '05:00:00',
    ])
    const days = call(
      'range',
      ['datetime', 'datetime', 'timespan'],
      [parseDateTime('2015-01-01')!, parseDateTime('2015-12-31')!, parseTimespan('1d')!],
    ) as string[]
    assert.equal(days.length, 365)
    assert.equal(days[0], '2015-01-01T00:00:00Z')
    assert.equal((call('range', ['long', 'long'], [1, 1000000000]) as number[]).length, 1048576)
    assert.deepEqual(call('range', ['long', 'long', 'long'], [5, 1, -2]), [5, 3, 1])
  })
  it('treepath (documentation examples)', () => {
    assert.deepEqual(dyn('treepath', { a: 'b', c: 123 }), ["['a']", "['c']"])
    assert.deepEqual(dyn('treepath', { prop1: [1, 2, 3, 4], prop2: 'value2' }), ["['prop1']", "['prop1'][0]", "['prop2']"])
    assert.deepEqual(dyn('treepath', { listProperty: [100, 200, 300, 'abcde', { x: 'y' }] }), [
      "['listProperty']",
      "['listProperty'][0]",
      "['listProperty'][0]['x']",
    ])
  })
  it('dynamic_to_json sorts keys (documentation example)', () => {
    const bag1 = { Y10: {}, X8: { c3: 1, d8: 5, a4: 6 }, D1: 114, A1: 12, B1: 2, C1: 3, A14: [15, 13, 18] }
    assert.equal(dyn('dynamic_to_json', bag1), '{"A1":12,"A14":[15,13,18],"B1":2,"C1":3,"D1":114,"X8":{"a4":6,"c3":1,"d8":5},"Y10":{}}')
    assert.equal(call('dynamic_to_json', ['long'], [5]), '5')
    assert.equal(dyn('dynamic_to_json', 'abc'), 'abc')
  })
})

describe('array_sort multi-column naming', () => {
  it('names the sorted arrays after their arguments', async () => {
    const { arraySortOutputs } = await import('./dynamic-functions.js')
    assert.deepEqual(
      arraySortOutputs([
        { type: 'dynamic', text: 'array1', columnName: 'array1' },
        { type: 'dynamic', text: 'array2', columnName: 'array2' },
      ]).map((c) => c.name),
      ['array1_sorted', 'array2_sorted'],
    )
    assert.deepEqual(
      arraySortOutputs([
        { type: 'dynamic', text: 'dynamic([1])' },
        { type: 'bool', text: 'false' },
      ]).map((c) => c.name),
      ['array0_sorted'],
    )
  })
})

describe('properties', async () => {
  const fc = (await import('fast-check')).default
  it('array_sort_asc orders numbers and keeps the multiset; desc is its reverse', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 })), (xs) => {
        const asc = dyn('array_sort_asc', xs) as number[]
        const desc = dyn('array_sort_desc', xs) as number[]
        const sorted = [...xs].sort((a, b) => a - b)
        return JSON.stringify(asc) === JSON.stringify(sorted) && JSON.stringify(desc) === JSON.stringify([...sorted].reverse())
      }),
      { numRuns: 200 },
    )
  })
  it('rotating left then right is the identity; set_union contains both inputs', () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), fc.array(fc.integer()), fc.integer({ min: -50, max: 50 }), (a, b, k) => {
        const back = call('array_rotate_right', ['dynamic', 'long'], [call('array_rotate_left', ['dynamic', 'long'], [a, k]), k])
        const u = new Set(dyn('set_union', a, b) as number[])
        return JSON.stringify(back) === JSON.stringify(a) && [...a, ...b].every((x) => u.has(x))
      }),
      { numRuns: 200 },
    )
  })
})
