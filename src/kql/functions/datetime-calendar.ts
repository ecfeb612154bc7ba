/**
 * @module
 * Calendar arithmetic behind the datetime functions (split out of datetime-functions.ts, issue 19
 * item 6): days, weeks, months and ISO weeks over bigint ticks, and the periods and parts of
 * datetime_add(), datetime_diff() and datetime_part() (Kusto counts calendar boundaries).
 */
import { canonLong, type Long } from '../long.js'
import type { KqlValue } from '../types.js'
import {
  dateTimeParts,
  daysFromCivil,
  daysInMonth,
  floorDiv,
  MAX_DATETIME_TICKS,
  MIN_DATETIME_TICKS,
  TICKS_PER_DAY,
  TICKS_PER_HOUR,
  TICKS_PER_MICROSECOND,
  TICKS_PER_MILLISECOND,
  TICKS_PER_MINUTE,
  TICKS_PER_SECOND,
} from '../values.js'
import { constantOf, functionError } from './function-definitions.js'
import type { ArgInfo } from './function-types.js'

// ---------------------------------------------------------------------------------------------
// Calendar helpers
// ---------------------------------------------------------------------------------------------

/** Ticks of the Gregorian day 0001-01-01 relative to the Unix epoch: Kusto's bins align here (ticks 0 in .NET). */
export const DOTNET_EPOCH = MIN_DATETIME_TICKS

export function inRange(t: bigint): bigint | null {
  return t < MIN_DATETIME_TICKS || t > MAX_DATETIME_TICKS ? null : t
}

function dayNumber(t: bigint): bigint {
  return floorDiv(t, TICKS_PER_DAY)
}

export function startOfDay(t: bigint): bigint {
  return dayNumber(t) * TICKS_PER_DAY
}

/** 0 = Sunday ... 6 = Saturday (1970-01-01 was a Thursday). */
export function weekday(t: bigint): number {
  return Number((((dayNumber(t) + 4n) % 7n) + 7n) % 7n)
}

export function startOfWeek(t: bigint): bigint {
  return startOfDay(t) - BigInt(weekday(t)) * TICKS_PER_DAY
}

export function fromDays(y: number, m: number, d: number): bigint {
  return BigInt(daysFromCivil(y, m, d)) * TICKS_PER_DAY
}

/** Adds months like .NET's DateTime.AddMonths: the day is clamped to the target month's length. */
export function addMonths(t: bigint, months: number): bigint | null {
  const p = dateTimeParts(t)
  const total = p.year * 12 + (p.month - 1) + months
  const year = Math.floor(total / 12)
  const month = total - year * 12 + 1
  if (year < 1 || year > 9999) return null
  const day = Math.min(p.day, daysInMonth(year, month))
  return fromDays(year, month, day) + (t - startOfDay(t))
}

export function dayOfYear(t: bigint): number {
  const p = dateTimeParts(t)
  return daysFromCivil(p.year, p.month, p.day) - daysFromCivil(p.year, 1, 1) + 1
}

/** ISO 8601 week number (weeks start on Monday; week 1 holds the year's first Thursday). */
export function isoWeek(t: bigint): number {
  const days = Number(dayNumber(t))
  const isoDow = ((weekday(t) + 6) % 7) + 1 // Monday = 1 ... Sunday = 7
  const thursday = days - isoDow + 4
  const { year } = civil(thursday)
  const jan1 = daysFromCivil(year, 1, 1)
  return Math.floor((thursday - jan1) / 7) + 1
}

function civil(days: number): { year: number } {
  return { year: dateTimeParts(BigInt(days) * TICKS_PER_DAY).year }
}

// ---------------------------------------------------------------------------------------------
// Periods (datetime_add, datetime_diff, datetime_part)
// ---------------------------------------------------------------------------------------------

type Period = 'year' | 'quarter' | 'month' | 'week' | 'day' | 'hour' | 'minute' | 'second' | 'millisecond' | 'microsecond' | 'nanosecond'

export const PERIODS: Readonly<Record<string, Period>> = {
  year: 'year',
  yy: 'year',
  yyyy: 'year',
  quarter: 'quarter',
  qq: 'quarter',
  q: 'quarter',
  month: 'month',
  mm: 'month',
  m: 'month',
  week: 'week',
  wk: 'week',
  ww: 'week',
  weekofyear: 'week',
  week_of_year: 'week',
  day: 'day',
  dd: 'day',
  d: 'day',
  dayofyear: 'day',
  dy: 'day',
  y: 'day',
  hour: 'hour',
  hh: 'hour',
  minute: 'minute',
  mi: 'minute',
  n: 'minute',
  second: 'second',
  ss: 'second',
  s: 'second',
  millisecond: 'millisecond',
  ms: 'millisecond',
  microsecond: 'microsecond',
  mcs: 'microsecond',
  nanosecond: 'nanosecond',
  ns: 'nanosecond',
}

