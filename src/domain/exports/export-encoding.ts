/**
 * @module
 * How exported rows are written (issue 7, item 3). CSV follows RFC 4180: a header row, CRLF line
 * ends, fields quoted only when they hold a comma, a quote, CR or LF (quotes doubled); datetimes
 * ISO 8601 UTC, timespans `[d.]hh:mm:ss[.fffffff]`, dynamic values as JSON text, nulls as empty
 * fields. JSONL is one JSON object per line (LF), values in the query endpoints' wire form.
 *
 * Spreadsheet formula injection: a text cell whose first character is `=`, `+`, `-`, `@`, tab or
 * CR is opened by spreadsheet programs as a formula, so such string cells get a leading `'`.
 * Only text is guarded: cells of numeric, bool, datetime and timespan columns are written by the
 * server, never start a formula, and are left as they are (`-5` stays `-5`); a string cell that
 * is nothing but a number (`-5`, `+3.25`, `-1e3`) is a number to a spreadsheet, not a formula, so
 * it is left as it is too. Dynamic values are JSON text, which never starts with one of those
 * characters except a negative number. JSONL is not guarded (no spreadsheet reads it).
 */
import type { KqlType, KqlValue } from '../../kql/index.js'
import { civilFromDays, formatDateTime, formatTimespan, TICKS_PER_SECOND, toWireValue } from '../../kql/index.js'
import { stringifyExact } from '../../shared/exact-json.js'
import type { ExportFormat } from './export-request.js'

export interface ExportColumn {
  readonly name: string
  readonly type: KqlType
}

export interface RowEncoder {
  /** The text the file starts with: the CSV header row; empty for JSONL. */
  readonly header: string
  /** One row (values in column order; `undefined` = the row's connection lacks the column) as a line. */
  encode(values: readonly (KqlValue | undefined)[]): string
}

const FORMULA_START = /^[=+\-@\t\r]/
const PLAIN_NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/
const NEEDS_QUOTES = /[",\r\n]/

/** The formula-injection guard for one text cell (see the module comment). */
export function guardFormula(text: string): string {
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text
}

/** RFC 4180 field: quoted (quotes doubled) when it holds a comma, a quote, CR or LF. */
export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n))
let cachedDay = Number.NaN
let cachedPrefix = ''

/**
 * formatDateTime's text, faster for the common case (an export formats every row's timestamp):
 * one bigint division, the date part cached per day, the time of day in plain numbers.
 */
export function isoDateTime(ticks: bigint): string {
  if (ticks < 0n) return formatDateTime(ticks)
  const seconds = Number(ticks / TICKS_PER_SECOND)
  const fraction = Number(ticks - BigInt(seconds) * TICKS_PER_SECOND)
  const day = Math.floor(seconds / 86_400)
  if (day !== cachedDay) {
    const { year, month, day: dayOfMonth } = civilFromDays(day)
    cachedPrefix = `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(dayOfMonth)}T`
    cachedDay = day
  }
  const secondOfDay = seconds - day * 86_400
  const text = `${cachedPrefix}${pad2(Math.floor(secondOfDay / 3600))}:${pad2(Math.floor(secondOfDay / 60) % 60)}:${pad2(secondOfDay % 60)}`
  return fraction === 0 ? `${text}Z` : `${text}.${String(fraction).padStart(7, '0').replace(/0+$/, '')}Z`
}

function nonFinite(n: number): string {
  return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Infinity' : '-Infinity'
}

/** The CSV text of one value of a column type, before quoting. */
export function csvText(type: KqlType, value: KqlValue | undefined): string {
  if (value === null || value === undefined) return ''
  switch (type) {
    case 'string':
      return guardFormula(String(value))
    case 'guid':
      return String(value)
    case 'datetime':
      return typeof value === 'bigint' ? isoDateTime(value) : String(value)
    case 'timespan':
      return typeof value === 'bigint' ? formatTimespan(value) : String(value)
    case 'real':
    case 'decimal':
      return typeof value === 'number' && !Number.isFinite(value) ? nonFinite(value) : String(value)
    case 'dynamic':
      // exact longs inside the value keep every digit
      return stringifyExact(toWireValue('dynamic', value))
    default:
      return String(value)
  }
}

export function createRowEncoder(format: ExportFormat, columns: readonly ExportColumn[]): RowEncoder {
  if (format === 'csv') {
    return {
      header: `${columns.map((c) => csvField(c.name)).join(',')}\r\n`,
      encode(values) {
        let line = ''
        for (let i = 0; i < columns.length; i++) {
          if (i > 0) line += ','
          line += csvField(csvText(columns[i]!.type, values[i]))
        }
        return `${line}\r\n`
      },
    }
  }
  // The line is built as text: a column may be named `__proto__` (a valid KQL identifier), which
  // an object literal would swallow.
  const keys = columns.map((c) => `${JSON.stringify(c.name)}:`)
  return {
    header: '',
    encode(values) {
      let line = '{'
      for (let i = 0; i < columns.length; i++) {
        const value = values[i]
        const type = columns[i]!.type
        line +=
          (i > 0 ? ',' : '') +
          keys[i]! +
          (value === undefined || value === null
            ? 'null'
            : type === 'datetime' && typeof value === 'bigint'
              ? `"${isoDateTime(value)}"`
              : stringifyExact(toWireValue(type, value)))
      }
      return `${line}}\n`
    },
  }
}
