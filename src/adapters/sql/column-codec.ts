/**
 * @module
 * Typed KQL values to database parameters and back, per engine (the storage layout is the
 * engine's `columnTypes`, sql-db.ts). Reads of data tables must return 64-bit integers exactly (datetime ticks exceed
 * 2^53): SQLite reads use safe integers, PostgreSQL int8 arrives as bigint when large.
 */
import { type KqlColumn, type KqlType, type KqlValue, longFrom, parseDynamicJson } from '../../kql/index.js'
import { stringifyExact } from '../../shared/exact-json.js'
import type { SqlEngine } from './sql-db.js'

export function encodeValue(engine: SqlEngine, type: KqlType, value: KqlValue): unknown {
  if (value === null || value === undefined) return type === 'string' ? '' : null
  switch (type) {
    case 'bool':
      return engine.bindsBooleans ? Boolean(value) : value ? 1 : 0
    case 'datetime':
    case 'timespan':
      return engine.bindsBigints ? BigInt(value as bigint) : String(value)
    case 'dynamic':
      // an ingested integer beyond 2^53 keeps its digits in the stored JSON text
      return stringifyExact(value)
    case 'long':
      return typeof value === 'bigint' && !engine.bindsBigints ? String(value) : value
    case 'real':
    case 'decimal':
      // PostgreSQL takes the text forms. SQLite has no NaN (a bound NaN is stored as NULL): it is
      // stored as the text 'NaN' (a REAL column keeps text it cannot convert), read back by
      // decodeValue; ±Infinity are REAL values there.
      if (typeof value === 'number' && Number.isNaN(value)) return 'NaN'
      if (engine.infinityAsText && typeof value === 'number' && !Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity'
      return value
    default:
      return value
  }
}

/** A 64-bit integer column's parameter (a bookkeeping column, not a KQL value): exact on every engine. */
export function encodeInt64(engine: SqlEngine, value: bigint | null): unknown {
  return value !== null && !engine.bindsBigints ? String(value) : value
}

/** Rows as a driver returned them (arrays in select-list order), decoded by the columns' types. */
export function decodeRows(rows: readonly (readonly unknown[])[], columns: readonly KqlColumn[]): KqlValue[][] {
  const types = columns.map((c) => c.type)
  const width = types.length
  const out = new Array<KqlValue[]>(rows.length)
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!
    const decoded = new Array<KqlValue>(width)
    for (let i = 0; i < width; i++) decoded[i] = decodeValue(types[i]!, row[i])
    out[r] = decoded
  }
  return out
}

export function decodeValue(type: KqlType, raw: unknown): KqlValue {
  if (raw === null || raw === undefined) return type === 'string' ? '' : null
  switch (type) {
    case 'bool':
      return typeof raw === 'boolean' ? raw : Number(raw) !== 0
    case 'int':
      return Number(raw)
    case 'long':
      // exact 64-bit: SQLite reads are safe integers (bigint), PostgreSQL int8 is a number or bigint
      return longFrom(raw)
    case 'real':
    case 'decimal':
      // 'NaN' text (SQLite), 'NaN'/'Infinity' (PostgreSQL text forms)
      return typeof raw === 'number' ? raw : Number(raw)
    case 'datetime':
    case 'timespan':
      return typeof raw === 'bigint' ? raw : BigInt(raw as number | string)
    case 'dynamic':
      // integers beyond 2^53 in the stored text come back exact (kql/dynamic-json.ts)
      return parseDynamicJson(String(raw))
    default:
      return String(raw)
  }
}
