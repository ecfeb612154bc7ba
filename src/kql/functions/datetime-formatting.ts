/**
 * @module
 * Datetime and timespan text (split out of datetime-functions.ts, issue 19 item 6):
 * format_datetime()/format_timespan() with .NET's custom format specifiers, and IANA time zones
 * through Intl for datetime_utc_to_local()/datetime_local_to_utc().
 */
import {
  dateTimeParts,
  daysFromCivil,
  floorDiv,
  TICKS_PER_DAY,
  TICKS_PER_HOUR,
  TICKS_PER_MILLISECOND,
  TICKS_PER_MINUTE,
  TICKS_PER_SECOND,
} from '../values.js'
import { inRange, weekday } from './datetime-calendar.js'
import { constantOf, defineScalar } from './function-definitions.js'
import type { ScalarFunction } from './function-types.js'

// ---------------------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------------------

type FormatToken = { readonly kind: 'lit'; readonly text: string } | { readonly kind: 'spec'; readonly ch: string; readonly n: number }

const DATETIME_SPEC_CHARS = 'dfFhHmMsyt'
const TIMESPAN_SPEC_CHARS = 'dfFhHms'

function tokenize(format: string, specChars: string): FormatToken[] {
  const out: FormatToken[] = []
  let i = 0
  while (i < format.length) {
    const ch = format[i]!
    if (ch === '\\' && i + 1 < format.length) {
      out.push({ kind: 'lit', text: format[i + 1]! })
      i += 2
      continue
    }
    if (ch === "'" || ch === '"') {
      const end = format.indexOf(ch, i + 1)
      const stop = end < 0 ? format.length : end
      out.push({ kind: 'lit', text: format.slice(i + 1, stop) })
      i = stop + 1
      continue
    }
    if (specChars.includes(ch)) {
      let j = i
      while (j < format.length && format[j] === ch) j++
      out.push({ kind: 'spec', ch, n: j - i })
      i = j
      continue
    }
    out.push({ kind: 'lit', text: ch })
    i++
  }
  return out
}

const pad = (n: number | bigint, width: number): string => String(n).padStart(width, '0')

function fraction(fractionTicks: number, n: number, trim: boolean): string {
  const digits = pad(fractionTicks, 7).slice(0, Math.min(n, 7))
  if (!trim) return digits
  return digits.replace(/0+$/, '')
}

const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
]
const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

function formatDatetimeWith(tokens: readonly FormatToken[], t: bigint): string {
  const p = dateTimeParts(t)
  let out = ''
  for (const tok of tokens) {
    if (tok.kind === 'lit') {
      out += tok.text
      continue
    }
    const n = tok.n
    switch (tok.ch) {
      case 'd':
        out += n === 1 ? String(p.day) : n === 2 ? pad(p.day, 2) : n === 3 ? DAY_NAMES[weekday(t)]!.slice(0, 3) : DAY_NAMES[weekday(t)]!
        break
      case 'f':
        out += fraction(p.fractionTicks, n, false)
        break
      case 'F': {
        out += fraction(p.fractionTicks, n, true)
        break
      }
      case 'h': {
        const h12 = p.hour % 12 === 0 ? 12 : p.hour % 12
        out += n === 1 ? String(h12) : pad(h12, 2)
        break
      }
      case 'H':
        out += n === 1 ? String(p.hour) : pad(p.hour, 2)
        break
      case 'm':
        out += n === 1 ? String(p.minute) : pad(p.minute, 2)
        break
      case 'M':
        out +=
          n === 1
            ? String(p.month)
            : n === 2
              ? pad(p.month, 2)
              : n === 3
                ? MONTH_NAMES[p.month - 1]!.slice(0, 3)
                : MONTH_NAMES[p.month - 1]!
        break
      case 's':
        out += n === 1 ? String(p.second) : pad(p.second, 2)
        break
      case 'y':
        out += n === 1 ? String(p.year % 100) : n === 2 ? pad(p.year % 100, 2) : pad(p.year, n)
        break
      case 't':
        out += n === 1 ? (p.hour < 12 ? 'A' : 'P') : p.hour < 12 ? 'AM' : 'PM'
        break
    }
  }
  return out
}

