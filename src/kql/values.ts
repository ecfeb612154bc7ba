/**
 * @module
 * Datetime and timespan arithmetic, parsing and formatting, and the JSON wire form of values
 * (design §5: ISO 8601 UTC with `Z` and no trailing zero fraction; timespans as Kusto's
 * `[-][d.]hh:mm:ss[.fffffff]`; dynamic values as JSON; NaN and ±Infinity as strings).
 */
import type { DynamicValue, KqlType, KqlValue } from './types.js'

export const TICKS_PER_MICROSECOND = 10n
export const TICKS_PER_MILLISECOND = 10_000n
export const TICKS_PER_SECOND = 10_000_000n
export const TICKS_PER_MINUTE = 60n * TICKS_PER_SECOND
export const TICKS_PER_HOUR = 60n * TICKS_PER_MINUTE
export const TICKS_PER_DAY = 24n * TICKS_PER_HOUR

/** Kusto's datetime range: 0001-01-01 to 9999-12-31 23:59:59.9999999 (as ticks since the Unix epoch). */
export const MIN_DATETIME_TICKS = -621355968000000000n
export const MAX_DATETIME_TICKS = 2534023007999999999n

/** Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const mp = (month + 9) % 12
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

/** Inverse of daysFromCivil. */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day }
}

export function daysInMonth(year: number, month: number): number {
  return [31, isLeapYear(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
}

export interface DateTimeParts {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
  /** Sub-second part in ticks, 0..9,999,999. */
  fractionTicks: number
}

/** Builds datetime ticks from calendar parts; returns null when a part is out of range. */
export function makeDateTime(p: DateTimeParts): bigint | null {
  if (!Number.isInteger(p.year) || p.year < 1 || p.year > 9999) return null
  if (p.month < 1 || p.month > 12 || p.day < 1 || p.day > daysInMonth(p.year, p.month)) return null
  if (p.hour < 0 || p.hour > 23 || p.minute < 0 || p.minute > 59 || p.second < 0 || p.second > 59) return null
  const days = BigInt(daysFromCivil(p.year, p.month, p.day))
  const secs = BigInt(p.hour * 3600 + p.minute * 60 + p.second)
  return days * TICKS_PER_DAY + secs * TICKS_PER_SECOND + BigInt(p.fractionTicks)
}

/** Splits datetime ticks into calendar parts (UTC). */
export function dateTimeParts(ticks: bigint): DateTimeParts {
  let days = ticks / TICKS_PER_DAY
  let rem = ticks % TICKS_PER_DAY
  if (rem < 0n) {
    rem += TICKS_PER_DAY
    days -= 1n
  }
  const { year, month, day } = civilFromDays(Number(days))
  const secs = Number(rem / TICKS_PER_SECOND)
  return {
    year,
    month,
    day,
    hour: Math.floor(secs / 3600),
    minute: Math.floor((secs % 3600) / 60),
    second: secs % 60,
    fractionTicks: Number(rem % TICKS_PER_SECOND),
  }
}

export function dateTimeFromEpochMs(ms: number): bigint {
  return BigInt(Math.round(ms * 10_000))
}

export function epochMsFromDateTime(ticks: bigint): number {
  return Number(ticks / TICKS_PER_MILLISECOND) + Number(ticks % TICKS_PER_MILLISECOND) / 10_000
}

const pad2 = (n: number): string => (n < 10 ? '0' : '') + n

function fraction7(ticks: number): string {
  return String(ticks).padStart(7, '0')
}

/** ISO 8601 UTC text: `2024-05-01T12:30:00Z`, `2024-05-01T12:30:00.25Z` (trailing zeros trimmed). */
export function formatDateTime(ticks: bigint): string {
  const p = dateTimeParts(ticks)
  const base = `${String(p.year).padStart(4, '0')}-${pad2(p.month)}-${pad2(p.day)}T${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}`
  if (p.fractionTicks === 0) return base + 'Z'
  return `${base}.${fraction7(p.fractionTicks).replace(/0+$/, '')}Z`
}

/** Kusto timespan text: `[-][d.]hh:mm:ss[.fffffff]`. */
export function formatTimespan(ticks: bigint): string {
  const negative = ticks < 0n
  let t = negative ? -ticks : ticks
  const frac = Number(t % TICKS_PER_SECOND)
  t /= TICKS_PER_SECOND
  const s = Number(t % 60n)
  t /= 60n
  const m = Number(t % 60n)
  t /= 60n
  const h = Number(t % 24n)
  const d = t / 24n
  let out = `${negative ? '-' : ''}${d > 0n ? `${d}.` : ''}${pad2(h)}:${pad2(m)}:${pad2(s)}`
  if (frac > 0) out += `.${fraction7(frac)}`
  return out
}

const MONTHS: Readonly<Record<string, number>> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
}

const ISO_RE = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/
const SLASH_RE = /^(\d{4})\/(\d{1,2})\/(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|UTC|GMT)?$/
// RFC 822 / 1123 / 850: "Sat, 8 Nov 2014 15:05:02 GMT", "Saturday, 08-Nov-14 15:05:02 GMT", "8 Nov 14 15:05 +0100"
const RFC_RE =
  /^(?:[A-Za-z]+,?\s+)?(\d{1,2})[\s-]([A-Za-z]{3})[A-Za-z]*[\s-](\d{2}|\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?\s*(Z|UT|UTC|GMT|[+-]\d{4}|[A-Z]{3})?$/
const US_RE = /^([A-Za-z]{3})[A-Za-z]*\s+(\d{1,2}),?\s+(\d{4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/
// US numeric form, as .NET's invariant culture reads it, month first: "02/17/2016 08:40:01", "12-02-2022"
const US_NUMERIC_RE =
  /^(\d{1,2})[-/](\d{1,2})[-/](\d{4})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?\s*(AM|PM|am|pm)?)?\s*(Z|UTC|GMT)?$/

function offsetTicks(zone: string | undefined): bigint {
  if (!zone || /^(z|utc|gmt|ut)$/i.test(zone)) return 0n
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)
  if (!m) return 0n
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? '0')
  return (m[1] === '-' ? -1n : 1n) * BigInt(minutes) * TICKS_PER_MINUTE
}

function fractionTicksOf(digits: string | undefined): number {
  if (!digits) return 0
  return Number((digits + '0000000').slice(0, 7))
}

/**
 * The date and time (UTC ticks, or null when no such calendar moment) that a date-time pattern's
 * groups name: 1-3 the date (year, month, day; or month, day, year for US dates); 4-6 hours,
 * minutes, seconds (optional); 7 the fraction digits (optional, beyond 7 dropped). The zone, if
 * any, is the caller's: its rules differ.
 */
export function dateTimeOfMatch(m: RegExpExecArray, order: 'ymd' | 'mdy' = 'ymd'): bigint | null {
  const [year, month, day] = order === 'ymd' ? [m[1], m[2], m[3]] : [m[3], m[1], m[2]]
  return makeDateTime({
    year: Number(year),
    month: Number(month),
    day: Number(day),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    fractionTicks: fractionTicksOf(m[7]),
  })
}

/** Value of the two ASCII digits at `at`, or -1 (NaN-free so callers can range-check it). */
function digits2(s: string, at: number): number {
  const a = s.charCodeAt(at) - 0x30
  const b = s.charCodeAt(at + 1) - 0x30
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1
}

/**
 * The common machine-written form, `yyyy-mm-ddThh:mm:ss[.f{1,7}](Z|±hh:mm)` (what JSON.stringify of a
 * Date and most clients send), read without a regex: ingest types millions of these. Returns
 * undefined for any other text, including out-of-range parts, so that parseDateTime's patterns
 * decide it; where it answers it gives exactly what ISO_RE would (values.test.ts compares them).
 */
function canonicalDateTime(s: string): bigint | null | undefined {
  const n = s.length
  if (n < 20 || n > 33) return undefined
  if (s.charCodeAt(4) !== 0x2d || s.charCodeAt(7) !== 0x2d || s.charCodeAt(10) !== 0x54) return undefined // - - T
  if (s.charCodeAt(13) !== 0x3a || s.charCodeAt(16) !== 0x3a) return undefined // : :
  const century = digits2(s, 0)
  const yy = digits2(s, 2)
  const month = digits2(s, 5)
  const day = digits2(s, 8)
  const hour = digits2(s, 11)
  const minute = digits2(s, 14)
  const second = digits2(s, 17)
  if (century < 0 || yy < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59) return undefined
  if (second < 0 || second > 59) return undefined
  const year = century * 100 + yy
  const sameDay = year === lastDay.year && month === lastDay.month && day === lastDay.day
  if (!sameDay && (year < 1 || day > daysInMonth(year, month))) return undefined
  let i = 19
  let fraction = 0
  if (s.charCodeAt(i) === 0x2e) {
    // .
    let scale = 1_000_000
    let c = s.charCodeAt(++i) - 0x30
    if (!(c >= 0 && c <= 9)) return undefined
    do {
      if (scale < 1) return undefined // 8 or 9 digits: the patterns drop the extra ones
      fraction += c * scale
      scale /= 10
      c = s.charCodeAt(++i) - 0x30
    } while (c >= 0 && c <= 9)
  }
  let offsetMinutes = 0
  const zone = s.charCodeAt(i)
  if (zone === 0x5a && i + 1 === n) {
    // Z
  } else if ((zone === 0x2b || zone === 0x2d) && i + 6 === n && s.charCodeAt(i + 3) === 0x3a) {
    // +hh:mm / -hh:mm (any two-digit values, as offsetTicks reads them)
    const h = digits2(s, i + 1)
    const m = digits2(s, i + 4)
    if (h < 0 || m < 0) return undefined
    offsetMinutes = zone === 0x2d ? -(h * 60 + m) : h * 60 + m
  } else return undefined
  // Ticks exceed 2^53, so they are a bigint: the day's ticks (kept for the next text, which is
  // usually of the same day) plus the rest of the moment, exact as a double (|…| < 5e12).
  if (!sameDay) {
    lastDay = { year, month, day, ticks: BigInt(daysFromCivil(year, month, day)) * TICKS_PER_DAY }
  }
  return lastDay.ticks + BigInt((hour * 3600 + minute * 60 + second - offsetMinutes * 60) * 10_000_000 + fraction)
}

let lastDay = { year: 0, month: 0, day: 0, ticks: 0n }

/**
 * Parses the datetime texts Kusto's `datetime()` / `todatetime()` accept (ISO 8601 with or without
 * `T`, zone `Z` or an offset; `yyyy/mm/dd`; `mm/dd/yyyy [hh:mm[:ss]]` and `mm-dd-yyyy`; RFC 822/850/1123).
 * Returns ticks or null.
 */
export function parseDateTime(text: string): bigint | null {
  const canonical = canonicalDateTime(text)
  if (canonical !== undefined) return canonical
  const s = text.trim()
  let m = ISO_RE.exec(s) ?? SLASH_RE.exec(s)
  if (m) {
    const ticks = dateTimeOfMatch(m)
    return ticks === null ? null : ticks - offsetTicks(m[8])
  }
  m = RFC_RE.exec(s)
  if (m) {
    const month = MONTHS[m[2]!.toLowerCase()]
    if (!month) return null
    let year = Number(m[3])
    if (m[3]!.length === 2) year += year < 50 ? 2000 : 1900
    const ticks = makeDateTime({
      year,
      month,
      day: Number(m[1]),
      hour: Number(m[4]),
      minute: Number(m[5]),
      second: Number(m[6] ?? 0),
      fractionTicks: fractionTicksOf(m[7]),
    })
    return ticks === null ? null : ticks - offsetTicks(m[8])
  }
  m = US_NUMERIC_RE.exec(s)
  if (m) {
    let hour = Number(m[4] ?? 0)
    const ampm = m[8]?.toUpperCase()
    if (ampm === 'PM' && hour < 12) hour += 12
    if (ampm === 'AM' && hour === 12) hour = 0
    return makeDateTime({
      year: Number(m[3]),
      month: Number(m[1]),
      day: Number(m[2]),
      hour,
      minute: Number(m[5] ?? 0),
      second: Number(m[6] ?? 0),
      fractionTicks: fractionTicksOf(m[7]),
    })
  }
  m = US_RE.exec(s)
  if (m) {
    const month = MONTHS[m[1]!.toLowerCase()]
    if (!month) return null
    return makeDateTime({
      year: Number(m[3]),
      month,
      day: Number(m[2]),
      hour: Number(m[4] ?? 0),
      minute: Number(m[5] ?? 0),
      second: Number(m[6] ?? 0),
      fractionTicks: 0,
    })
  }
  return null
}

const TIMESPAN_UNITS: Readonly<Record<string, bigint>> = {
  d: TICKS_PER_DAY,
  day: TICKS_PER_DAY,
  days: TICKS_PER_DAY,
  h: TICKS_PER_HOUR,
  hr: TICKS_PER_HOUR,
  hrs: TICKS_PER_HOUR,
  hour: TICKS_PER_HOUR,
  hours: TICKS_PER_HOUR,
  m: TICKS_PER_MINUTE,
  min: TICKS_PER_MINUTE,
  minute: TICKS_PER_MINUTE,
  minutes: TICKS_PER_MINUTE,
  s: TICKS_PER_SECOND,
  sec: TICKS_PER_SECOND,
  second: TICKS_PER_SECOND,
  seconds: TICKS_PER_SECOND,
  ms: TICKS_PER_MILLISECOND,
  milli: TICKS_PER_MILLISECOND,
  millis: TICKS_PER_MILLISECOND,
  millisecond: TICKS_PER_MILLISECOND,
  milliseconds: TICKS_PER_MILLISECOND,
  microsecond: TICKS_PER_MICROSECOND,
  microseconds: TICKS_PER_MICROSECOND,
  tick: 1n,
  ticks: 1n,
}

/** Ticks per unit for a timespan literal suffix (`1d`, `2h`, `30m`, `10s`, `100ms`, `1microsecond`, `5tick`), or undefined. */
export function timespanUnit(suffix: string): bigint | undefined {
  return TIMESPAN_UNITS[suffix.toLowerCase()]
}

/** Multiplies a decimal number text by a unit in ticks exactly (no floating point). */
export function scaleDecimal(numberText: string, unitTicks: bigint): bigint | null {
  const m = /^(\d*)(?:\.(\d*))?$/.exec(numberText)
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) return null
  const frac = m[2] ?? ''
  const scale = 10n ** BigInt(frac.length)
  const whole = BigInt((m[1] || '0') + frac)
  // round half away from zero to a whole tick
  return (whole * unitTicks * 2n + scale) / (2n * scale)
}

