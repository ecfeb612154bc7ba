import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { formatDateTime, parseDateTime } from './values.js'

const iso = (text: string): string | undefined => {
  const t = parseDateTime(text)
  return t === null ? undefined : formatDateTime(t)
}

describe('parseDateTime', () => {
  it('reads ISO 8601 with and without T, zones and offsets', () => {
    assert.equal(iso('2015-12-31 23:59:59.9'), '2015-12-31T23:59:59.9Z')
    assert.equal(iso('2014-05-25T08:20:03.123456Z'), '2014-05-25T08:20:03.123456Z')
    assert.equal(iso('2014-11-08 15:55:55+01:00'), '2014-11-08T14:55:55Z')
    assert.equal(iso('2014/11/08'), '2014-11-08T00:00:00Z')
  })
  it('reads the month-first forms Kusto accepts (12-02-2022 is December 2nd)', () => {
    assert.equal(iso('12-02-2022'), '2022-12-02T00:00:00Z')
    assert.equal(iso('02/17/2016 08:40:01'), '2016-02-17T08:40:01Z')
    assert.equal(iso('02/17/2016 08:40:01 PM'), '2016-02-17T20:40:01Z')
    assert.equal(iso('2/7/2016'), '2016-02-07T00:00:00Z')
  })
  it('reads RFC 822/850/1123 forms', () => {
    assert.equal(iso('Sat, 8 Nov 2014 15:05:02 GMT'), '2014-11-08T15:05:02Z')
    assert.equal(iso('Saturday, 08-Nov-14 15:05:02 GMT'), '2014-11-08T15:05:02Z')
  })
  it('reads the canonical form (its regex-free path) exactly as its patterns do', () => {
    // A leading space keeps a text off the canonical path: trimmed, it meets the patterns.
    const p = (n: number) => String(n).padStart(2, '0')
    let n = 0
    for (const year of [1, 1969, 1970, 2000, 2024, 2026, 9999, 0]) {
      for (const [month, day] of [
        [1, 1],
        [2, 28],
        [2, 29],
        [2, 30],
        [12, 31],
        [13, 1],
        [4, 31],
        [0, 10],
      ] as const) {
        for (const time of ['00:00:00', '23:59:59', '12:34:56', '24:00:00', '12:60:00', '12:00:60']) {
          for (const fraction of ['', '.1', '.1234567', '.12345678', '.0000001', '.']) {
            for (const zone of ['Z', 'z', '', '+01:00', '-05:30', '+99:99', '+0100', '+01', ' Z']) {
              const text = `${String(year).padStart(4, '0')}-${p(month)}-${p(day)}T${time}${fraction}${zone}`
              assert.equal(parseDateTime(text), parseDateTime(` ${text}`), text)
              n++
            }
          }
        }
      }
    }
    assert.ok(n > 10_000)
    assert.equal(iso('2026-01-29T12:34:56.1234567-01:30'), '2026-01-29T14:04:56.1234567Z')
  })
  it('refuses what is not a date', () => {
    for (const bad of ['', 'not a date', '13-40-2022', '2022-02-30', '02/17/16']) assert.equal(parseDateTime(bad), null, bad)
  })
})
