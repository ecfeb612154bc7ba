import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { CanonicalJsonError, canonicalJson, canonicalJsonBytes, isCanonicalJson } from './canonical-json.js'
import { parseStrictJson } from './strict-json.js'

/**
 * The vectors use JSON.parse on purpose: two of them contain 333333333.33333329, which the strict
 * body parser refuses (its shortest round-trip is 333333333.3333333, a different value; tested at
 * the end of this block). Canonicalisation itself is about the parsed double.
 */
const jcs = (text: string): string => canonicalJson(JSON.parse(text))

describe('canonicalJson: RFC 8785 reference vectors (cyberphone/json-canonicalization testdata)', () => {
  const vectors: Record<string, [input: string, output: string]> = {
    arrays: ['[\n  56,\n  {\n    "d": true,\n    "10": null,\n    "1": [ ]\n  }\n]', '[56,{"1":[],"10":null,"d":true}]'],
    french: [
      '{\n  "peach": "This sorting order",\n  "péché": "is wrong according to French",\n  "pêche": "but canonicalization MUST",\n  "sin":   "ingnore locale"\n}\n',
      '{"peach":"This sorting order","péché":"is wrong according to French","pêche":"but canonicalization MUST","sin":"ingnore locale"}',
    ],
    structures: [
      '{\n  "1": {"f": {"f": "hi","F": 5} ,"\\n": 56.0},\n  "10": { },\n  "": "empty",\n  "a": { },\n  "111": [ { } ],\n  "A": { }\n}',
      '{"":"empty","1":{"\\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{}],"A":{},"a":{}}',
    ],
    unicode: ['{\n  "Unnormalized Unicode":"\\u1e0d\\u0307"\n}\n', '{"Unnormalized Unicode":"\u1e0d\u0307"}'],
    values: [
      '{\n  "numbers": [1E30, 4.50, 333333333.33333329, 2e-3, 0.000000000000000000000000001],\n  "escaping": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}',
      '{"escaping":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/","literals":[null,true,false],"numbers":[1e+30,4.5,333333333.3333333,0.002,1e-27]}',
    ],
    weird: [
      '{\n  "\\u20ac": "Euro Sign",\n  "1": "One",\n  "\\u0080": "Control\\u007f",\n  "\\ud83d\\ude02": "Smiley",\n  "\\u00f6": "Latin Small Letter O With Diaeresis",\n  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n  "</script>": "Browser Challenge"\n}\n',
      '{"1":"One","</script>":"Browser Challenge","\u0080":"Control\u007f","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude02":"Smiley","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    ],
  }
  for (const [name, [input, output]] of Object.entries(vectors)) {
    it(name, () => {
      assert.equal(jcs(input), output)
      // Canonical text is a fixed point.
      assert.equal(jcs(output), output)
    })
  }

  it('RFC 8785 §3.2.4 example, byte for byte', () => {
    const input =
      '{\n  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}'
    const expected =
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    assert.equal(jcs(input), expected)
    // RFC 8785 §3.2.4 lists the UTF-8 bytes of the result.
    const rfcHex =
      '7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72 75 65 2c 66 61 6c 73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a ' +
      '5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31 65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37 ' +
      '5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30 30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d'
    assert.equal(canonicalJsonBytes(JSON.parse(input)).toString('hex'), rfcHex.replace(/ /g, ''))
  })

  it("the strict body parser refuses the vectors' inexact 333333333.33333329 rather than rounding it", () => {
    assert.throws(() => parseStrictJson('[333333333.33333329]'), /would become 333333333\.3333333/)
    assert.equal(canonicalJson(parseStrictJson('[333333333.3333333, 1E30, 4.50, 2e-3]')), '[333333333.3333333,1e+30,4.5,0.002]')
  })

  it('RFC 8785 §3.2.3 sorting example (UTF-16 code units, not code points or locale)', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    }
    // Compare the text: JS objects list integer-like keys ("1") first, so re-parsing would hide the order.
    assert.equal(
      canonicalJson(input),
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    )
  })
})

