import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KqlError } from '../kql-error.js'
import type { KqlType, KqlValue } from '../types.js'
import { formatDateTime, formatTimespan, parseDateTime, parseTimespan } from '../values.js'
import { lookupScalar } from './registry.js'

const NOW = parseDateTime('2024-05-01T12:00:00Z')!
const ctx = { now: NOW, random: () => 0.5 }

/** Binds `name` with constant arguments of the given types and evaluates it once. */
function call(name: string, types: readonly KqlType[], values: readonly KqlValue[], constant = true): KqlValue {
  const fn = lookupScalar(name)
  assert.ok(fn, `${name} is registered`)
  const infos = types.map((type, i) => ({ type, text: `a${i}`, ...(constant ? { constant: { value: values[i] ?? null } } : {}) }))
  return fn.bind(infos).evaluate(values, ctx)
}

const dt = (s: string): bigint => parseDateTime(s)!
const ts = (s: string): bigint => parseTimespan(s)!
const iso = (v: KqlValue): string | null => (typeof v === 'bigint' ? formatDateTime(v) : null)
const span = (v: KqlValue): string | null => (typeof v === 'bigint' ? formatTimespan(v) : null)

function bindFails(name: string, types: readonly KqlType[]): void {
  const infos = types.map((type, i) => ({ type, text: `a${i}` }))
  assert.throws(
    () => lookupScalar(name)!.bind(infos),
    (e: unknown) => e instanceof KqlError && e.kind === 'semantic' && e.message.includes(name),
  )
}

describe('clock', () => {
  it('now() and ago() read the query clock', () => {
    assert.equal(iso(call('now', [], [])), '2024-05-01T12:00:00Z')
    assert.equal(iso(call('now', ['timespan'], [ts('-1d')])), '2024-04-30T12:00:00Z')
    assert.equal(iso(call('ago', ['timespan'], [ts('1h')])), '2024-05-01T11:00:00Z')
    assert.equal(lookupScalar('now')!.deterministic, false)
  })
})

describe('conversions', () => {
  it('todatetime parses text, keeps datetimes and gives null otherwise', () => {
    assert.equal(iso(call('todatetime', ['string'], ['2015-12-31 23:59:59.9'])), '2015-12-31T23:59:59.9Z')
    assert.equal(iso(call('todatetime', ['string'], ['12-02-2022'])), '2022-12-02T00:00:00Z')
    assert.equal(iso(call('todatetime', ['string'], ['02/17/2016 08:40:01'])), '2016-02-17T08:40:01Z')
    assert.equal(call('todatetime', ['string'], ['not a date']), null)
    assert.equal(iso(call('todatetime', ['dynamic'], ['2020-01-01T00:00:00Z'])), '2020-01-01T00:00:00Z')
    assert.equal(call('todatetime', ['datetime'], [null]), null)
  })
  it('totimespan parses text', () => {
    assert.equal(call('totimespan', ['string'], ['0.00:01:00']), ts('1m'))
    assert.equal(span(call('totimespan', ['string'], ['1.12:30:55.123'])), '1.12:30:55.1230000')
    assert.equal(call('totimespan', ['string'], ['nonsense']), null)
    assert.equal(call('totime', ['string'], ['00:00:10']), ts('10s'))
  })
  it('unixtime_*_todatetime', () => {
    assert.equal(iso(call('unixtime_seconds_todatetime', ['long'], [1546300800])), '2019-01-01T00:00:00Z')
    assert.equal(iso(call('unixtime_milliseconds_todatetime', ['long'], [1546300800123])), '2019-01-01T00:00:00.123Z')
    assert.equal(iso(call('unixtime_microseconds_todatetime', ['long'], [1546300800123456])), '2019-01-01T00:00:00.123456Z')
    assert.equal(iso(call('unixtime_nanoseconds_todatetime', ['long'], [123456700])), '1970-01-01T00:00:00.1234567Z')
    assert.equal(iso(call('unixtime_seconds_todatetime', ['real'], [-1.5])), '1969-12-31T23:59:58.5Z')
    assert.equal(call('unixtime_seconds_todatetime', ['long'], [null]), null)
    bindFails('unixtime_seconds_todatetime', ['string'])
  })
})

