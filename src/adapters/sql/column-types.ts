/**
 * @module
 * How each KQL type is stored in a connection table, per dialect. Datetimes and timespans are
 * 64-bit integers of 100 ns ticks (exact to Kusto's precision in both databases); dynamic values
 * are JSON text (PostgreSQL jsonb would reorder keys); strings are never NULL (Kusto has no null
 * string).
 */
import type { KqlType } from '../../kql/index.js'
import type { Dialect } from './sql-db.js'

const SQLITE: Record<KqlType, string> = {
  bool: 'INTEGER',
  int: 'INTEGER',
  long: 'INTEGER',
  real: 'REAL',
  decimal: 'REAL',
  string: "TEXT NOT NULL DEFAULT ''",
  datetime: 'INTEGER',
  timespan: 'INTEGER',
  guid: 'TEXT',
  dynamic: 'TEXT',
}

const POSTGRES: Record<KqlType, string> = {
  bool: 'BOOLEAN',
  int: 'INTEGER',
  long: 'BIGINT',
  real: 'DOUBLE PRECISION',
  decimal: 'DOUBLE PRECISION',
  string: "TEXT NOT NULL DEFAULT ''",
  datetime: 'BIGINT',
  timespan: 'BIGINT',
  guid: 'TEXT',
  dynamic: 'TEXT',
}

export function columnDdlType(dialect: Dialect, type: KqlType): string {
  return (dialect === 'sqlite' ? SQLITE : POSTGRES)[type]
}
