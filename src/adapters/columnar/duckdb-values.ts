/**
 * @module
 * KQL values into DuckDB tables (the columnar layout: DUCKDB_TYPES in the dialect). Rows are
 * appended through DuckDB's appender, column by declared type, so 64-bit integers and ticks stay
 * exact and NaN/±Infinity stay what they are.
 */
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api'
import { DUCKDB_TYPES, type KqlColumn, type KqlType, type KqlValue } from '../../kql/index.js'
import { stringifyExact } from '../../shared/exact-json.js'

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`

/** Column definitions of a columnar table: the hidden `_rowid` and `_ingested_at` (BIGINT) first, then the data columns. */
export function duckdbColumnDefs(columns: readonly KqlColumn[]): string {
  return ['"_rowid" BIGINT', '"_ingested_at" BIGINT', ...columns.map((c) => `${quote(c.name)} ${DUCKDB_TYPES[c.type]}`)].join(', ')
}

/** A row as the columnar tier moves it: hidden columns, then one value per declared column. */
export interface ColumnarRow {
  readonly rowId: number | bigint
  readonly ingestedAt: number | bigint | null
  readonly values: readonly KqlValue[]
}

/** Appends one value of a KQL type (strings are never null: a missing one is ""). */
export function appendValue(appender: DuckDBAppender, type: KqlType, value: KqlValue | undefined): void {
  if (value === null || value === undefined) {
    if (type === 'string') appender.appendVarchar('')
    else appender.appendNull()
    return
  }
  switch (type) {
    case 'bool':
      appender.appendBoolean(Boolean(value))
      return
    case 'int':
      appender.appendInteger(Number(value))
      return
    case 'long':
    case 'datetime':
    case 'timespan':
      appender.appendBigInt(BigInt(value as number | bigint))
      return
    case 'real':
    case 'decimal':
      appender.appendDouble(Number(value))
      return
    case 'dynamic':
      // a long beyond 2^53 inside the value keeps every digit (decodeValue reads it back exact)
      appender.appendVarchar(stringifyExact(value))
      return
    default:
      appender.appendVarchar(String(value))
  }
}

/** Appends rows (`_rowid` first, then one value per column) to an existing DuckDB table. */
export async function appendRows(
  connection: DuckDBConnection,
  table: string,
  columns: readonly KqlColumn[],
  rows: Iterable<ColumnarRow>,
): Promise<void> {
  const appender = await connection.createAppender(table)
  try {
    for (const row of rows) {
      appender.appendBigInt(BigInt(row.rowId))
      if (row.ingestedAt === null) appender.appendNull()
      else appender.appendBigInt(BigInt(row.ingestedAt))
      for (let i = 0; i < columns.length; i++) appendValue(appender, columns[i]!.type, row.values[i])
      appender.endRow()
    }
    appender.flushSync()
  } finally {
    appender.closeSync()
  }
}