const CLOCK_RE = /^(-)?(?:(\d+)\.)?(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,7})\d*)?)?$/
const UNIT_RE = /^(-)?(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]+)$/

/**
 * Parses timespan text as Kusto's `timespan()` / `totimespan()` do: `[-][d.]hh:mm[:ss[.fffffff]]`,
 * a unit form (`2h`, `1.5d`, `100ms`) or a bare number of days (`time(2)`). Returns ticks or null.
 */
export function parseTimespan(text: string): bigint | null {
  const s = text.trim()
  let m = CLOCK_RE.exec(s)
  if (m) {
    const h = Number(m[3]),
      mi = Number(m[4]),
      sec = Number(m[5] ?? 0)
    if (h > 23 || mi > 59 || sec > 59) return null
    const t =
      BigInt(m[2] ?? 0) * TICKS_PER_DAY +
      BigInt(h) * TICKS_PER_HOUR +
      BigInt(mi) * TICKS_PER_MINUTE +
      BigInt(sec) * TICKS_PER_SECOND +
      BigInt(fractionTicksOf(m[6]))
    return m[1] ? -t : t
  }
  m = UNIT_RE.exec(s)
  if (m) {
    const unit = timespanUnit(m[3]!)
    if (unit === undefined) return null
    const t = scaleDecimal(m[2]!, unit)
    return t === null ? null : m[1] ? -t : t
  }
  m = /^(-)?(\d+(?:\.\d*)?|\.\d+)$/.exec(s)
  if (m) {
    const t = scaleDecimal(m[2]!, TICKS_PER_DAY)
    return t === null ? null : m[1] ? -t : t
  }
  return null
}

