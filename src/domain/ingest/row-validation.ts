/**
 * @module
 * Turns incoming rows (JSON objects, or CSV records of text) into typed KQL values for a
 * connection's declared columns, with a message naming the row and column for anything that does
 * not fit. Pure; used by push ingest, the CLI import and the pull connectors alike.
 */
import type { KqlType, KqlValue } from '../../kql/index.js'
import { longFrom, longFromText, parseDateTime, parseDynamicJson, parseTimespan } from '../../kql/index.js'
import { type FlatRowLayout, type FlatRowShape, NO_FIT, readFlatRows } from '../../shared/strict-json-rows.js'
import type { ColumnConfig } from '../workspace-config/index.js'

export type TypedRow = KqlValue[]

const INT32_MIN = -(2 ** 31)
const INT32_MAX = 2 ** 31 - 1
const GUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

/** Why one value does not fit its column (without the row/column prefix). */
class CellError extends Error {}

function describe(value: unknown): string {
  const text =
    typeof value === 'bigint'
      ? String(value)
      : typeof value === 'string'
        ? JSON.stringify(value)
        : typeof value === 'object'
          ? Array.isArray(value)
            ? 'an array'
            : 'an object'
          : String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/**
 * One value to its column type. `fromText` is set for CSV cells, where every value arrives as text
 * and the empty string means null.
 */
export function toColumnValue(type: KqlType, value: unknown, fromText = false): KqlValue {
  if (value === null || value === undefined || (fromText && value === '' && type !== 'string')) return type === 'string' ? '' : null
  switch (type) {
    case 'string':
      if (typeof value === 'string') {
        if (value.includes('\u0000')) throw new CellError('text may not contain the NUL character (\\u0000)')
        return value
      }
      throw new CellError(`expected a string, got ${describe(value)}`)
    case 'bool':
      if (typeof value === 'boolean') return value
      if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true'
      if (fromText && (value === '1' || value === '0')) return value === '1'
      throw new CellError(`expected true or false, got ${describe(value)}`)
    case 'long': {
      // exact 64-bit: bigints from the body parser, integer text of any length within int64
      const n = typeof value === 'bigint' ? longFrom(value) : typeof value === 'string' ? longFromText(value) : longFrom(value)
      if (typeof value === 'number' && !Number.isSafeInteger(value))
        throw new CellError(
          Number.isInteger(value)
            ? `${describe(value)} is beyond the exactly representable range of a JSON number (±2^53); send it as a string of digits`
            : `expected a whole number, got ${describe(value)}`,
        )
      if (n === null) {
        const digits = typeof value === 'string' && /^[+-]?\d+$/.test(value.trim())
        throw new CellError(digits ? `${describe(value)} does not fit a long (64-bit)` : `expected a whole number, got ${describe(value)}`)
      }
      return n
    }
    case 'int': {
      if (typeof value === 'bigint') throw new CellError(`${describe(value)} does not fit an int (32-bit)`)
      const n =
        typeof value === 'number' ? value : typeof value === 'string' && /^[+-]?\d+$/.test(value.trim()) ? Number(value.trim()) : NaN
      if (!Number.isInteger(n)) throw new CellError(`expected a whole number, got ${describe(value)}`)
      if (!Number.isSafeInteger(n)) throw new CellError(`${describe(value)} is beyond the exactly representable range (±2^53)`)
      if (type === 'int' && (n < INT32_MIN || n > INT32_MAX)) throw new CellError(`${describe(value)} does not fit an int (32-bit)`)
      return n
    }
    case 'real':
    case 'decimal': {
      if (typeof value === 'number') return value
      // an integer beyond 2^53 from the exact ingest parser: the nearest double, as for any JSON number
      if (typeof value === 'bigint') return Number(value)
      if (typeof value === 'string') {
        const s = value.trim()
        if (/^(nan|[+-]?infinity)$/i.test(s)) return s.toLowerCase() === 'nan' ? NaN : s.startsWith('-') ? -Infinity : Infinity
        if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Number(s)
      }
      throw new CellError(`expected a number, got ${describe(value)}`)
    }
    case 'datetime': {
      const ticks = typeof value === 'string' ? parseDateTime(value) : null
      if (ticks === null) throw new CellError(`expected an ISO 8601 datetime like "2026-01-31T12:00:00Z", got ${describe(value)}`)
      return ticks
    }
    case 'timespan': {
      const ticks = typeof value === 'string' ? parseTimespan(value) : null
      if (ticks === null) throw new CellError(`expected a timespan like "01:30:00" or "90m", got ${describe(value)}`)
      return ticks
    }
    case 'guid':
      if (typeof value === 'string' && GUID_RE.test(value.trim())) return value.trim().toLowerCase()
      throw new CellError(`expected a GUID like "74be27de-1e4e-49d9-b579-fe0b331d3642", got ${describe(value)}`)
    case 'dynamic':
      if (fromText && typeof value === 'string') {
        try {
          // an integer beyond 2^53 in the text stays an exact long
          return parseDynamicJson(value)
        } catch {
          return value
        }
      }
      return value as KqlValue
  }
}

export interface RowProblem {
  /** 1-based position of the row in the batch (or line in a file). */
  readonly row: number
  readonly message: string
}

/**
 * Types one row for the columns (declaration order). Unknown properties and a missing or null
 * `timestamp` are problems; missing other columns are null ("" for strings).
 */
export function typeRow(
  columns: readonly ColumnConfig[],
  input: unknown,
  options: { fromText?: boolean; knownColumns?: ReadonlySet<string> } = {},
): TypedRow {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new CellError(`expected an object of column values, got ${describe(input)}`)
  }
  const record = input as Record<string, unknown>
  const declared = options.knownColumns ?? new Set(columns.map((c) => c.name))
  for (const key of Object.keys(record)) {
    if (!declared.has(key))
      throw new CellError(`column "${key}" is not declared for this connection (declared: ${columns.map((c) => c.name).join(', ')})`)
  }
  return columns.map((column) => {
    try {
      // own members only: a row without a column named `constructor` or `toString` has no value for it
      const value = toColumnValue(column.type, Object.hasOwn(record, column.name) ? record[column.name] : undefined, options.fromText)
      if (column.name === 'timestamp' && value === null) throw new CellError('the timestamp is required')
      return value
    } catch (error) {
      if (error instanceof CellError) throw new CellError(`column ${column.name}: ${error.message}`)
      throw error
    }
  })
}

