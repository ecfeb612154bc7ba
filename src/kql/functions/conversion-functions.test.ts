import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { d, l, s, scalarCaller } from '../../../test/support/kql-function-calls.js'
import { KqlError } from '../kql-error.js'
import { parseDateTime } from '../values.js'
import { lookupScalar } from './registry.js'
import { formatReal, valueToString } from './value-conversions.js'

const { bound, call, ctx } = scalarCaller({ random: 0.25, constants: true })

describe('tostring', () => {
  it('prints every type as Kusto does', () => {
    assert.equal(call('tostring', l(123)), '123')
    assert.equal(call('tostring', ['int', 123]), '123')
    assert.equal(call('tostring', ['real', 1.5]), '1.5')
    assert.equal(call('tostring', ['real', 1]), '1')
    assert.equal(call('tostring', ['real', 1e15]), '1E+15')
    assert.equal(call('tostring', ['real', 123456789012345]), '123456789012345')
    assert.equal(call('tostring', ['real', 1.5e20]), '1.5E+20')
    assert.equal(call('tostring', ['real', 0.0001]), '0.0001')
    assert.equal(call('tostring', ['real', 0.00001]), '1E-05')
    assert.equal(call('tostring', ['real', -2.5e-7]), '-2.5E-07')
    assert.equal(call('tostring', ['real', NaN]), 'NaN')
    assert.equal(call('tostring', ['real', -Infinity]), '-Infinity')
    assert.equal(call('tostring', ['decimal', 123.45678]), '123.45678')
    assert.equal(call('tostring', ['decimal', 1e20]), '100000000000000000000')
    assert.equal(call('tostring', ['bool', true]), 'true')
    assert.equal(call('tostring', ['timespan', 10n * 10_000_000n]), '00:00:10')
    assert.equal(call('tostring', ['timespan', 864_000_000_000n + 15_000_000n]), '1.00:00:01.5000000')
    assert.equal(call('tostring', ['datetime', parseDateTime('2023-08-30 23:00')]), '2023-08-30T23:00:00.0000000Z')
    assert.equal(call('tostring', ['datetime', parseDateTime('2023-08-30 23:00:00.1234567')]), '2023-08-30T23:00:00.1234567Z')
    assert.equal(call('tostring', ['guid', '12e8b78d-55b4-46ae-b068-26d7a0080254']), '12e8b78d-55b4-46ae-b068-26d7a0080254')
    assert.equal(call('tostring', s('abc')), 'abc')
  })
  it('turns nulls into the empty string', () => {
    for (const t of ['int', 'long', 'real', 'bool', 'datetime', 'timespan', 'guid', 'dynamic'] as const)
      assert.equal(call('tostring', [t, null]), '')
    assert.deepEqual(bound('tostring', l(null)), { type: 'string', value: '' })
  })
  it('prints dynamic values: strings bare, the rest as JSON', () => {
    assert.equal(call('tostring', d('abc def')), 'abc def')
    assert.equal(call('tostring', d(123)), '123')
    assert.equal(call('tostring', d(1.5)), '1.5')
    assert.equal(call('tostring', d([1, 2])), '[1,2]')
    assert.equal(call('tostring', d({ a: 1 })), '{"a":1}')
    assert.equal(call('tostring', d(true)), 'true')
  })
  it('formatReal round-trips every finite double', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const text = formatReal(x)
        return Number(text) === x || (x === 0 && text === '0')
      }),
    )
  })
  it('valueToString of longs beyond 2^53 stays integral', () => {
    assert.equal(valueToString('long', Number(1380966698541616202n)), '1380966698541616128')
  })
})

