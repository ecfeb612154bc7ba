import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { formatDateTime } from '../../kql/values.js'
import { pageSlice, parseIsoTime } from './export-request.js'

const ticksOf = (iso: string) => BigInt(Date.parse(iso)) * 10_000n

describe('parseIsoTime', () => {
  it('reads UTC, offsets, date-only and fractions to the tick', () => {
    assert.equal(parseIsoTime('2026-01-01T00:00:00Z'), ticksOf('2026-01-01T00:00:00Z'))
    assert.equal(parseIsoTime('2026-01-01'), ticksOf('2026-01-01T00:00:00Z'))
    assert.equal(parseIsoTime('2026-01-01T02:00:00+02:00'), ticksOf('2026-01-01T00:00:00Z'))
    assert.equal(parseIsoTime('2025-12-31T19:30:00-0430'), ticksOf('2026-01-01T00:00:00Z'))
    assert.equal(parseIsoTime('2026-01-01T05:00+05'), ticksOf('2026-01-01T00:00:00Z'))
    assert.equal(parseIsoTime('2026-01-01T00:00:00'), ticksOf('2026-01-01T00:00:00Z'), 'no zone means UTC')
    assert.equal(parseIsoTime('2026-01-01T00:00:00.0000001Z'), ticksOf('2026-01-01T00:00:00Z') + 1n)
    assert.equal(parseIsoTime('2026-01-01t00:00:00.5z'), ticksOf('2026-01-01T00:00:00.500Z'))
  })

  it('refuses what is not an ISO 8601 time, impossible dates and excess precision, with a reason', () => {
    for (const text of [
      '',
      'yesterday',
      '2026-1-1',
      '2026-01-01T00',
      '1767225600',
      '2026-01-01T00:00:00 Z',
      ' 2026-01-01',
      '2026-01-01T00:00:00+2',
    ]) {
      assert.equal(typeof parseIsoTime(text), 'string', text)
    }
    assert.match(String(parseIsoTime('2026-02-30')), /calendar/)
    assert.match(String(parseIsoTime('2026-01-01T24:00:00Z')), /calendar/)
    assert.match(String(parseIsoTime('2026-01-01T00:00:60Z')), /calendar/)
    assert.match(String(parseIsoTime('2026-01-01T00:00:00.12345678Z')), /7 fraction digits/)
    assert.match(String(parseIsoTime('2026-01-01T00:00:00+24:00')), /offset/)
  })

  it('round-trips every datetime the server prints (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -62135596800n * 10_000_000n, max: 253402300799n * 10_000_000n }), (ticks) => {
        assert.equal(parseIsoTime(formatDateTime(ticks)), ticks)
      }),
    )
  })
})

describe('pageSlice', () => {
  it('slices the capped set into pages; a page past the end is empty', () => {
    assert.deepEqual(pageSlice(25_000, 1, 5000), { offset: 0, rowCount: 5000, pageCount: 5 })
    assert.deepEqual(pageSlice(25_000, 5, 5000), { offset: 20_000, rowCount: 5000, pageCount: 5 })
    assert.deepEqual(pageSlice(25_000, 6, 5000), { offset: 25_000, rowCount: 0, pageCount: 5 })
    assert.deepEqual(pageSlice(2501, 3, 1000), { offset: 2000, rowCount: 501, pageCount: 3 })
    assert.deepEqual(pageSlice(0, 1, 1000), { offset: 0, rowCount: 0, pageCount: 0 })
  })

  it('pages cover the set exactly once (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 25_000 }), fc.integer({ min: 1, max: 5000 }), (total, size) => {
        const { pageCount } = pageSlice(total, 1, size)
        let next = 0
        for (let page = 1; page <= pageCount; page++) {
          const slice = pageSlice(total, page, size)
          assert.equal(slice.offset, next)
          assert.ok(slice.rowCount > 0 && slice.rowCount <= size)
          next += slice.rowCount
        }
        assert.equal(next, total)
        assert.equal(pageSlice(total, pageCount + 1, size).rowCount, 0)
      }),
    )
  })
})
