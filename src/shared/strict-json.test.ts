import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { parseStrictJson, StrictJsonError, type StrictJsonErrorCode } from './strict-json.js'

function rejects(text: string | Uint8Array, code: StrictJsonErrorCode, message: RegExp | string, position?: number): void {
  assert.throws(
    () => parseStrictJson(text),
    (err: unknown) => {
      assert.ok(err instanceof StrictJsonError, `expected StrictJsonError, got ${String(err)}`)
      assert.equal(err.code, code, err.message)
      if (typeof message === 'string') assert.equal(err.message, message)
      else assert.match(err.message, message)
      if (position !== undefined) assert.equal(err.position, position, err.message)
      return true
    },
  )
}

describe('parseStrictJson: accepts what JSON.parse accepts, with the same result', () => {
  const cases = [
    'null',
    'true',
    'false',
    '0',
    '-0',
    '1',
    '-1',
    '123456789012345',
    '9007199254740991',
    '-9007199254740991',
    '9007199254740992',
    '1e20',
    '1E+2',
    '1e-7',
    '0.1',
    '0.30000000000000004',
    '-12.5e-3',
    '1.7976931348623157e308',
    '5e-324',
    '2.2250738585072014e-308',
    '100000000000000000000',
    '1.0',
    '1.50',
    '0e10',
    '0.0',
    '""',
    '"abc"',
    '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
    '"\\u0041\\u00e9\\u20AC"',
    '"\\ud83d\\ude00"',
    '"😀é€"',
    '"\u007f\u0080\u2028"',
    '[]',
    '{}',
    '[1,[2,[3]]]',
    ' \t\r\n{ "a" : [ 1 , "x" , null ] , "b" : {} } \n',
    '{"a":{"a":{"a":1}}}',
    '{"toJSON":1,"constructor":2,"hasOwnProperty":3,"__proto__x":4}',
  ]
  for (const text of cases) {
    it(JSON.stringify(text), () => {
      const got = parseStrictJson(text)
      assert.deepEqual(got, JSON.parse(text))
      if (typeof got === 'number') assert.ok(Object.is(got, JSON.parse(text)))
    })
  }

  it('returns plain objects with Object.prototype and real arrays', () => {
    const v = parseStrictJson('{"a":[1]}') as Record<string, unknown>
    assert.equal(Object.getPrototypeOf(v), Object.prototype)
    assert.ok(Array.isArray(v.a))
  })

  it('parses UTF-8 bytes (Buffer and Uint8Array)', () => {
    assert.deepEqual(parseStrictJson(Buffer.from('{"k":"é😀"}')), { k: 'é😀' })
    assert.deepEqual(parseStrictJson(new TextEncoder().encode('[1]')), [1])
  })

  it('property: anything JSON.stringify produces from a JSON value parses back to the same value', () => {
    // Duplicate keys cannot come out of JSON.stringify; __proto__ is rejected on purpose (tested below).
    const arb = fc.jsonValue({ maxDepth: 6 }).filter((v) => !JSON.stringify(v).includes('"__proto__"'))
    fc.assert(
      fc.property(arb, (v) => {
        const text = JSON.stringify(v)
        assert.deepEqual(parseStrictJson(text), JSON.parse(text))
      }),
      { numRuns: 300 },
    )
  })

  it('property: on token soup it never accepts what JSON.parse rejects, and agrees when it accepts', () => {
    const token = fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      ' ',
      '"a"',
      '"a"',
      '"b\\n"',
      '"\\ud800"',
      '"\\u00e9"',
      '1',
      '-0',
      '1.5',
      '1e400',
      '9007199254740993',
      'true',
      'null',
      '"',
      '\\',
      'x',
      '\u00e9',
      '\ud83d',
      '\ude00',
      '\n',
    )
    fc.assert(
      fc.property(fc.array(token, { maxLength: 14 }), (parts) => {
        const text = parts.join('')
        let native: unknown
        let nativeOk = true
        try {
          native = JSON.parse(text)
        } catch {
          nativeOk = false
        }
        let strict: unknown
        try {
          strict = parseStrictJson(text)
        } catch (err) {
          assert.ok(err instanceof StrictJsonError, String(err))
          return
        }
        assert.ok(nativeOk, `accepted ${JSON.stringify(text)}, which JSON.parse rejects`)
        assert.deepEqual(strict, native)
      }),
      { numRuns: 3000 },
    )
  })

  it('property: every finite double written by Number#toString is accepted exactly', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const text = String(d)
        assert.ok(Object.is(parseStrictJson(text), d === 0 ? 0 : d), text)
      }),
      { numRuns: 2000 },
    )
  })
})