describe('toint, tolong, todouble, todecimal, tobool', () => {
  it('converts strings', () => {
    assert.deepEqual(bound('toint', s('123')), { type: 'int', value: 123 })
    assert.equal(call('toint', s('')), null)
    assert.equal(call('toint', s('nan')), null)
    assert.equal(call('tolong', s('123')), 123)
    assert.equal(call('tolong', s('')), null)
    assert.equal(call('tolong', s(' 42 ')), 42)
    assert.equal(call('tolong', s('0x1F')), 31)
    assert.equal(call('todouble', s('123.5')), 123.5)
    assert.equal(call('toreal', s('123.4')), 123.4)
    assert.ok(Number.isNaN(call('todouble', s('nan')) as number))
    assert.equal(call('todouble', s('')), null)
    assert.equal(call('todouble', s('1e3')), 1000)
    assert.deepEqual(bound('todecimal', s('123.45678')), { type: 'decimal', value: 123.45678 })
  })
  it('truncates reals toward zero', () => {
    assert.equal(call('toint', ['real', 2.3]), 2)
    assert.equal(call('tolong', ['real', 123.5]), 123)
    assert.equal(call('tolong', ['real', -2.7]), -2)
    assert.equal(call('tolong', ['real', NaN]), null)
    assert.equal(call('toint', l(4294967297)), 1)
  })
  it('converts datetimes and timespans to ticks', () => {
    assert.equal(call('tolong', ['datetime', parseDateTime('1970-01-01')]), 621355968000000000n)
    assert.equal(call('tolong', ['timespan', 10_000_000n]), 10_000_000)
    assert.equal(call('todouble', ['timespan', 5n]), 5)
  })
  it('converts bools and dynamic values', () => {
    assert.equal(call('tolong', ['bool', true]), 1)
    assert.equal(call('tolong', d(12.9)), 12)
    assert.equal(call('tolong', d('17')), 17)
    assert.equal(call('tolong', d([1])), null)
    assert.equal(call('todouble', d(null)), null)
    assert.equal(call('toreal', d(118)), 118)
  })
  it('tobool follows the documented examples', () => {
    assert.equal(call('tobool', s('true')), true)
    assert.equal(call('tobool', s('false')), false)
    assert.equal(call('tobool', s('TRUE')), true)
    assert.equal(call('tobool', l(1)), true)
    assert.equal(call('tobool', l(123)), true)
    assert.equal(call('tobool', l(0)), false)
    assert.equal(call('toboolean', s('maybe')), null)
    assert.equal(call('tobool', d(true)), true)
  })
})