const FIXED_PERIOD_TICKS: Readonly<Partial<Record<Period, bigint>>> = {
  week: 7n * TICKS_PER_DAY,
  day: TICKS_PER_DAY,
  hour: TICKS_PER_HOUR,
  minute: TICKS_PER_MINUTE,
  second: TICKS_PER_SECOND,
  millisecond: TICKS_PER_MILLISECOND,
  microsecond: TICKS_PER_MICROSECOND,
}

export function datetimeAdd(period: Period, amount: number, t: bigint): bigint | null {
  switch (period) {
    case 'year':
      return addMonths(t, amount * 12)
    case 'quarter':
      return addMonths(t, amount * 3)
    case 'month':
      return addMonths(t, amount)
    case 'nanosecond':
      return inRange(t + BigInt(Math.trunc(amount / 100)))
    default:
      return inRange(t + BigInt(amount) * FIXED_PERIOD_TICKS[period]!)
  }
}

/**
 * Number of period boundaries crossed from t2 to t1 (Kusto counts calendar boundaries, not elapsed
 * units): an exact long, wrapping around at 64 bits as .NET's unchecked long (nanoseconds across
 * three centuries pass int64).
 */
export function datetimeDiff(period: Period, t1: bigint, t2: bigint): Long {
  switch (period) {
    case 'year':
      return dateTimeParts(t1).year - dateTimeParts(t2).year
    case 'quarter': {
      const a = dateTimeParts(t1)
      const b = dateTimeParts(t2)
      return a.year * 4 + Math.floor((a.month - 1) / 3) - (b.year * 4 + Math.floor((b.month - 1) / 3))
    }
    case 'month': {
      const a = dateTimeParts(t1)
      const b = dateTimeParts(t2)
      return a.year * 12 + a.month - (b.year * 12 + b.month)
    }
    case 'week':
      return canonLong((startOfWeek(t1) - startOfWeek(t2)) / (7n * TICKS_PER_DAY))
    case 'nanosecond':
      return canonLong((t1 - t2) * 100n)
    default: {
      const unit = FIXED_PERIOD_TICKS[period]!
      return canonLong(floorDiv(t1, unit) - floorDiv(t2, unit))
    }
  }
}

type Part =
  | 'year'
  | 'quarter'
  | 'month'
  | 'week_of_year'
  | 'day'
  | 'dayofyear'
  | 'hour'
  | 'minute'
  | 'second'
  | 'millisecond'
  | 'microsecond'
  | 'nanosecond'

export const PARTS: Readonly<Record<string, Part>> = {
  year: 'year',
  quarter: 'quarter',
  month: 'month',
  week_of_year: 'week_of_year',
  weekofyear: 'week_of_year',
  week: 'week_of_year',
  day: 'day',
  dayofyear: 'dayofyear',
  hour: 'hour',
  minute: 'minute',
  second: 'second',
  millisecond: 'millisecond',
  microsecond: 'microsecond',
  nanosecond: 'nanosecond',
}

export function datetimePart(part: Part, t: bigint): number {
  const p = dateTimeParts(t)
  switch (part) {
    case 'year':
      return p.year
    case 'quarter':
      return Math.floor((p.month - 1) / 3) + 1
    case 'month':
      return p.month
    case 'week_of_year':
      return isoWeek(t)
    case 'day':
      return p.day
    case 'dayofyear':
      return dayOfYear(t)
    case 'hour':
      return p.hour
    case 'minute':
      return p.minute
    case 'second':
      return p.second
    case 'millisecond':
      return Math.floor(p.fractionTicks / 10_000)
    case 'microsecond':
      return Math.floor(p.fractionTicks / 10)
    case 'nanosecond':
      return p.fractionTicks * 100
  }
}

/** Resolves a period-like string argument: constant names are checked at bind time, others per row. */
export function periodResolver<T>(name: string, arg: ArgInfo, table: Readonly<Record<string, T>>): (v: KqlValue) => T | null {
  const c = constantOf(arg)
  if (typeof c === 'string') {
    const resolved = table[c.trim().toLowerCase()]
    if (resolved === undefined) throw functionError(name, `unknown period '${c}'`)
    return () => resolved
  }
  return (v) => (typeof v === 'string' ? (table[v.trim().toLowerCase()] ?? null) : null)
}
