import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { dynamicJsonText, parseDynamicJson } from './dynamic-json.js'
import { canonLong, INT64_MAX, INT64_MIN } from './long.js'
import type { DynamicValue } from './types.js'

const EDGES = [2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, INT64_MAX, INT64_MIN, INT64_MAX - 1n, INT64_MIN + 1n]
const nonFinite = (n: number): string => String(n)

/** A canonical long anywhere in int64, edges often. */
const long = fc.oneof(fc.constantFrom(...EDGES), fc.bigInt({ min: INT64_MIN, max: INT64_MAX })).map(canonLong)
const dynamic: fc.Arbitrary<DynamicValue> = fc.letrec<{ v: DynamicValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    long,
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.string(), tie('v'), { maxKeys: 4 }),
  ),
})).v

describe('dynamic JSON with exact longs', () => {
  it('reads integers beyond ±2^53 inside int64 as canonical longs, others as doubles', () => {
    assert.deepEqual(parseDynamicJson('[9007199254740993,-9007199254740993,9007199254740991,9223372036854775807,-9223372036854775808]'), [
      9007199254740993n,
      -9007199254740993n,
      9007199254740991,
      INT64_MAX,
      INT64_MIN,
    ])
    // beyond int64, or with a fraction or an exponent: a double (Kusto reads those as real)
    assert.deepEqual(parseDynamicJson('{"a":9223372036854775808,"b":9007199254740993.0,"c":9007199254740993e0}'), {
      a: 2 ** 63,
      b: 9007199254740992,
      c: 9007199254740992,
    })
    // a repeated key keeps its last value, as JSON.parse does, on both paths
    assert.deepEqual(parseDynamicJson('{"a":1,"a":9007199254740993}'), { a: 9007199254740993n })
    assert.deepEqual(parseDynamicJson('{"a":1,"a":2}'), { a: 2 })
    assert.throws(() => parseDynamicJson('[9007199254740993,'), SyntaxError)
  })

  it('writes every digit and JSON.stringify text otherwise', () => {
    assert.equal(
      dynamicJsonText({ a: [INT64_MIN, 1.5, 's', null, true], b: NaN }, nonFinite),
      '{"a":[-9223372036854775808,1.5,"s",null,true],"b":"NaN"}',
    )
    assert.equal(dynamicJsonText({ a: 'x"y', b: -Infinity }, nonFinite), '{"a":"x\\"y","b":"-Infinity"}')
  })

  it('round-trips any value holding longs (property)', () => {
    fc.assert(
      fc.property(dynamic, (v) => {
        const text = dynamicJsonText(v, nonFinite)
        // compared as text: generated bags may have a null prototype, parsed ones never do
        assert.equal(dynamicJsonText(parseDynamicJson(text), nonFinite), text)
        // without bigints the text is exactly JSON.stringify's
        if (!/\d{16}/.test(text)) assert.equal(text, JSON.stringify(v))
      }),
      { numRuns: 300 },
    )
  })
})