describe('toguid, tohex, gettype, new_guid', () => {
  it('toguid', () => {
    assert.deepEqual(bound('toguid', s('0123456789abcdef0123456789abcdef')), {
      type: 'guid',
      value: '01234567-89ab-cdef-0123-456789abcdef',
    })
    assert.equal(call('toguid', s('0123456789ab-cdef-0123-456789abcdef')), '01234567-89ab-cdef-0123-456789abcdef')
    assert.equal(call('toguid', s('01234567-89AB-CDEF-0123-456789ABCDEF')), '01234567-89ab-cdef-0123-456789abcdef')
    assert.equal(call('toguid', s('a string that is not a guid')), null)
  })
  it('tohex', () => {
    assert.equal(call('tohex', l(256)), '100')
    assert.equal(call('tohex', l(-256)), 'ffffffffffffff00')
    assert.equal(call('tohex', ['int', -256], l(8)), 'ffffff00')
    assert.equal(call('tohex', l(256), l(8)), '00000100')
    assert.equal(call('tohex', l(256), l(2)), '100')
    assert.equal(call('tohex', l(null)), null)
    assert.throws(() => call('tohex', ['real', 1.5]), KqlError)
  })
  it('gettype', () => {
    assert.equal(call('gettype', s('a')), 'string')
    assert.equal(call('gettype', l(111)), 'long')
    assert.equal(call('gettype', ['bool', true]), 'bool')
    assert.equal(call('gettype', ['datetime', 0n]), 'datetime')
    assert.equal(call('gettype', ['timespan', 0n]), 'timespan')
    assert.equal(call('gettype', ['real', 123.45]), 'real')
    assert.equal(call('gettype', ['guid', '12e8b78d-55b4-46ae-b068-26d7a0080254']), 'guid')
    assert.equal(call('gettype', d(1)), 'int')
    assert.equal(call('gettype', d(10000000000)), 'long')
    assert.equal(call('gettype', d('abc')), 'string')
    assert.equal(call('gettype', d({ abc: 1 })), 'dictionary')
    assert.equal(call('gettype', d([1, 2, 3])), 'array')
    assert.equal(call('gettype', d(null)), 'null')
  })
  it('new_guid is a v4 guid drawn from the query random source', () => {
    const fn = lookupScalar('new_guid')!
    assert.equal(fn.deterministic, false)
    const b = fn.bind([])
    assert.equal(b.type, 'guid')
    assert.match(String(b.evaluate([], ctx)), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })
})

describe('parse_json', () => {
  it('parses JSON text', () => {
    const metrics = '{"duration":{"value":118.0,"count":5.0,"min":100.0,"max":150.0,"stdDev":0.0,"sampledValue":118.0,"sum":118.0}}'
    assert.deepEqual(call('parse_json', s(metrics)), {
      duration: { value: 118, count: 5, min: 100, max: 150, stdDev: 0, sampledValue: 118, sum: 118 },
    })
    assert.equal(call('parse_json', s('1')), 1)
    assert.equal(call('parse_json', s(' "abc" ')), 'abc')
    assert.deepEqual(call('todynamic', s('[1, 2, 3]')), [1, 2, 3])
    assert.deepEqual(call('parse_json', s('{"a":123, "b":"{\\"c\\":456}"}')), { a: 123, b: '{"c":456}' })
  })
  it('keeps non-JSON text as a string, empty text as null, dynamic as-is', () => {
    assert.equal(call('parse_json', s('not json')), 'not json')
    assert.equal(call('parse_json', s('')), null)
    assert.deepEqual(call('parse_json', d({ a: 1 })), { a: 1 })
    assert.deepEqual(call('parse_json', s("{'a': 'x'}")), { a: 'x' })
    assert.ok(Number.isNaN((call('parse_json', s('{"v": NaN}')) as { v: number }).v))
  })
})

describe('parse_xml', () => {
  it('follows the documented conversion table', () => {
    assert.deepEqual(call('parse_xml', s('<e/>')), { e: null })
    assert.deepEqual(call('parse_xml', s('<e>text</e>')), { e: 'text' })
    assert.deepEqual(call('parse_xml', s('<e name="value" />')), { e: { '@name': 'value' } })
    assert.deepEqual(call('parse_xml', s('<e name="value">text</e>')), { e: { '@name': 'value', '#text': 'text' } })
    assert.deepEqual(call('parse_xml', s('<e> <a>text</a> <b>text</b> </e>')), { e: { a: 'text', b: 'text' } })
    assert.deepEqual(call('parse_xml', s('<e> <a>text</a> <a>text</a> </e>')), { e: { a: ['text', 'text'] } })
    assert.deepEqual(call('parse_xml', s('<e> text <a>text</a> </e>')), { e: { '#text': 'text', a: 'text' } })
  })
  it('skips the declaration and comments, decodes entities, rejects bad XML', () => {
    const xml = '<?xml version="1.0" encoding="UTF-8"?>\n<duration>\n  <value>118.0</value>\n  <!-- c -->\n  <min>100.0</min>\n</duration>'
    assert.deepEqual(call('parse_xml', s(xml)), { duration: { value: '118.0', min: '100.0' } })
    assert.deepEqual(call('parse_xml', s('<a x="1 &amp; 2">&lt;b&gt;<![CDATA[<c>]]></a>')), {
      a: { '@x': '1 & 2', '#text': ['<b>', '<c>'] },
    })
    assert.equal(call('parse_xml', s('<a><b></a>')), null)
    assert.equal(call('parse_xml', s('not xml')), null)
  })
})