describe('calendar parts', () => {
  it('getyear, getmonth, dayofmonth, dayofyear, hourofday', () => {
    assert.equal(call('getyear', ['datetime'], [dt('2015-10-12')]), 2015)
    assert.equal(call('getmonth', ['datetime'], [dt('2015-10-12')]), 10)
    assert.equal(call('monthofyear', ['datetime'], [dt('2015-10-12')]), 10)
    assert.equal(call('dayofmonth', ['datetime'], [dt('2015-12-14 11:15')]), 14)
    assert.equal(call('dayofyear', ['datetime'], [dt('2015-12-14')]), 348)
    assert.equal(call('hourofday', ['datetime'], [dt('2015-12-14 18:54')]), 18)
    assert.equal(call('getyear', ['datetime'], [null]), null)
    bindFails('getyear', ['string'])
    bindFails('getyear', [])
  })
  it('dayofweek is the days since Sunday as a timespan', () => {
    assert.equal(span(call('dayofweek', ['datetime'], [dt('1947-11-30 10:00:05')])), '00:00:00')
    assert.equal(span(call('dayofweek', ['datetime'], [dt('1970-05-11')])), '1.00:00:00')
    assert.equal(lookupScalar('dayofweek')!.bind([{ type: 'datetime', text: 'x' }]).type, 'timespan')
  })
  it('week_of_year is ISO 8601', () => {
    assert.equal(call('week_of_year', ['datetime'], [dt('2020-12-31')]), 53)
    assert.equal(call('week_of_year', ['datetime'], [dt('2020-06-15')]), 25)
    assert.equal(call('week_of_year', ['datetime'], [dt('1970-01-01')]), 1)
    assert.equal(call('week_of_year', ['datetime'], [dt('2000-01-01')]), 52)
    assert.equal(call('weekofyear', ['datetime'], [dt('2020-06-15')]), 25)
  })
  it('datetime_part (documentation example)', () => {
    const t = dt('2017-10-30 01:02:03.7654321')
    const parts: Record<string, number> = {
      year: 2017,
      quarter: 4,
      month: 10,
      week_of_year: 44,
      day: 30,
      dayOfYear: 303,
      hour: 1,
      minute: 2,
      second: 3,
      millisecond: 765,
      microsecond: 765432,
      nanosecond: 765432100,
    }
    for (const [p, expected] of Object.entries(parts)) assert.equal(call('datetime_part', ['string', 'datetime'], [p, t]), expected, p)
    assert.throws(() => call('datetime_part', ['string', 'datetime'], ['fortnight', t]), KqlError)
  })
})

