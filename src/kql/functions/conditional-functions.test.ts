import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { b, d, i, l, s, scalarCaller } from '../../../test/support/kql-function-calls.js'
import { KqlError } from '../kql-error.js'
import type { KqlValue } from '../types.js'

const { bound, call } = scalarCaller()

describe('iff / iif', () => {
  it('chooses a branch; null predicates choose else', () => {
    assert.deepEqual(bound('iff', b(true), s('ifTrue'), s('ifFalse')), { type: 'string', value: 'ifTrue' })
    assert.equal(call('iif', b(false), s('ifTrue'), s('ifFalse')), 'ifFalse')
    assert.equal(call('iff', b(null), b(true), b(false)), false)
    assert.deepEqual(bound('iff', b(true), i(1), i(2)), { type: 'int', value: 1 })
    assert.deepEqual(bound('iff', b(false), ['timespan', 1n], ['timespan', 2n]), { type: 'timespan', value: 2n })
    assert.deepEqual(bound('iff', b(true), ['datetime', 5n], ['datetime', null]), { type: 'datetime', value: 5n })
  })
  it('widens numbers and lets dynamic win', () => {
    assert.deepEqual(bound('iff', b(true), i(1), l(2)), { type: 'long', value: 1 })
    assert.deepEqual(bound('iff', b(false), l(1), ['real', 2.5]), { type: 'real', value: 2.5 })
    assert.deepEqual(bound('iff', b(false), d([1]), ['datetime', 0n]), { type: 'dynamic', value: '1970-01-01T00:00:00Z' })
  })
  it('rejects mismatched types and a non-bool predicate', () => {
    assert.throws(
      () => call('iff', b(true), s('a'), l(1)),
      (e: unknown) => e instanceof KqlError && /iff\(\)/.test(e.message),
    )
    assert.throws(() => call('iff', l(1), s('a'), s('b')), KqlError)
    assert.throws(() => call('iff', b(true), s('a')), KqlError)
  })
})

describe('case', () => {
  it('returns the first satisfied branch or else', () => {
    const bucket = (size: number): KqlValue => call('case', b(size <= 3), s('Small'), b(size <= 10), s('Medium'), s('Large'))
    assert.deepEqual([1, 3, 5, 7, 9, 11, 13, 15].map(bucket), ['Small', 'Small', 'Medium', 'Medium', 'Medium', 'Large', 'Large', 'Large'])
    assert.equal(call('case', b(null), l(1), l(2)), 2)
  })
  it('checks its shape', () => {
    assert.throws(() => call('case', b(true), l(1)), KqlError)
    assert.throws(() => call('case', s('x'), l(1), l(2)), KqlError)
    assert.throws(() => call('case', b(true), l(1), s('x')), KqlError)
  })
})

describe('coalesce', () => {
  it('returns the first non-null (non-empty string) value', () => {
    assert.deepEqual(bound('coalesce', l(null), l(42), l(33)), { type: 'long', value: 42 })
    assert.equal(call('coalesce', b(null), b(true)), true)
    assert.equal(call('coalesce', l(null), l(null), l(123)), 123)
    assert.equal(call('coalesce', ['datetime', null], ['datetime', 7n]), 7n)
    assert.equal(call('coalesce', s(''), s('a')), 'a')
    assert.equal(call('coalesce', s(''), s('')), '')
    assert.equal(call('coalesce', l(null), l(null)), null)
    assert.throws(() => call('coalesce', l(1)), KqlError)
  })
})

describe('max_of / min_of', () => {
  it('follows the documented examples', () => {
    assert.deepEqual(bound('max_of', l(10), l(1), l(-3), l(17)), { type: 'long', value: 17 })
    assert.deepEqual(bound('min_of', l(10), l(1), l(-3), l(17)), { type: 'long', value: -3 })
    const rows: [number | null, number | null, number | null][] = [
      [1, 6, 6],
      [8, 1, 8],
      [null, 2, 2],
      [1, null, 1],
      [null, null, null],
    ]
    for (const [a, c, want] of rows) assert.equal(call('max_of', i(a), i(c)), want)
    assert.deepEqual(bound('min_of', ['real', 1.5], l(2)), { type: 'real', value: 1.5 })
    assert.equal(call('min_of', l(3), l(2)), 2)
  })
  it('orders strings, datetimes and timespans', () => {
    assert.equal(call('max_of', s('b'), s('a'), s('c')), 'c')
    assert.equal(call('min_of', ['datetime', 5n], ['datetime', 3n]), 3n)
    assert.equal(call('max_of', ['timespan', 5n], ['timespan', null]), 5n)
    assert.throws(() => call('max_of', s('a'), l(1)), KqlError)
  })
})

describe('not, isnull, isnotnull, isempty, isnotempty', () => {
  it('not', () => {
    assert.equal(call('not', b(true)), false)
    assert.equal(call('not', b(false)), true)
    assert.equal(call('not', b(null)), null)
    assert.throws(() => call('not', l(1)), KqlError)
  })
  it('isnull / isnotnull: strings are never null', () => {
    assert.equal(call('isnull', b(null)), true)
    assert.equal(call('isnull', b(false)), false)
    assert.equal(call('isnull', i(null)), true)
    assert.equal(call('isnull', ['real', null]), true)
    assert.equal(call('isnull', ['real', 0]), false)
    assert.equal(call('isnull', ['datetime', null]), true)
    assert.equal(call('isnull', ['timespan', 0n]), false)
    assert.equal(call('isnull', s('')), false)
    assert.equal(call('isnull', d(null)), true)
    assert.equal(call('isnotnull', l(1)), true)
    assert.equal(call('notnull', l(null)), false)
  })
  it('isempty / isnotempty', () => {
    assert.equal(call('isempty', s('')), true)
    assert.equal(call('isempty', s(' ')), false)
    assert.equal(call('isempty', s('x')), false)
    assert.equal(call('isempty', d(null)), true)
    assert.equal(call('isempty', d([])), false)
    assert.equal(call('isempty', d({})), false)
    assert.equal(call('isempty', l(null)), true)
    assert.equal(call('isnotempty', s('x')), true)
    assert.equal(call('notempty', s('')), false)
  })
})

describe('assert', () => {
  it('passes true and raises a runtime error otherwise', () => {
    assert.equal(call('assert', b(true), s('ok')), true)
    assert.throws(
      () => call('assert', b(false), s('boom')),
      (e: unknown) => e instanceof KqlError && e.kind === 'runtime' && /boom/.test(e.message),
    )
  })
})