/** Floor division for bigints (rounds toward negative infinity, as Kusto's bin() does). */
export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q
}

/**
 * The JSON wire form of one value of a given type, as the query endpoints return it.
 * Datetime → ISO text, timespan → Kusto text, real NaN/±Infinity → "NaN"/"Infinity"/"-Infinity",
 * dynamic → JSON value (non-finite numbers inside become those strings too).
 */
export function toWireValue(type: KqlType, value: KqlValue): unknown {
  if (value === null || value === undefined) return type === 'string' ? '' : null
  switch (type) {
    case 'datetime':
      return typeof value === 'bigint' ? formatDateTime(value) : value
    case 'timespan':
      return typeof value === 'bigint' ? formatTimespan(value) : value
    case 'real':
    case 'decimal':
      return typeof value === 'number' && !Number.isFinite(value) ? nonFinite(value) : value
    case 'dynamic':
      return dynamicToWire(value as DynamicValue)
    case 'long':
      // the canonical long (a bigint beyond 2^53): JSON writers print it with every digit (stringifyExact)
      return value
    default:
      return typeof value === 'bigint' ? Number(value) : value
  }
}

function nonFinite(n: number): string {
  return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Infinity' : '-Infinity'
}

function dynamicToWire(v: DynamicValue): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? v : nonFinite(v)
  if (Array.isArray(v)) return v.map(dynamicToWire)
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) out[k] = dynamicToWire(x)
    return out
  }
  return v
}
