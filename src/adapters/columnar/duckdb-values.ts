/**
 * @module
 * KQL values into DuckDB tables (the columnar layout: DUCKDB_TYPES in the dialect). Rows are
 * appended through DuckDB's appender, column by declared type, so 64-bit integers and ticks stay
 * exact and NaN/±Infinity stay what they are.
 */
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  type DuckDBAppender,
  type DuckDBConnection,
  DuckDBDataChunk,
  type DuckDBType,
  type DuckDBValue,
  INTEGER,
  VARCHAR,
} from '@duckdb/node-api'
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

/** DuckDB's vector size: a data chunk holds at most this many rows. */
const CHUNK_ROWS = 2048

const CHUNK_TYPES: Readonly<Record<KqlType, DuckDBType>> = {
  bool: BOOLEAN,
  int: INTEGER,
  long: BIGINT,
  real: DOUBLE,
  decimal: DOUBLE,
  string: VARCHAR,
  datetime: BIGINT,
  timespan: BIGINT,
  guid: VARCHAR,
  dynamic: VARCHAR,
}

type Convert = (raw: unknown) => DuckDBValue

const toBigInt: Convert = (v) => (v === null || v === undefined ? null : typeof v === 'bigint' ? v : BigInt(v as number | string))

/**
 * A stored row-store value (better-sqlite3 with safe integers, or pg) to the DuckDB value of its
 * column, as decodeValue + appendValue would give, without building KQL values: the compactor
 * moves millions of rows. Dynamic stays the stored JSON text (exact, as written by ingest).
 */
const CONVERT: Readonly<Record<KqlType, Convert>> = {
  bool: (v) => (v === null || v === undefined ? null : typeof v === 'boolean' ? v : Number(v) !== 0),
  int: (v) => (v === null || v === undefined ? null : Number(v)),
  long: toBigInt,
  datetime: toBigInt,
  timespan: toBigInt,
  // SQLite keeps NaN as the text 'NaN'; PostgreSQL's parser gives numbers
  real: (v) => (v === null || v === undefined ? null : typeof v === 'number' ? v : Number(v)),
  decimal: (v) => (v === null || v === undefined ? null : typeof v === 'number' ? v : Number(v)),
  string: (v) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : String(v)),
  guid: (v) => (v === null || v === undefined ? null : String(v)),
  dynamic: (v) => (v === null || v === undefined ? null : String(v)),
}

/**
 * Appends stored rows read as arrays (`_rowid`, `_ingested_at`, then one value per column, in
 * that order) column-wise, one data chunk per 2,048 rows: numeric columns are copied into DuckDB
 * as whole vectors instead of one native call per value.
 */
export function appendStoredRows(appender: DuckDBAppender, columns: readonly KqlColumn[], rows: readonly (readonly unknown[])[]): void {
  const types = [BIGINT, BIGINT, ...columns.map((c) => CHUNK_TYPES[c.type])]
  const converts = [toBigInt, toBigInt, ...columns.map((c) => CONVERT[c.type])]
  for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
    const end = Math.min(rows.length, start + CHUNK_ROWS)
    const vectors: DuckDBValue[][] = converts.map((convert, c) => {
      const out = new Array<DuckDBValue>(end - start)
      for (let r = start; r < end; r++) out[r - start] = convert(rows[r]![c])
      return out
    })
    const chunk = DuckDBDataChunk.create(types, end - start)
    chunk.setColumns(vectors)
    appender.appendDataChunk(chunk)
  }
}
