import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compositeKey, dynamicEquals, has, hasCs, hasPrefix, hasSuffix, hasTermRegex, keyOf, likePattern } from './value-ops.js'

describe('string matching (documentation: string operators)', () => {
  it('has matches whole terms case-insensitively', () => {
    assert.equal(has('North America', 'america'), true)
    assert.equal(has('North America', 'amer'), false)
    assert.equal(has('NorthAmerica', 'america'), false)
    assert.equal(has('the dev-7 box', 'dev-7'), true)
    assert.equal(has('anything', ''), true)
    assert.equal(hasCs('North America', 'America'), true)
    assert.equal(hasCs('North America', 'america'), false)
  })

  it('hasprefix/hassuffix look at term starts and ends', () => {
    assert.equal(hasPrefix('North America', 'ame', false), true)
    assert.equal(hasPrefix('North America', 'mer', false), false)
    assert.equal(hasPrefix('North America', 'Ame', true), true)
    assert.equal(hasPrefix('North America', 'CA', true), false)
    assert.equal(hasSuffix('North America', 'ica', false), true)
    assert.equal(hasSuffix('North America', 'americ', false), false)
    assert.equal(hasSuffix('North America', 'icA', true), false)
  })

  it('the regex form of has agrees with the scanning form', () => {
    const texts = ['North America', 'NorthAmerica', 'x.dev', 'Ünïcode Straße', 'a-b', '', 'abc_def', '12abc']
    const terms = ['america', 'America', 'amer', 'dev', '-b', 'straße', 'abc', '_def', 'c']
    for (const t of texts) {
      for (const n of terms) {
        assert.equal(hasTermRegex(n, false)!.test(t), has(t, n), `${t} has ${n}`)
        assert.equal(hasTermRegex(n, true)!.test(t), hasCs(t, n), `${t} has_cs ${n}`)
      }
    }
  })

  it('like patterns use % and _', () => {
    assert.equal(likePattern('a%c', true).test('abbbc'), true)
    assert.equal(likePattern('a_c', true).test('abc'), true)
    assert.equal(likePattern('a_c', true).test('abbc'), false)
    assert.equal(likePattern('A%', false).test('abc'), true)
  })
})

describe('keys and equality', () => {
  it('keeps values of different types apart and equal values together', () => {
    assert.notEqual(keyOf('1'), keyOf(1))
    assert.equal(keyOf(-0), keyOf(0))
    assert.equal(keyOf({ a: [1, 2] }), keyOf({ a: [1, 2] }))
    assert.notEqual(compositeKey(['a|b', 'c']), compositeKey(['a', 'b|c']))
    assert.notEqual(compositeKey([null, 'x']), compositeKey(['', 'x']))
    assert.equal(compositeKey([1, 2n, true]), compositeKey([1, 2n, true]))
  })

  it('compares dynamic values deeply', () => {
    assert.equal(dynamicEquals({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), true)
    assert.equal(dynamicEquals([1, 2], [2, 1]), false)
    assert.equal(dynamicEquals({ a: 1 }, { a: 1, b: 2 }), false)
  })
})
