import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { byteRange } from './byte-range.js'

const ETAG = '"abc"'
const r = (range: string | undefined, size = 100, ifRange?: string) => byteRange(range, ifRange, ETAG, size)

describe('byteRange (RFC 9110 §14)', () => {
  it('serves ranges from, to, open-ended and suffix, clipped to the file', () => {
    assert.deepEqual(r('bytes=0-9'), { kind: 'partial', start: 0, end: 9 })
    assert.deepEqual(r('bytes=90-'), { kind: 'partial', start: 90, end: 99 })
    assert.deepEqual(r('bytes=95-500'), { kind: 'partial', start: 95, end: 99 })
    assert.deepEqual(r('bytes=-10'), { kind: 'partial', start: 90, end: 99 })
    assert.deepEqual(r('bytes=-500'), { kind: 'partial', start: 0, end: 99 })
    assert.deepEqual(r('bytes=99-99'), { kind: 'partial', start: 99, end: 99 })
    assert.deepEqual(r(' bytes = 5 - 6 '), { kind: 'partial', start: 5, end: 6 })
  })

  it('is unsatisfiable past the end, for an empty suffix and for an empty file', () => {
    assert.deepEqual(r('bytes=100-'), { kind: 'unsatisfiable' })
    assert.deepEqual(r('bytes=100-200'), { kind: 'unsatisfiable' })
    assert.deepEqual(r('bytes=-0'), { kind: 'unsatisfiable' })
    assert.deepEqual(r('bytes=0-', 0), { kind: 'unsatisfiable' })
  })

  it('ignores no range, malformed ones, other units and several ranges', () => {
    for (const range of [
      undefined,
      'bytes=',
      'bytes=-',
      'bytes=9-2',
      'bytes=a-b',
      'items=0-9',
      'bytes=0-9,20-29',
      'bytes=1e3-',
      'bytes=99999999999999999999-',
    ]) {
      assert.deepEqual(r(range), { kind: 'full' }, String(range))
    }
  })

  it('honours the range only while If-Range names the current ETag', () => {
    assert.deepEqual(r('bytes=0-9', 100, ETAG), { kind: 'partial', start: 0, end: 9 })
    assert.deepEqual(r('bytes=0-9', 100, '"other"'), { kind: 'full' })
    assert.deepEqual(r('bytes=0-9', 100, 'Wed, 21 Oct 2015 07:28:00 GMT'), { kind: 'full' })
  })
})
