/**
 * @module
 * KQL datetime and timespan functions (see ./README.md): clock, conversion, calendar parts,
 * calendar arithmetic, start/end of periods, formatting, time zones and binning. The calendar
 * arithmetic is in ./datetime-calendar.ts, formats and time zones in ./datetime-formatting.ts.
 *
 * Datetimes are bigint ticks (100 ns) since the Unix epoch; calendar math goes through values.ts.
 */

import { canonLong, isLongValue, longToBigInt } from '../long.js'
import type { KqlType, KqlValue } from '../types.js'
import {
  dateTimeParts,
  floorDiv,
  MAX_DATETIME_TICKS,
  makeDateTime,
  parseDateTime,
  parseTimespan,
  TICKS_PER_DAY,
  TICKS_PER_HOUR,
  TICKS_PER_MINUTE,
} from '../values.js'
import {
  addMonths,
  DOTNET_EPOCH,
  datetimeAdd,
  datetimeDiff,
  datetimePart,
  dayOfYear,
  fromDays,
  inRange,
  isoWeek,
  PARTS,
  PERIODS,
  periodResolver,
  startOfDay,
  startOfWeek,
  weekday,
} from './datetime-calendar.js'
import { formatFunction, localToUtc, utcToLocal, zoneFormatter } from './datetime-formatting.js'
import { checkArity, constantOf, defineScalar, expectKind, functionError } from './function-definitions.js'
import type { ArgInfo, EvalContext, ScalarFunction } from './function-types.js'
import { coercer, widest } from './numeric-helpers.js'

// ---------------------------------------------------------------------------------------------
// Binning (bin, floor, bin_at)
// ---------------------------------------------------------------------------------------------

function binNumber(v: number, size: number): number | null {
  if (!(size > 0)) return null
  return Math.floor(v / size) * size
}

function binTicks(v: bigint, size: bigint, origin: bigint): bigint | null {
  if (size <= 0n) return null
  return floorDiv(v - origin, size) * size + origin
}

function binResultType(name: string, args: readonly ArgInfo[]): KqlType {
  const v = args[0]!.type
  const s = args[1]!.type
  if (v === 'datetime' || v === 'timespan') {
    if (s !== 'timespan' && s !== 'dynamic' && !['int', 'long', 'real', 'decimal'].includes(s)) {
      throw functionError(name, `bin size (${args[1]!.text}) must be a timespan for a ${v} value, got ${s}`)
    }
    return v
  }
  if (v === 'dynamic') return 'real'
  if (!['int', 'long', 'real', 'decimal'].includes(v)) {
    throw functionError(name, `argument #1 (${args[0]!.text}) must be a number, timespan or datetime, got ${v}`)
  }
  if (!['int', 'long', 'real', 'decimal', 'dynamic'].includes(s)) {
    throw functionError(name, `bin size (${args[1]!.text}) must be a number, got ${s}`)
  }
  return widest([v, s])
}

/** Bin size in ticks: timespans as they are; a number for a datetime/timespan value counts ticks. */
function sizeTicks(v: KqlValue, type: KqlType): bigint | null {
  if (v === null || v === undefined) return null
  if (typeof v === 'bigint') return v
  if (typeof v === 'number') return Number.isFinite(v) ? BigInt(Math.trunc(v)) : null
  if (type === 'dynamic' && typeof v === 'string') return parseTimespan(v)
  return null
}