describe('canonicalJson: numbers (RFC 8785 Appendix B samples)', () => {
  const samples: [hexBits: string, text: string][] = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ]
  for (const [bits, text] of samples) {
    it(`${bits} → ${text}`, () => {
      const n = Buffer.from(bits, 'hex').readDoubleBE(0)
      assert.equal(canonicalJson(n), text)
      assert.equal(canonicalJson([n]), `[${text}]`)
    })
  }
  it('refuses NaN and the infinities (7fffffffffffffff, 7ff0000000000000)', () => {
    for (const bad of [Buffer.from('7fffffffffffffff', 'hex').readDoubleBE(0), Infinity, -Infinity]) {
      assert.throws(
        () => canonicalJson({ n: bad }),
        (e: unknown) => e instanceof CanonicalJsonError && /is not a JSON number at \/n$/.test(e.message),
      )
    }
  })
})

describe('canonicalJson: strings', () => {
  it('escapes minimally: controls as \\u00xx lowercase, the five short forms, nothing else', () => {
    const all = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).join('') + '"\\/\u007f\u2028\u2029é😀'
    assert.equal(
      canonicalJson(all),
      '"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f' +
        '\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f' +
        '\\"\\\\/\u007f\u2028\u2029é😀"',
    )
  })
  it('refuses lone surrogates in values and in keys, naming where', () => {
    assert.throws(() => canonicalJson({ a: ['x', '\ud800'] }), {
      name: 'CanonicalJsonError',
      message: 'string contains a lone surrogate (JCS needs valid Unicode) at /a/1',
    })
    assert.throws(() => canonicalJson({ ['k\udc00']: 1 }), /lone surrogate/)
  })
  it('keeps NFC and NFD distinct (no normalisation)', () => {
    assert.notEqual(canonicalJson('\u00e9'), canonicalJson('e\u0301'))
  })
})

describe('canonicalJson: only plain data', () => {
  const bad: [string, unknown, RegExp][] = [
    ['undefined member', { a: undefined }, /undefined is not a JSON value at \/a/],
    ['top-level undefined', undefined, /^undefined is not a JSON value$/],
    ['function', { f: () => 1 }, /a function is not a JSON value at \/f/],
    ['symbol', [Symbol('s')], /a symbol is not a JSON value at \/0/],
    ['bigint', { n: 1n }, /a bigint is not a JSON value at \/n/],
    ['Date', { d: new Date(0) }, /Date is not plain JSON data at \/d/],
    ['Map', new Map(), /Map is not plain JSON data/],
    [
      'class instance',
      {
        x: new (class Point {
          x = 1
        })(),
      },
      /Point is not plain JSON data at \/x/,
    ],
    [
      'array hole',
      (() => {
        const holey: unknown[] = [1]
        holey[2] = 3 // index 1 is a hole, not an undefined element
        return holey
      })(),
      /undefined is not a JSON value at \/1/,
    ],
    ['boxed string', { s: new String('x') }, /String is not plain JSON data/],
    ['symbol key', { [Symbol('k')]: 1 }, /symbol-keyed/],
  ]
  for (const [name, value, message] of bad) {
    it(`refuses ${name}`, () => {
      assert.throws(
        () => canonicalJson(value),
        (e: unknown) => e instanceof CanonicalJsonError && message.test(e.message),
      )
    })
  }
  it('refuses cycles, but not shared (acyclic) references', () => {
    const a: Record<string, unknown> = { x: 1 }
    a.self = { back: a }
    assert.throws(() => canonicalJson(a), /cycle: the value contains itself at \/self\/back/)
    const shared = { v: 1 }
    assert.equal(canonicalJson({ b: shared, a: shared }), '{"a":{"v":1},"b":{"v":1}}')
  })
  it('never calls toJSON and sorts a member named "toJSON" like any other', () => {
    const withMethod = { toJSON: () => 'nope', a: 1 }
    assert.throws(() => canonicalJson(withMethod), /function/)
    assert.equal(canonicalJson({ z: 1, toJSON: 'x', a: 2 }), '{"a":2,"toJSON":"x","z":1}')
    assert.equal(canonicalJson({ a: 2, toJSON: 'x', z: 1 }), '{"a":2,"toJSON":"x","z":1}')
  })
  it('accepts null-prototype objects', () => {
    const o = Object.create(null) as Record<string, unknown>
    o.b = 1
    o.a = [true, null]
    assert.equal(canonicalJson(o), '{"a":[true,null],"b":1}')
  })
})