describe('parseStrictJson: duplicate keys', () => {
  it('names the key and its position', () => {
    rejects('{"ScopeKey":"a","entityType":"x","ScopeKey":"b"}', 'duplicate-key', 'duplicate key "ScopeKey" at position 33', 33)
  })
  it('at any depth', () => {
    rejects('{"a":[{"b":1,"c":{"d":1,"d":2}}]}', 'duplicate-key', /^duplicate key "d" at position 24$/, 24)
  })
  it('after escapes are decoded ("\\u0061" is "a")', () => {
    rejects('{"a":1,"\\u0061":2}', 'duplicate-key', /duplicate key "a"/, 7)
  })
  it('keys that only look alike are distinct (case, NFC vs NFD)', () => {
    assert.deepEqual(parseStrictJson('{"a":1,"A":2}'), { a: 1, A: 2 })
    assert.deepEqual(Object.keys(parseStrictJson('{"\u00e9":1,"e\u0301":2}') as object).length, 2)
  })
  it('rejects __proto__ (escaped too), which would otherwise become a prototype change downstream', () => {
    rejects('{"__proto__":{"admin":true}}', 'forbidden-key', 'key "__proto__" at position 1 is not allowed', 1)
    rejects('{"\\u005f_proto__":1}', 'forbidden-key', /__proto__/)
  })
  it('does not treat inherited names as duplicates', () => {
    assert.deepEqual(parseStrictJson('{"toString":1,"valueOf":2}'), { toString: 1, valueOf: 2 })
  })
})

describe('parseStrictJson: numbers must be exact', () => {
  it('rejects integers JSON.parse would round (beyond 2^53)', () => {
    rejects(
      '{"id":9007199254740993}',
      'inexact-number',
      /^number 9007199254740993 at position 6 cannot be represented exactly \(it would become 9007199254740992\); integers beyond ±9007199254740991/,
      6,
    )
    rejects('-9007199254740993', 'inexact-number', /would become -9007199254740992/)
    rejects('18446744073709551616', 'inexact-number', /18446744073709552000/)
    rejects('12345678901234567890123', 'inexact-number', /cannot be represented exactly/)
  })
  it('rejects decimals whose shortest round-trip differs in value', () => {
    rejects('0.10000000000000001', 'inexact-number', /it would become 0\.1\); send fewer significant digits/)
    rejects('[1.00000000000000000001]', 'inexact-number', /would become 1\)/, 1)
    rejects('9007199254740993e0', 'inexact-number', /9007199254740992/)
    rejects('4.9e-324', 'inexact-number', /5e-324/)
  })
  it('rejects out-of-range numbers and underflow to zero', () => {
    rejects(
      '1e400',
      'inexact-number',
      'number 1e400 at position 0 is out of range for a JSON number (a 64-bit double); send it as a string',
      0,
    )
    rejects('-1e400', 'inexact-number', /out of range/)
    rejects('1e-400', 'inexact-number', /would become 0/)
    rejects('[2e308]', 'inexact-number', /out of range/, 1)
  })
  it('accepts trailing zeros and exponent forms that keep the value', () => {
    assert.equal(parseStrictJson('1.2300'), 1.23)
    assert.equal(parseStrictJson('12.3e-1'), 1.23)
    assert.equal(parseStrictJson('0.000001'), 0.000001)
    assert.equal(parseStrictJson('100000000000000000000000.000e-3'), 1e20)
    assert.equal(parseStrictJson('0.000030000000000000004e4'), 0.30000000000000004)
  })
  it('rejects malformed numbers', () => {
    rejects('01', 'syntax', /leading zero/, 0)
    rejects('-01', 'syntax', /leading zero/)
    rejects('+1', 'syntax', /unexpected character "\+" at position 0; expected a JSON value/)
    rejects('.5', 'syntax', /expected a JSON value/)
    rejects('1.', 'syntax', /expected a digit after the decimal point/, 2)
    rejects('1.e5', 'syntax', /expected a digit after the decimal point/)
    rejects('1e', 'syntax', /expected a digit in the exponent/)
    rejects('1e+', 'syntax', /expected a digit in the exponent/)
    rejects('-', 'syntax', /end of input at position 1; expected a digit after "-"/)
    rejects('NaN', 'syntax', /expected a JSON value/)
    rejects('Infinity', 'syntax', /expected a JSON value/)
    rejects('0x10', 'trailing-data', /character "x" at position 1 after the end/)
  })
})