describe('calendar arithmetic', () => {
  it('datetime_add (documentation examples)', () => {
    const base = dt('2017-01-01')
    const expected: Record<string, string> = {
      year: '2018-01-01T00:00:00Z',
      quarter: '2017-04-01T00:00:00Z',
      month: '2017-02-01T00:00:00Z',
      week: '2017-01-08T00:00:00Z',
      day: '2017-01-02T00:00:00Z',
      hour: '2017-01-01T01:00:00Z',
      minute: '2017-01-01T00:01:00Z',
      second: '2017-01-01T00:00:01Z',
    }
    for (const [p, e] of Object.entries(expected))
      assert.equal(iso(call('datetime_add', ['string', 'int', 'datetime'], [p, 1, base])), e, p)
    assert.equal(iso(call('datetime_add', ['string', 'int', 'datetime'], ['year', -5, base])), '2012-01-01T00:00:00Z')
    assert.equal(iso(call('datetime_add', ['string', 'int', 'datetime'], ['quarter', 12, base])), '2020-01-01T00:00:00Z')
    assert.equal(iso(call('datetime_add', ['string', 'int', 'datetime'], ['month', -15, base])), '2015-10-01T00:00:00Z')
    assert.equal(iso(call('datetime_add', ['string', 'int', 'datetime'], ['week', 100, base])), '2018-12-02T00:00:00Z')
    assert.equal(iso(call('datetime_add', ['string', 'int', 'datetime'], ['month', 1, dt('2024-01-31')])), '2024-02-29T00:00:00Z')
    assert.equal(iso(call('datetime_add', ['string', 'long', 'datetime'], ['nanosecond', 700, base])), '2017-01-01T00:00:00.0000007Z')
  })
  it('datetime_diff counts period boundaries (documentation example)', () => {
    const cases: [string, string, string, number][] = [
      ['year', '2017-01-01', '2000-12-31', 17],
      ['quarter', '2017-07-01', '2017-03-30', 2],
      ['month', '2017-01-01', '2015-12-30', 13],
      ['week', '2017-10-29 00:00', '2017-09-30 23:59', 5],
      ['day', '2017-10-29 00:00', '2017-09-30 23:59', 29],
      ['hour', '2017-10-31 01:00', '2017-10-30 23:59', 2],
      ['minute', '2017-10-30 23:05:01', '2017-10-30 23:00:59', 5],
      ['second', '2017-10-30 23:00:10.100', '2017-10-30 23:00:00.900', 10],
      ['millisecond', '2017-10-30 23:00:00.200100', '2017-10-30 23:00:00.100900', 100],
      ['microsecond', '2017-10-30 23:00:00.1009001', '2017-10-30 23:00:00.1008009', 100],
      ['nanosecond', '2017-10-30 23:00:00.0000000', '2017-10-30 23:00:00.0000007', -700],
    ]
    for (const [p, a, b, e] of cases) assert.equal(call('datetime_diff', ['string', 'datetime', 'datetime'], [p, dt(a), dt(b)]), e, p)
    assert.equal(
      lookupScalar('datetime_diff')!.bind([
        { type: 'string', text: "'day'" },
        { type: 'datetime', text: 'a' },
        { type: 'datetime', text: 'b' },
      ]).type,
      'long',
    )
  })
  it('make_datetime and make_timespan', () => {
    assert.equal(iso(call('make_datetime', ['long', 'long', 'long'], [2017, 10, 1])), '2017-10-01T00:00:00Z')
    assert.equal(iso(call('make_datetime', ['long', 'long', 'long', 'long', 'long'], [2017, 10, 1, 12, 10])), '2017-10-01T12:10:00Z')
    assert.equal(
      iso(call('make_datetime', ['long', 'long', 'long', 'long', 'long', 'real'], [2017, 10, 1, 12, 11, 0.1234567])),
      '2017-10-01T12:11:00.1234567Z',
    )
    assert.equal(call('make_datetime', ['long', 'long', 'long'], [2017, 13, 1]), null)
    assert.equal(span(call('make_timespan', ['long', 'long', 'long', 'real'], [1, 12, 30, 55.123])), '1.12:30:55.1230000')
    assert.equal(span(call('make_timespan', ['long', 'long'], [1, 2])), '01:02:00')
    assert.equal(call('make_timespan', ['long', 'long'], [1, 60]), null)
    assert.equal(iso(call('make_datetime', ['string'], ['2020-02-03'])), '2020-02-03T00:00:00Z')
    assert.equal(iso(call('make_datetime', ['real', 'real', 'real'], [2020.0, 2, 3])), '2020-02-03T00:00:00Z')
    assert.equal(span(call('make_timespan', ['string'], ['01:02:03'])), '01:02:03')
  })
  it('datetime_list_timezones lists IANA zones', () => {
    const zones = call('datetime_list_timezones', [], []) as string[]
    assert.ok(zones.includes('Europe/Brussels') && zones.includes('UTC'))
  })
  it('startof*/endof* with offsets', () => {
    const t = dt('2017-01-01 10:10:17')
    assert.deepEqual(
      [-1, 0, 1].map((o) => iso(call('endofday', ['datetime', 'long'], [t, o]))),
      ['2016-12-31T23:59:59.9999999Z', '2017-01-01T23:59:59.9999999Z', '2017-01-02T23:59:59.9999999Z'],
    )
    assert.deepEqual(
      [-1, 0, 1].map((o) => iso(call('startofday', ['datetime', 'long'], [t, o]))),
      ['2016-12-31T00:00:00Z', '2017-01-01T00:00:00Z', '2017-01-02T00:00:00Z'],
    )
    assert.deepEqual(
      [-1, 0, 1].map((o) => iso(call('startofweek', ['datetime', 'long'], [t, o]))),
      ['2016-12-25T00:00:00Z', '2017-01-01T00:00:00Z', '2017-01-08T00:00:00Z'],
    )
    assert.deepEqual(
      [-1, 0, 1].map((o) => iso(call('endofweek', ['datetime', 'long'], [t, o]))),
      ['2016-12-31T23:59:59.9999999Z', '2017-01-07T23:59:59.9999999Z', '2017-01-14T23:59:59.9999999Z'],
    )
    assert.deepEqual(
      [-1, 0, 1].map((o) => iso(call('startofmonth', ['datetime', 'long'], [t, o]))),
      ['2016-12-01T00:00:00Z', '2017-01-01T00:00:00Z', '2017-02-01T00:00:00Z'],
    )
    assert.deepEqual(
      [-1, 0, 1].map((o) => iso(call('endofmonth', ['datetime', 'long'], [t, o]))),
      ['2016-12-31T23:59:59.9999999Z', '2017-01-31T23:59:59.9999999Z', '2017-02-28T23:59:59.9999999Z'],
    )
    assert.deepEqual(
      [-1, 0, 1].map((o) => iso(call('startofyear', ['datetime', 'long'], [t, o]))),
      ['2016-01-01T00:00:00Z', '2017-01-01T00:00:00Z', '2018-01-01T00:00:00Z'],
    )
    assert.deepEqual(
      [-1, 0, 1].map((o) => iso(call('endofyear', ['datetime', 'long'], [t, o]))),
      ['2016-12-31T23:59:59.9999999Z', '2017-12-31T23:59:59.9999999Z', '2018-12-31T23:59:59.9999999Z'],
    )
    assert.equal(iso(call('endofweek', ['datetime'], [dt('2025-06-14')])), '2025-06-14T23:59:59.9999999Z')
    assert.equal(iso(call('endofyear', ['datetime'], [dt('9999-05-01')])), '9999-12-31T23:59:59.9999999Z')
  })
})