describe('canonicalJson: properties', () => {
  it('is independent of member order, and a fixed point of parse → canonicalise', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (v) => {
        const once = canonicalJson(v)
        assert.equal(canonicalJson(JSON.parse(once)), once)
        assert.deepEqual(JSON.parse(once), JSON.parse(JSON.stringify(v)))
        const reversed = JSON.parse(JSON.stringify(v), (_k, x: unknown) =>
          x !== null && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).reverse()) : x,
        )
        assert.equal(canonicalJson(reversed), once)
      }),
      { numRuns: 300 },
    )
  })
})

describe("isCanonicalJson (the verifier's one-pass check of stored text)", () => {
  /** The definition it must agree with. */
  const reference = (t: string): boolean => {
    try {
      return canonicalJson(JSON.parse(t)) === t
    } catch {
      return false
    }
  }

  it('accepts the canonical outputs of the reference vectors', () => {
    for (const t of [
      '{"":"empty","1":{"\\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{}],"A":{},"a":{}}',
      '[56,{"1":[],"10":null,"d":true}]',
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
      '0',
      '-1',
      '1e+21',
      '5e-324',
      '"\\u001f"',
      '"😀"',
      '[]',
      '{}',
    ]) {
      assert.equal(isCanonicalJson(t), true, t)
      assert.equal(reference(t), true, t)
    }
  })

  const rejected: [string, string][] = [
    ['whitespace', '{"a": 1}'],
    ['unsorted keys', '{"b":1,"a":2}'],
    ['duplicate keys', '{"a":1,"a":1}'],
    ['integer-looking keys in JS object order', '{"9":2,"10":1}'],
    ['-0', '-0'],
    ['leading zero', '01'],
    ['trailing zero', '1.50'],
    ['uppercase exponent', '1E+30'],
    ['exponent without sign', '1e30'],
    ['inexact number', '9007199254740993'],
    ['out of range', '1e400'],
    ['escaped slash', '"\\/"'],
    ['escaped printable', '"\\u0041"'],
    ['uppercase hex escape', '"\\u001F"'],
    ['long form of \\n', '"\\u000a"'],
    ['escaped lone surrogate', '"\\ud800"'],
    ['raw lone surrogate', '"\ud800"'],
    ['raw control character', '"a\u0001"'],
    ['trailing garbage', '{}x'],
    ['truncated', '{"a":'],
    ['single quotes', "'a'"],
    ['empty', ''],
    ['NaN', 'NaN'],
  ]
  for (const [name, text] of rejected) {
    it(`rejects ${name}`, () => {
      assert.equal(isCanonicalJson(text), false, text)
      assert.equal(reference(text), false, text)
    })
  }

  it('property: agrees with canonicalJson(JSON.parse(t)) === t on canonical texts and their mutations', () => {
    const mutate = (t: string, at: number, kind: number): string => {
      const i = t.length === 0 ? 0 : at % t.length
      switch (kind % 4) {
        case 0:
          return t.slice(0, i) + ' ' + t.slice(i)
        case 1:
          return t.slice(0, i) + t.slice(i + 1)
        case 2:
          return t.slice(0, i) + t.slice(i, i + 1).toUpperCase() + t.slice(i + 1)
        default:
          return t.slice(0, i) + '0' + t.slice(i)
      }
    }
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.nat(), fc.nat(), (v, at, kind) => {
        const t = canonicalJson(v)
        assert.equal(isCanonicalJson(t), true, t)
        const m = mutate(t, at, kind)
        assert.equal(isCanonicalJson(m), reference(m), m)
      }),
      { numRuns: 1500 },
    )
  })

  it('does not blow the stack on deep nesting', () => {
    assert.equal(isCanonicalJson('['.repeat(100_000) + ']'.repeat(100_000)), false)
    assert.equal(isCanonicalJson('['.repeat(500) + ']'.repeat(500)), true)
  })
})
