import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KqlError } from '../kql-error.js'
import { parseDateTime } from '../values.js'
import { commonType, typeLiteralArg } from './function-definitions.js'
import type { ArgInfo } from './function-types.js'
import { compareValues, convertValue, hasTerm, hasTermRegex, parseJsonText, valueToString } from './value-conversions.js'

describe('valueToString', () => {
  it('prints values as Kusto does', () => {
    assert.equal(valueToString('datetime', parseDateTime('2015-01-01')), '2015-01-01T00:00:00.0000000Z')
    assert.equal(valueToString('timespan', -15_000_000n), '-00:00:01.5000000')
    assert.equal(valueToString('real', 1e15), '1E+15')
    assert.equal(valueToString('real', 0.00001), '1E-05')
    assert.equal(valueToString('real', 0.0001), '0.0001')
    assert.equal(valueToString('decimal', 0.00001), '0.00001')
    assert.equal(valueToString('dynamic', { a: [1, 'x'] }), '{"a":[1,"x"]}')
    assert.equal(valueToString('dynamic', NaN), 'NaN')
    assert.equal(valueToString('long', null), '')
  })
})

describe('convertValue', () => {
  it('parses, truncates and reports failures as null', () => {
    assert.equal(convertValue('long', 'string', '42'), 42)
    assert.equal(convertValue('int', 'real', -2.9), -2)
    assert.equal(convertValue('real', 'string', 'abc'), null)
    assert.equal(convertValue('bool', 'string', 'False'), false)
    assert.equal(convertValue('guid', 'string', '{0123456789ABCDEF0123456789ABCDEF}'), '01234567-89ab-cdef-0123-456789abcdef')
    assert.equal(convertValue('datetime', 'string', '2015-01-01'), parseDateTime('2015-01-01'))
    assert.equal(convertValue('timespan', 'string', '1.02:03:04'), 937_840_000_000n)
    assert.equal(convertValue('string', 'long', null), '')
    assert.equal(convertValue('long', 'dynamic', '7'), 7)
    assert.equal(convertValue('dynamic', 'timespan', 10_000_000n), '00:00:01')
  })
})

describe('parseJsonText', () => {
  it('parses JSON and Kusto extensions, undefined otherwise', () => {
    assert.deepEqual(parseJsonText('{"a": [1, 2]}'), { a: [1, 2] })
    assert.deepEqual(parseJsonText("['x', 'it\\'s']"), ['x', "it's"])
    assert.equal(parseJsonText('Infinity'), Infinity)
    assert.equal(parseJsonText('{oops'), undefined)
  })
})

describe('hasTerm', () => {
  it('matches whole terms case-insensitively', () => {
    assert.equal(hasTerm('this is an Example', 'example'), true)
    assert.equal(hasTerm('this is an example', 'exam'), false)
    assert.equal(hasTerm('error:404 seen', '404'), true)
    assert.equal(hasTerm('a1404', '404'), false)
    assert.equal(hasTerm('x 10.1.2.3:80', '10.1.2.3'), true)
    assert.equal(hasTerm('anything', ''), true)
  })
  it('folds case as the has operator with a constant term does (one rule for has, has_any, has_all)', () => {
    // issue 17: lowering the text made 'İ' (→ i + U+0307) hold the term 'i' for has_any only
    for (const [text, term] of [
      ['İ', 'i'],
      ['xİ', 'xi'],
      ['ſ', 's'],
      ['\u212A', 'k'],
      ['ı', 'i'],
      ['maß', 'mass'],
      ['ab\u212A', 'abk'],
    ] as const) {
      assert.equal(hasTerm(text, term), hasTermRegex(term, false)!.test(text), `${text} has ${term}`)
    }
    assert.equal(hasTerm('İ', 'i'), false)
    assert.equal(hasTerm('ſtep', 'step'), true)
  })
})

describe('commonType, compareValues, typeLiteralArg', () => {
  const arg = (type: ArgInfo['type'], text = 'x'): ArgInfo => ({ type, text })
  it('widens numbers, lets dynamic win, rejects mixes', () => {
    assert.equal(commonType('f', [arg('int'), arg('long')], [0, 1]), 'long')
    assert.equal(commonType('f', [arg('long'), arg('real')], [0, 1]), 'real')
    assert.equal(commonType('f', [arg('string'), arg('dynamic')], [0, 1]), 'dynamic')
    assert.throws(() => commonType('f', [arg('string'), arg('long')], [0, 1]), KqlError)
  })
  it('orders values of one type', () => {
    assert.ok(compareValues('long', 1, 2) < 0)
    assert.ok(compareValues('string', 'b', 'a') > 0)
    assert.ok(compareValues('datetime', 5n, 3n) > 0)
    assert.equal(compareValues('bool', true, true), 0)
  })
  it('reads typeof(T) from its constant or its text', () => {
    assert.equal(typeLiteralArg('f', { type: 'string', text: 'typeof(long)', constant: { value: 'long' } }), 'long')
    assert.equal(typeLiteralArg('f', { type: 'string', text: 'typeof(double)' }), 'real')
    assert.throws(() => typeLiteralArg('f', { type: 'string', text: '"x"', constant: { value: 'x' } }), KqlError)
  })
})
