import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type Arg, l, s, scalarCaller } from '../../../test/support/kql-function-calls.js'
import { KqlError } from '../kql-error.js'
import { parseDateTime } from '../values.js'
import { crc32, xxhash64 } from './hash-functions.js'

const { bound, call } = scalarCaller()
const dt = (text: string): Arg => ['datetime', parseDateTime(text)]

describe('xxhash64 and crc32 known answers', () => {
  it('matches the reference vectors', () => {
    assert.equal(xxhash64(new Uint8Array(0)).toString(16), 'ef46db3751d8e999')
    assert.equal(xxhash64(Buffer.from('a')).toString(16), 'd24ec4f1a98c6e5b')
    assert.equal(xxhash64(Buffer.from('abc')).toString(16), '44bc2cf5ad770999')
    assert.equal(xxhash64(Buffer.from('Nobody inspects the spammish repetition')).toString(16), 'fbcea83c8a378bf1')
    assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926)
    assert.equal(crc32(new Uint8Array(0)), 0)
  })
})

describe('hash, hash_xxhash64', () => {
  it('follows the documented examples', () => {
    assert.deepEqual(bound('hash', s('World')), { type: 'long', value: 1846988464401551951n })
    assert.equal(call('hash', s('World'), l(100)), 51)
    assert.equal(call('hash', dt('2015-01-01')), 1380966698541616202n)
    assert.equal(call('hash_xxhash64', s('World')), 1846988464401551951n)
    assert.equal(call('hash_xxhash64', s('World'), l(100)), 51)
    assert.equal(call('hash_xxhash64', dt('2015-01-01')), 1380966698541616202n)
    assert.equal(call('hash', s('Hello')), 753694413698530628n)
  })
  it('returns null for null input and rejects dynamic', () => {
    assert.equal(call('hash', l(null)), null)
    assert.throws(() => call('hash', ['dynamic', 1]), KqlError)
  })
})

describe('hash_md5, hash_sha1, hash_sha256', () => {
  it('follow the documented examples', () => {
    assert.equal(call('hash_md5', s('World')), 'f5a7924e621e84c9280a9a27e1bcb7f6')
    assert.equal(call('hash_md5', dt('2020-01-01')), '786c530672d1f8db31fee25ea8a9390b')
    assert.equal(call('hash_sha1', s('World')), '70c07ec18ef89c5309bbb0937f3a6342411e1fdd')
    assert.equal(call('hash_sha1', dt('2020-01-01')), 'e903e533f4d636b4fc0dcf3cf81e7b7f330de776')
    assert.equal(call('hash_sha256', s('World')), '78ae647dc5544d227130a0682a51e30bc7777fbb6d8a8f17007463a3ecd1d524')
    assert.equal(call('hash_sha256', dt('2020-01-01')), 'ba666752dc1a20eb750b0eb64e780cc4c968bc9fb8813461c1d7e750f302d71d')
    assert.equal(call('hash_sha256', s('TEXAS')), '9087f20f23f91b5a77e8406846117049029e6798ebbd0d38aea68da73a00ca37')
    assert.equal(call('hash_md5', s('IOWA')), '6d4a7c02942f093576149db764d4e2d2')
  })
})