function formatTimespanWith(tokens: readonly FormatToken[], ticks: bigint): string {
  const abs = ticks < 0n ? -ticks : ticks
  const days = abs / TICKS_PER_DAY
  const rem = abs % TICKS_PER_DAY
  const hours = Number(rem / TICKS_PER_HOUR)
  const minutes = Number((rem % TICKS_PER_HOUR) / TICKS_PER_MINUTE)
  const seconds = Number((rem % TICKS_PER_MINUTE) / TICKS_PER_SECOND)
  const frac = Number(rem % TICKS_PER_SECOND)
  let out = ticks < 0n ? '-' : ''
  for (const tok of tokens) {
    if (tok.kind === 'lit') {
      out += tok.text
      continue
    }
    const n = tok.n
    switch (tok.ch) {
      case 'd':
        out += pad(days, n)
        break
      case 'h':
      case 'H':
        out += n === 1 ? String(hours) : pad(hours, 2)
        break
      case 'm':
        out += n === 1 ? String(minutes) : pad(minutes, 2)
        break
      case 's':
        out += n === 1 ? String(seconds) : pad(seconds, 2)
        break
      case 'f':
        out += fraction(frac, n, false)
        break
      case 'F':
        out += fraction(frac, n, true)
        break
    }
  }
  return out
}

/** Binds a format-string function: a constant format is tokenized once. */
export function formatFunction(name: string, valueKind: 'datetime' | 'timespan'): ScalarFunction {
  const chars = valueKind === 'datetime' ? DATETIME_SPEC_CHARS : TIMESPAN_SPEC_CHARS
  const render = valueKind === 'datetime' ? formatDatetimeWith : formatTimespanWith
  return defineScalar({
    name,
    params: [valueKind, 'string'],
    result: 'string',
    impl: ([v, f]) => render(tokenize(f as string, chars), v as bigint),
    prepare: (args) => {
      const c = constantOf(args[1])
      if (typeof c !== 'string') return
      const tokens = tokenize(c, chars)
      return ([v]) => render(tokens, v as bigint)
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Time zones (IANA names through Intl)
// ---------------------------------------------------------------------------------------------

const zoneFormatters = new Map<string, Intl.DateTimeFormat | null>()

export function zoneFormatter(zone: string): Intl.DateTimeFormat | null {
  const key = zone.trim()
  let f = zoneFormatters.get(key)
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: key,
        hourCycle: 'h23',
        era: 'short',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      })
    } catch {
      f = null
    }
    zoneFormatters.set(key, f)
  }
  return f
}

/** The zone's UTC offset, in ticks, at a UTC instant. */
function zoneOffset(f: Intl.DateTimeFormat, utc: bigint): bigint {
  const ms = Number(floorDiv(utc, TICKS_PER_SECOND)) * 1000
  const parts: Record<string, string> = {}
  for (const p of f.formatToParts(new Date(ms))) parts[p.type] = p.value
  let year = Number(parts['year'])
  if (parts['era'] === 'BC' || parts['era'] === 'B') year = 1 - year
  const wall =
    BigInt(daysFromCivil(year, Number(parts['month']), Number(parts['day']))) * TICKS_PER_DAY +
    BigInt(Number(parts['hour']) * 3600 + Number(parts['minute']) * 60 + Number(parts['second'])) * TICKS_PER_SECOND
  return wall - BigInt(ms) * TICKS_PER_MILLISECOND
}

export function utcToLocal(t: bigint, zone: string): bigint | null {
  const f = zoneFormatter(zone)
  if (!f) return null
  return inRange(t + zoneOffset(f, t))
}

/**
 * Local wall time → UTC. A valid local time maps through its own offset (the earlier one when
 * the clock falls back); a skipped local time (spring forward) uses the offset after the change,
 * as Kusto does (2022-03-27 02:00 Europe/Brussels → 00:00 UTC).
 */
export function localToUtc(t: bigint, zone: string): bigint | null {
  const f = zoneFormatter(zone)
  if (!f) return null
  const before = zoneOffset(f, t - TICKS_PER_DAY)
  const after = zoneOffset(f, t + TICKS_PER_DAY)
  for (const off of before === after ? [before] : [before, after]) {
    if (zoneOffset(f, t - off) === off) return inRange(t - off)
  }
  return inRange(t - after)
}