function binFunction(name: string, aliases?: readonly string[]): ScalarFunction {
  return defineScalar({
    name,
    ...(aliases ? { aliases } : {}),
    params: ['scalar', 'scalar'],
    result: (args) => binResultType(name, args),
    bind(args) {
      const type = binResultType(name, args)
      const sizeType = args[1]!.type
      if (type === 'datetime' || type === 'timespan') {
        const origin = type === 'datetime' ? DOTNET_EPOCH : 0n
        const value = coercer(type, args[0]!.type)
        return ([v, s]) => {
          const x = value(v ?? null)
          const size = sizeTicks(s ?? null, sizeType)
          if (typeof x !== 'bigint' || size === null) return null
          return binTicks(x, size, origin)
        }
      }
      const size = coercer('number', sizeType)
      if (type === 'long') {
        // exact 64-bit: a long beyond 2^53 is binned with bigint floor division
        const exact = coercer('long', args[0]!.type)
        return ([v, s]) => {
          const x = exact(v ?? null)
          const z = size(s ?? null)
          if (x === null || typeof z !== 'number' || !(z > 0)) return null
          if (typeof x === 'number') return Math.floor(x / z) * z
          if (!Number.isInteger(z)) return canonLong(BigInt(Math.floor(Number(x) / z) * z))
          const zb = BigInt(z)
          return canonLong(floorDiv(x as bigint, zb) * zb)
        }
      }
      const value = coercer('number', args[0]!.type)
      const integral = type === 'int'
      return ([v, s]) => {
        const x = value(v ?? null)
        const z = size(s ?? null)
        if (typeof x !== 'number' || typeof z !== 'number') return null
        if (integral) {
          if (!(z > 0)) return null
          return Math.floor(x / z) * z
        }
        return binNumber(x, z)
      }
    },
  })
}

/** bin_at's result type: the value's for datetimes and timespans, else the widest of value and fixed point. */
function binAtType(args: readonly ArgInfo[]): KqlType {
  const type = binResultType('bin_at', args)
  return type === 'datetime' || type === 'timespan' ? type : widest([type, args[2]!.type])
}

const binAt = defineScalar({
  name: 'bin_at',
  params: ['scalar', 'scalar', 'scalar'],
  result: binAtType,
  bind(args) {
    const type = binResultType('bin_at', args)
    const fixedType = args[2]!.type
    if (type === 'datetime' || type === 'timespan') {
      if (fixedType !== type && fixedType !== 'dynamic') {
        throw functionError('bin_at', `fixed point (${args[2]!.text}) must be a ${type}, got ${fixedType}`)
      }
      const value = coercer(type, args[0]!.type)
      const fixed = coercer(type, fixedType)
      const sizeType = args[1]!.type
      return ([v, s, f]) => {
        const x = value(v ?? null)
        const o = fixed(f ?? null)
        const size = sizeTicks(s ?? null, sizeType)
        if (typeof x !== 'bigint' || typeof o !== 'bigint' || size === null) return null
        return binTicks(x, size, o)
      }
    }
    // the fixed point's kind depends on the value's type (an overload, not one kind)
    expectKind('bin_at', args, 2, 'number')
    if (args.every((a) => a.type === 'int' || a.type === 'long')) {
      // exact 64-bit: longs beyond 2^53 are binned with bigint floor division
      const [value, size, fixed] = args.map((a) => coercer('long', a.type))
      return ([v, s, f]) => {
        const [x, z, o] = [value!(v ?? null), size!(s ?? null), fixed!(f ?? null)]
        if (!isLongValue(x) || !isLongValue(z) || !isLongValue(o) || !(z > 0)) return null
        const [xb, zb, ob] = [longToBigInt(x), longToBigInt(z), longToBigInt(o)]
        return canonLong(floorDiv(xb - ob, zb) * zb + ob)
      }
    }
    const value = coercer('number', args[0]!.type)
    const size = coercer('number', args[1]!.type)
    const fixed = coercer('number', fixedType)
    return ([v, s, f]) => {
      const x = value(v ?? null)
      const z = size(s ?? null)
      const o = fixed(f ?? null)
      if (typeof x !== 'number' || typeof z !== 'number' || typeof o !== 'number' || !(z > 0)) return null
      return Math.floor((x - o) / z) * z + o
    }
  },
})

// ---------------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------------

/** .NET ticks (since 0001-01-01) → our ticks; Kusto converts numbers to datetime as .NET ticks. */
function fromDotnetTicks(n: number | bigint): bigint | null {
  if (typeof n === 'bigint') return inRange(n + DOTNET_EPOCH)
  if (!Number.isFinite(n)) return null
  return inRange(BigInt(Math.trunc(n)) + DOTNET_EPOCH)
}

const US_DATE = /^(\d{1,2})[-/](\d{1,2})[-/](\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?)?$/