describe('formatting', () => {
  const t = dt('2017-01-29 09:00:05')
  it('format_datetime (documentation examples)', () => {
    assert.equal(call('format_datetime', ['datetime', 'string'], [t, 'yy-MM-dd [HH:mm:ss]']), '17-01-29 [09:00:05]')
    assert.equal(call('format_datetime', ['datetime', 'string'], [t, 'yyyy-M-dd [H:mm:ss]']), '2017-1-29 [9:00:05]')
    assert.equal(call('format_datetime', ['datetime', 'string'], [t, 'yy-MM-dd [hh:mm:ss tt]']), '17-01-29 [09:00:05 AM]')
  })
  it('format_datetime fraction specifiers', () => {
    const f = dt('2009-06-15T13:45:30.6175425')
    assert.equal(call('format_datetime', ['datetime', 'string'], [f, 'f ff fff fffffff']), '6 61 617 6175425')
    assert.equal(call('format_datetime', ['datetime', 'string'], [dt('2009-06-15T13:45:30.0500000'), '[F]']), '[]')
    assert.equal(call('format_datetime', ['datetime', 'string'], [dt('2009-06-15T13:45:30.0001150'), 'FFFFFFF']), '000115')
    assert.equal(call('format_datetime', ['datetime', 'string'], [dt('0900-01-01'), 'y yy yyyy']), '0 00 0900')
    assert.equal(call('format_datetime', ['datetime', 'string'], [dt('2009-06-15T13:45:30'), 'h hh H tt']), '1 01 13 PM')
    assert.equal(call('format_datetime', ['datetime', 'string'], [t, 'yyyy/MM/dd'], false), '2017/01/29')
    assert.equal(call('format_datetime', ['datetime', 'string'], [null, 'yyyy']), '')
  })
  it('format_timespan (documentation example)', () => {
    const x = ts('29.09:00:05.12345')
    assert.equal(call('format_timespan', ['timespan', 'string'], [x, 'dd.hh:mm:ss:FF']), '29.09:00:05:12')
    assert.equal(call('format_timespan', ['timespan', 'string'], [x, 'ddd.h:mm:ss [fffffff]']), '029.9:00:05 [1234500]')
  })
})

describe('time zones', () => {
  it('datetime_utc_to_local / datetime_local_to_utc around a DST change', () => {
    const rows = ['2022-03-27 01:00', '2022-03-27 02:00', '2022-03-27 03:00', '2022-03-27 04:00']
    const utc = rows.map((r) => iso(call('datetime_local_to_utc', ['datetime', 'string'], [dt(r), 'Europe/Brussels'])))
    assert.deepEqual(utc, ['2022-03-27T00:00:00Z', '2022-03-27T00:00:00Z', '2022-03-27T01:00:00Z', '2022-03-27T02:00:00Z'])
    const back = utc.map((u) => iso(call('datetime_utc_to_local', ['datetime', 'string'], [dt(u!), 'Europe/Brussels'])))
    assert.deepEqual(back, ['2022-03-27T01:00:00Z', '2022-03-27T01:00:00Z', '2022-03-27T03:00:00Z', '2022-03-27T04:00:00Z'])
  })
  it('accepts legacy zone names and rejects unknown constant zones', () => {
    const t = dt('2022-07-11 22:18:48.467862')
    const pacific = call('datetime_utc_to_local', ['datetime', 'string'], [t, 'US/Pacific']) as bigint
    const canberra = call('datetime_utc_to_local', ['datetime', 'string'], [t, 'Australia/Canberra']) as bigint
    assert.equal(span(pacific - canberra), '-17:00:00')
    assert.throws(() => call('datetime_utc_to_local', ['datetime', 'string'], [t, 'Mars/Olympus']), KqlError)
    assert.equal(call('datetime_utc_to_local', ['datetime', 'string'], [t, 'Mars/Olympus'], false), null)
  })
})