describe('parseStrictJson: strings must be valid Unicode and valid JSON', () => {
  it('rejects escaped lone surrogates', () => {
    rejects('"\\ud800"', 'invalid-unicode', 'lone surrogate \\ud800 at position 1; strings must be valid Unicode', 1)
    rejects('"a\\udc00b"', 'invalid-unicode', /lone surrogate \\udc00 at position 2/)
    rejects('"\\ud800\\u0041"', 'invalid-unicode', /lone surrogate/)
    rejects('"\\ud800x"', 'invalid-unicode', /lone surrogate/)
    rejects('{"\\ud800":1}', 'invalid-unicode', /lone surrogate/)
  })
  it('rejects raw lone surrogates in string input', () => {
    rejects('"\ud800"', 'invalid-unicode', 'lone surrogate U+D800 in a string at position 1; strings must be valid Unicode', 1)
    rejects('"x\udfff"', 'invalid-unicode', /U\+DFFF/, 2)
    rejects('"\ude00\ud83d"', 'invalid-unicode', /U\+DE00/)
    rejects('"\\ud83d\ude00"', 'invalid-unicode', /lone surrogate/) // escaped high + raw low
  })
  it('rejects invalid UTF-8 bytes, including encoded surrogates and overlongs', () => {
    rejects(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), 'invalid-unicode', 'invalid UTF-8 at byte 1; the body must be UTF-8 text', 1)
    rejects(Buffer.from([0x5b, 0x22, 0xc0, 0xaf, 0x22, 0x5d]), 'invalid-unicode', /byte 2/, 2)
    rejects(Buffer.from([0x22, 0x61, 0xff, 0x22]), 'invalid-unicode', /byte 2/)
    rejects(Buffer.from([0x22, 0xe2, 0x82]), 'invalid-unicode', /byte 1/)
  })
  it('rejects raw control characters and bad escapes', () => {
    rejects('"a\nb"', 'syntax', 'unescaped control character U+000A in a string at position 2; write it as \\u000a', 2)
    rejects('"\u0000"', 'syntax', /U\+0000/)
    rejects('"\\x41"', 'syntax', /invalid escape "\\\\x" at position 1/)
    rejects('"\\u12G4"', 'syntax', /invalid \\u escape at position 1/)
    rejects('"\\u12"', 'syntax', /invalid \\u escape/)
    rejects('"abc', 'syntax', 'unterminated string starting at position 0', 0)
    rejects("'a'", 'syntax', /character "'" at position 0/)
  })
})

describe('parseStrictJson: structure', () => {
  it('rejects trailing garbage, with its position', () => {
    rejects('{"a":1}x', 'trailing-data', 'unexpected character "x" at position 7 after the end of the JSON value', 7)
    rejects('{"a":1} {"b":2}', 'trailing-data', /position 8/)
    rejects('1 2', 'trailing-data', /position 2/)
    rejects('[1]\u0000', 'trailing-data', /control character U\+0000 at position 3/)
  })
  it('rejects empty input and non-JSON whitespace', () => {
    rejects('', 'syntax', 'unexpected end of input at position 0; expected a JSON value', 0)
    rejects('   ', 'syntax', /end of input at position 3/)
    rejects('\u00a0[]', 'syntax', /character U\+00A0 at position 0/)
    rejects('\ufeff{}', 'syntax', /byte-order mark/, 0)
    rejects(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), 'syntax', /byte-order mark/)
  })
  it('rejects structural mistakes with a message that says what was expected', () => {
    rejects('{"a":1,}', 'syntax', 'unexpected character "}" at position 7; expected a member name in double quotes', 7)
    rejects('[1,]', 'syntax', /position 3; expected a JSON value/)
    rejects('[1 2]', 'syntax', /position 3; expected "," or "\]"/)
    rejects('{"a" 1}', 'syntax', /expected ":" after the member name/)
    rejects('{"a":1 "b":2}', 'syntax', /expected "," or "}"/)
    rejects('{a:1}', 'syntax', /expected a member name in double quotes/)
    rejects('[', 'syntax', /end of input at position 1/)
    rejects('{"a":1', 'syntax', /end of input at position 6/)
    rejects('tru', 'syntax', /unexpected "tru" at position 0; expected a JSON value \(did you mean true\?\)/)
    rejects('nul', 'syntax', /did you mean null/)
    rejects('True', 'syntax', /expected a JSON value/)
    rejects('[1]]', 'trailing-data', /position 3/)
  })
  it('limits nesting depth (default 64), arrays and objects alike', () => {
    assert.doesNotThrow(() => parseStrictJson('['.repeat(64) + ']'.repeat(64)))
    rejects('['.repeat(65) + ']'.repeat(65), 'too-deep', 'nesting deeper than 64 levels at position 64', 64)
    rejects('{"a":'.repeat(65) + '1' + '}'.repeat(65), 'too-deep', /nesting deeper than 64 levels at position 320/)
    assert.throws(() => parseStrictJson('[[[1]]]', { maxDepth: 2 }), /nesting deeper than 2 levels at position 2/)
    // A hostile body cannot blow the stack: the limit trips long before recursion would.
    rejects('['.repeat(100_000), 'too-deep', /nesting deeper/)
  })
  it('sibling containers do not accumulate depth', () => {
    const many = '[' + Array.from({ length: 200 }, () => '[[1]]').join(',') + ']'
    assert.equal((parseStrictJson(many, { maxDepth: 3 }) as unknown[]).length, 200)
  })
  it('state is reset after an error (the next call parses normally)', () => {
    assert.throws(() => parseStrictJson('[[[[{"a":1,"a":2}'))
    assert.deepEqual(parseStrictJson('{"a":[1]}'), { a: [1] })
  })
})
