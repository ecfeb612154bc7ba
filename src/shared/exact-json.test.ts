import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parse } from 'lossless-json'
import { stringifyExact } from './exact-json.js'

test('bigints are written as JSON numbers with every digit; everything else as JSON.stringify', () => {
  assert.equal(
    stringifyExact({ a: 9007199254740993n, b: [-9223372036854775808n, 1, 'x'] }),
    '{"a":9007199254740993,"b":[-9223372036854775808,1,"x"]}',
  )
  const plain = { s: 'a\u0000b', n: 1.5, nested: [{ t: true }] }
  assert.equal(stringifyExact(plain), JSON.stringify(plain))
  assert.equal(stringifyExact({ a: 1n }, 2), '{\n  "a": 1\n}')
})

test('a string that looks like the marker stays a string', () => {
  const tricky = { s: '\u0000deadbeefdeadbeef:12\u0000', big: 2n ** 60n }
  const text = stringifyExact(tricky)
  const back = parse(text, undefined, (v) => BigInt(v)) as { s: string; big: bigint }
  assert.equal(back.s, tricky.s)
  assert.equal(back.big, 2n ** 60n)
})