describe('bin, floor, bin_at', () => {
  it('bin on numbers, timespans and datetimes (documentation examples)', () => {
    assert.equal(call('bin', ['real', 'long'], [4.5, 1]), 4)
    assert.equal(span(call('bin', ['timespan', 'timespan'], [ts('16d'), ts('7d')])), '14.00:00:00')
    assert.equal(iso(call('bin', ['datetime', 'timespan'], [dt('1970-05-11 13:45:07'), ts('1d')])), '1970-05-11T00:00:00Z')
    assert.equal(call('floor', ['long', 'long'], [-7, 5]), -10)
    assert.equal(call('bin', ['long', 'long'], [7, 0]), null)
    assert.equal(call('bin', ['long', 'long'], [7, -1]), null)
    assert.equal(call('bin', ['long', 'long'], [null, 1]), null)
    assert.equal(
      lookupScalar('bin')!.bind([
        { type: 'long', text: 'x' },
        { type: 'long', text: '1' },
      ]).type,
      'long',
    )
    assert.equal(
      lookupScalar('bin')!.bind([
        { type: 'long', text: 'x' },
        { type: 'real', text: '1.5' },
      ]).type,
      'real',
    )
    bindFails('bin', ['string', 'long'])
  })
  it('weekly datetime bins start on Monday (aligned to 0001-01-01 like Kusto)', () => {
    assert.equal(iso(call('bin', ['datetime', 'timespan'], [dt('2017-05-17 10:20'), ts('7d')])), '2017-05-15T00:00:00Z')
  })
  it('bin_at (documentation examples)', () => {
    assert.equal(call('bin_at', ['real', 'real', 'long'], [6.5, 2.5, 7]), 4.5)
    assert.equal(span(call('bin_at', ['timespan', 'timespan', 'timespan'], [ts('1h'), ts('1d'), ts('12h')])), '-12:00:00')
    assert.equal(
      iso(call('bin_at', ['datetime', 'timespan', 'datetime'], [dt('2017-05-15 10:20:00'), ts('1d'), dt('1970-01-01 12:00:00')])),
      '2017-05-14T12:00:00Z',
    )
    assert.equal(
      iso(call('bin_at', ['datetime', 'timespan', 'datetime'], [dt('2017-05-17 10:20:00'), ts('7d'), dt('2017-06-04')])),
      '2017-05-14T00:00:00Z',
    )
    assert.deepEqual(
      ['2018-02-24T15:14', '2018-02-23T16:14', '2018-02-26T15:14'].map((d) =>
        iso(call('bin_at', ['datetime', 'timespan', 'datetime'], [dt(d), ts('1d'), dt('2018-02-24 15:14:00')])),
      ),
      ['2018-02-24T15:14:00Z', '2018-02-23T15:14:00Z', '2018-02-26T15:14:00Z'],
    )
  })
})

describe('properties', async () => {
  const fc = (await import('fast-check')).default
  const ticks = fc.bigInt({
    min: -62135596800n * 10_000_000n + 1100n * 864_000_000_000n,
    max: 253402300799n * 10_000_000n - 1100n * 864_000_000_000n,
  })
  it('bin is idempotent, below the value and within one bin', () => {
    fc.assert(
      fc.property(ticks, fc.bigInt({ min: 1n, max: 864_000_000_000n * 30n }), (t, size) => {
        const b = call('bin', ['datetime', 'timespan'], [t, size]) as bigint
        return b <= t && t - b < size && call('bin', ['datetime', 'timespan'], [b, size]) === b
      }),
      { numRuns: 200 },
    )
  })
  it('datetime_diff undoes datetime_add for fixed-length periods', () => {
    const periods = ['day', 'hour', 'minute', 'second', 'millisecond', 'microsecond'] as const
    fc.assert(
      fc.property(ticks, fc.integer({ min: -1000, max: 1000 }), fc.constantFrom(...periods), (t, n, p) => {
        const moved = call('datetime_add', ['string', 'long', 'datetime'], [p, n, t]) as bigint
        return call('datetime_diff', ['string', 'datetime', 'datetime'], [p, moved, t]) === n
      }),
      { numRuns: 200 },
    )
  })
  it('startofday <= t <= endofday, both on the same day', () => {
    fc.assert(
      fc.property(ticks, (t) => {
        const s = call('startofday', ['datetime'], [t]) as bigint
        const e = call('endofday', ['datetime'], [t]) as bigint
        return s <= t && t <= e && e - s === 864_000_000_000n - 1n
      }),
      { numRuns: 200 },
    )
  })
})
