/**
 * @module
 * Typed KQL values to database parameters and back, per dialect (the storage layout is in
 * column-types.ts). Reads of data tables must return 64-bit integers exactly (datetime ticks exceed
 * 2^53): SQLite reads use safe integers, PostgreSQL int8 arrives as bigint when large.
 */
import { type KqlType, type KqlValue, longFrom } from '../kql/index.js'
import { stringifyExact } from '../shared/exact-json.js'
import type { Dialect } from './sql-db.js'

export function encodeValue(dialect: Dialect, type: KqlType, value: KqlValue): unknown {
  if (value === null || value === undefined) return type === 'string' ? '' : null
  switch (type) {
    case 'bool':
      return dialect === 'sqlite' ? (value ? 1 : 0) : Boolean(value)
    case 'datetime':
    case 'timespan':
      return dialect === 'sqlite' ? BigInt(value as bigint) : String(value)
    case 'dynamic':
      // an ingested integer beyond 2^53 keeps its digits in the stored JSON text
      return stringifyExact(value)
    case 'long':
      return typeof value === 'bigint' && dialect === 'postgres' ? String(value) : value
    case 'real':
    case 'decimal':
      // SQLite has no NaN (it would store NULL); PostgreSQL takes the text forms.
      if (dialect === 'postgres' && typeof value === 'number' && !Number.isFinite(value))
        return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity'
      return value
    default:
      return value
  }
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
      return typeof raw === 'number' ? raw : Number(raw)
    case 'datetime':
    case 'timespan':
      return typeof raw === 'bigint' ? raw : BigInt(raw as number | string)
    case 'dynamic':
      return JSON.parse(String(raw)) as KqlValue
    default:
      return String(raw)
  }
}