/** Types every row; returns the rows and the problems (row number and message) of those that fail. */
export function typeRows(
  columns: readonly ColumnConfig[],
  inputs: readonly unknown[],
  options: { fromText?: boolean; firstRowNumber?: number } = {},
): { rows: TypedRow[]; problems: RowProblem[]; accepted: number[] } {
  const knownColumns = new Set(columns.map((c) => c.name))
  const rows: TypedRow[] = []
  const problems: RowProblem[] = []
  const accepted: number[] = []
  const first = options.firstRowNumber ?? 1
  inputs.forEach((input, index) => {
    try {
      rows.push(typeRow(columns, input, { knownColumns, ...(options.fromText ? { fromText: true } : {}) }))
      accepted.push(index)
    } catch (error) {
      if (!(error instanceof CellError)) throw error
      problems.push({ row: first + index, message: error.message })
    }
  })
  return { rows, problems, accepted }
}

/**
 * The columns as the one-pass body reader sees them: per column, typeRow's rule for one value
 * (toColumnValue, and the required timestamp) with NO_FIT where typeRow would report a problem.
 * A row without a column gets what typeRow gives a missing one.
 */
function flatRowShape(columns: readonly ColumnConfig[]): FlatRowShape {
  const cells = columns.map((column) => {
    const type = column.type
    const required = column.name === 'timestamp'
    const general = (value: unknown): unknown => {
      try {
        const typed = toColumnValue(type, value)
        return required && typed === null ? NO_FIT : typed
      } catch (error) {
        if (error instanceof CellError) return NO_FIT
        throw error
      }
    }
    // The most common value of each type, typed as toColumnValue would, without its switch and
    // try; everything else goes through toColumnValue itself.
    switch (type) {
      case 'string':
        return (value: unknown) => (typeof value === 'string' && !value.includes('\u0000') ? value : general(value))
      case 'real':
        return (value: unknown) => (typeof value === 'number' ? value : general(value))
      case 'long':
        // 0 and -0 go through longFrom, which gives -0 as 0
        return (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value !== 0 ? value : general(value))
      case 'datetime':
        return (value: unknown) => (typeof value === 'string' ? (parseDateTime(value) ?? NO_FIT) : general(value))
      default:
        return general
    }
  })
  const absent = columns.map((_, k) => cells[k]!(undefined))
  return { names: columns.map((c) => c.name), cells, absent }
}

/**
 * Push ingest's fast path: the rows of a JSON array (`array`) or NDJSON (`lines`) body typed for
 * the columns in one pass over its bytes. Answers undefined for any body it does not cover or any
 * row that does not fit; the caller then parses the body the reference way and calls typeRows,
 * which accepts it or words the problem. Where it answers, it answers what that path would.
 */
export function readTypedRows(bytes: Uint8Array, layout: FlatRowLayout, columns: readonly ColumnConfig[]): TypedRow[] | undefined {
  return readFlatRows(bytes, layout, flatRowShape(columns)) as TypedRow[] | undefined
}