/** Datetime text as todatetime() reads it: values.ts formats, then US month-first dates (`12-02-2022`, `02/17/2016 08:40:01`). */
function parseDatetimeText(text: string): bigint | null {
  const parsed = parseDateTime(text)
  if (parsed !== null) return parsed
  const m = US_DATE.exec(text.trim())
  if (!m) return null
  return makeDateTime({
    year: Number(m[3]),
    month: Number(m[1]),
    day: Number(m[2]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    fractionTicks: Number(((m[7] ?? '') + '0000000').slice(0, 7)),
  })
}

function toDatetimeValue(type: KqlType, v: KqlValue): KqlValue {
  if (v === null || v === undefined) return null
  switch (type) {
    case 'datetime':
      return v
    case 'string':
      return parseDatetimeText(v as string)
    case 'int':
    case 'long':
    case 'real':
    case 'decimal':
      return fromDotnetTicks(v as number | bigint)
    case 'dynamic':
      return typeof v === 'string' ? parseDatetimeText(v) : typeof v === 'number' ? fromDotnetTicks(v) : null
    default:
      return null
  }
}

function toTimespanValue(type: KqlType, v: KqlValue): KqlValue {
  if (v === null || v === undefined) return null
  switch (type) {
    case 'timespan':
      return v
    case 'string':
      return parseTimespan(v as string)
    case 'int':
    case 'long':
      return typeof v === 'bigint' ? v : BigInt(v as number)
    case 'real':
    case 'decimal':
      return Number.isFinite(v as number) ? BigInt(Math.trunc(v as number)) : null
    case 'dynamic':
      return typeof v === 'string' ? parseTimespan(v) : typeof v === 'number' && Number.isFinite(v) ? BigInt(Math.trunc(v)) : null
    default:
      return null
  }
}

function converter(
  name: string,
  type: KqlType,
  convert: (t: KqlType, v: KqlValue) => KqlValue,
  aliases?: readonly string[],
): ScalarFunction {
  return defineScalar({
    name,
    ...(aliases ? { aliases } : {}),
    params: ['scalar'],
    result: type,
    bind(args) {
      const from = args[0]!.type
      return ([v]) => convert(from, v ?? null)
    },
  })
}

function unixConverter(name: string, ticksPerUnit: number): ScalarFunction {
  return defineScalar({
    name,
    params: ['number'],
    result: 'datetime',
    impl: ([v]) => {
      const n = v as number
      if (!Number.isFinite(n)) return null
      const ticks = ticksPerUnit >= 1 ? Math.round(n * ticksPerUnit) : Math.trunc(n * ticksPerUnit)
      if (!Number.isSafeInteger(ticks) && Math.abs(ticks) > 3e18) return null
      return inRange(BigInt(ticks))
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Start/end of periods
// ---------------------------------------------------------------------------------------------

function startOf(unit: 'day' | 'week' | 'month' | 'year', t: bigint, offset: number): bigint | null {
  switch (unit) {
    case 'day':
      return inRange(startOfDay(t) + BigInt(offset) * TICKS_PER_DAY)
    case 'week':
      return inRange(startOfWeek(t) + BigInt(offset) * 7n * TICKS_PER_DAY)
    case 'month': {
      const p = dateTimeParts(t)
      return addMonths(fromDays(p.year, p.month, 1), offset)
    }
    case 'year': {
      const y = dateTimeParts(t).year + offset
      return y < 1 || y > 9999 ? null : fromDays(y, 1, 1)
    }
  }
}

function periodBoundary(name: string, unit: 'day' | 'week' | 'month' | 'year', end: boolean): ScalarFunction {
  return defineScalar({
    name,
    params: ['datetime', 'integer'],
    min: 1,
    result: 'datetime',
    impl: ([t, offset]) => {
      const off = offset === undefined ? 0 : (offset as number)
      if (!end) return startOf(unit, t as bigint, off)
      const next = startOf(unit, t as bigint, off + 1)
      if (next === null) return off + 1 > 0 && startOf(unit, t as bigint, off) !== null ? MAX_DATETIME_TICKS : null
      return next - 1n
    },
  })
}

// ---------------------------------------------------------------------------------------------
// make_datetime / make_timespan
// ---------------------------------------------------------------------------------------------

function splitSeconds(s: number): { whole: number; fractionTicks: number } | null {
  if (!Number.isFinite(s) || s < 0) return null
  const ticks = Math.round(s * 1e7)
  return { whole: Math.floor(ticks / 1e7), fractionTicks: ticks % 1e7 }
}

const makeDatetimeParts = defineScalar({
  name: 'make_datetime',
  params: ['number', 'number', 'number', 'number', 'number', 'number'],
  min: 3,
  result: 'datetime',
  impl: (v) => {
    const ints = v.slice(0, 5).map((x) => Math.trunc(x as number))
    const sec = splitSeconds((v[5] as number | undefined) ?? 0)
    if (!sec) return null
    return makeDateTime({
      year: ints[0]!,
      month: ints[1]!,
      day: ints[2]!,
      hour: ints[3] ?? 0,
      minute: ints[4] ?? 0,
      second: sec.whole,
      fractionTicks: sec.fractionTicks,
    })
  },
})

/** make_datetime(y, m, d[, h, mi[, s]]), or make_datetime(value) converting one scalar like todatetime(). */
const makeDatetime: ScalarFunction = {
  name: 'make_datetime',
  bind(args) {
    if (args.length === 1) {
      const from = args[0]!.type
      return { type: 'datetime', evaluate: ([v]) => toDatetimeValue(from, v ?? null) }
    }
    // the parts overload takes 3, 5 or 6 arguments (hours without minutes are no time)
    if (args.length === 4) checkArity('make_datetime', args, 3)
    return makeDatetimeParts.bind(args)
  },
}

const makeTimespanParts = defineScalar({
  name: 'make_timespan',
  params: ['integer', 'integer', 'real', 'real'],
  min: 2,
  result: 'timespan',
  impl: (v) => {
    let d = 0,
      h: number,
      m: number,
      s = 0
    if (v.length === 4) [d, h, m, s] = v as number[] as [number, number, number, number]
    else if (v.length === 3) [h, m, s] = v as number[] as [number, number, number]
    else [h, m] = v as number[] as [number, number]
    if (h < 0 || h > 23 || m < 0 || m > 59 || !(s >= 0 && s < 60)) return null
    return BigInt(d) * TICKS_PER_DAY + BigInt(h) * TICKS_PER_HOUR + BigInt(m) * TICKS_PER_MINUTE + BigInt(Math.round(s * 1e7))
  },
})

/** make_timespan(h, m[, s]) / (d, h, m, s), or make_timespan(value) converting one scalar like totimespan(). */
const makeTimespan: ScalarFunction = {
  name: 'make_timespan',
  bind(args) {
    if (args.length === 1) {
      const from = args[0]!.type
      return { type: 'timespan', evaluate: ([v]) => toTimespanValue(from, v ?? null) }
    }
    return makeTimespanParts.bind(args)
  },
}

const listTimezones = defineScalar({
  name: 'datetime_list_timezones',
  params: [],
  result: 'dynamic',
  impl: () => {
    const supported = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf
    const zones = supported ? supported('timeZone') : []
    return zones.includes('UTC') ? zones : ['UTC', ...zones]
  },
})

// ---------------------------------------------------------------------------------------------
// The family
// ---------------------------------------------------------------------------------------------

const datetimeAddFn = defineScalar({
  name: 'datetime_add',
  params: ['string', 'integer', 'datetime'],
  result: 'datetime',
  bind(args) {
    const period = periodResolver('datetime_add', args[0]!, PERIODS)
    const amount = coercer('integer', args[1]!.type)
    const dt = coercer('datetime', args[2]!.type)
    return ([p, a, t]) => {
      const per = period(p ?? '')
      const n = amount(a ?? null)
      const x = dt(t ?? null)
      if (per === null || typeof n !== 'number' || typeof x !== 'bigint') return null
      return datetimeAdd(per, n, x)
    }
  },
})

const datetimeDiffFn = defineScalar({
  name: 'datetime_diff',
  params: ['string', 'datetime', 'datetime'],
  result: 'long',
  bind(args) {
    const period = periodResolver('datetime_diff', args[0]!, PERIODS)
    const a = coercer('datetime', args[1]!.type)
    const b = coercer('datetime', args[2]!.type)
    return ([p, x, y]) => {
      const per = period(p ?? '')
      const t1 = a(x ?? null)
      const t2 = b(y ?? null)
      if (per === null || typeof t1 !== 'bigint' || typeof t2 !== 'bigint') return null
      return datetimeDiff(per, t1, t2)
    }
  },
})

const datetimePartFn = defineScalar({
  name: 'datetime_part',
  aliases: ['datepart'],
  params: ['string', 'datetime'],
  result: 'int',
  bind(args) {
    const part = periodResolver('datetime_part', args[0]!, PARTS)
    const dt = coercer('datetime', args[1]!.type)
    return ([p, t]) => {
      const which = part(p ?? '')
      const x = dt(t ?? null)
      if (which === null || typeof x !== 'bigint') return null
      return datetimePart(which, x)
    }
  },
})

function zoneFunction(name: string, convert: (t: bigint, zone: string) => bigint | null): ScalarFunction {
  return defineScalar({
    name,
    params: ['datetime', 'string'],
    result: 'datetime',
    impl: ([t, z]) => convert(t as bigint, z as string),
    prepare: (args) => {
      const c = constantOf(args[1])
      if (typeof c === 'string' && zoneFormatter(c) === null) throw functionError(name, `unknown time zone '${c}'`)
    },
  })
}

const part = (name: string, f: (t: bigint) => KqlValue, type: KqlType = 'int', aliases?: readonly string[]): ScalarFunction =>
  defineScalar({ name, ...(aliases ? { aliases } : {}), params: ['datetime'], result: type, impl: ([t]) => f(t as bigint) })

export const datetimeFunctions: readonly ScalarFunction[] = [
  defineScalar({
    name: 'now',
    deterministic: false,
    params: ['timespan'],
    min: 0,
    result: 'datetime',
    impl: ([off], ctx: EvalContext) => inRange(ctx.now + ((off as bigint | undefined) ?? 0n)),
  }),
  defineScalar({
    name: 'ago',
    deterministic: false,
    params: ['timespan'],
    result: 'datetime',
    impl: ([span], ctx: EvalContext) => inRange(ctx.now - (span as bigint)),
  }),
  converter('todatetime', 'datetime', toDatetimeValue),
  converter('totimespan', 'timespan', toTimespanValue, ['totime']),
  datetimeAddFn,
  datetimeDiffFn,
  datetimePartFn,
  part('dayofweek', (t) => BigInt(weekday(t)) * TICKS_PER_DAY, 'timespan'),
  part('dayofmonth', (t) => dateTimeParts(t).day),
  part('dayofyear', dayOfYear),
  part('getmonth', (t) => dateTimeParts(t).month),
  part('monthofyear', (t) => dateTimeParts(t).month),
  part('getyear', (t) => dateTimeParts(t).year),
  part('hourofday', (t) => dateTimeParts(t).hour),
  part('week_of_year', isoWeek, 'int', ['weekofyear']),
  periodBoundary('startofday', 'day', false),
  periodBoundary('startofweek', 'week', false),
  periodBoundary('startofmonth', 'month', false),
  periodBoundary('startofyear', 'year', false),
  periodBoundary('endofday', 'day', true),
  periodBoundary('endofweek', 'week', true),
  periodBoundary('endofmonth', 'month', true),
  periodBoundary('endofyear', 'year', true),
  formatFunction('format_datetime', 'datetime'),
  formatFunction('format_timespan', 'timespan'),
  makeDatetime,
  makeTimespan,
  listTimezones,
  unixConverter('unixtime_seconds_todatetime', 1e7),
  unixConverter('unixtime_milliseconds_todatetime', 1e4),
  unixConverter('unixtime_microseconds_todatetime', 10),
  unixConverter('unixtime_nanoseconds_todatetime', 0.01),
  zoneFunction('datetime_utc_to_local', utcToLocal),
  zoneFunction('datetime_local_to_utc', localToUtc),
  binFunction('bin', ['floor']),
  binAt,
]
