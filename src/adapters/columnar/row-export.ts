/**
 * @module
 * Row-store rows into DuckDB by way of CSV (docs/design/columnar.md, "Compaction path"): each page
 * of rows is formatted into CSV lines by the row-store database itself (the engine's `csvPage`
 * capability: SQLite `format()`, PostgreSQL text output, in sqlite-engine.ts and
 * postgres-engine.ts) and aggregated into one text value, appended to a staging file that
 * DuckDB then reads with `read_csv` on its own threads. No JavaScript value is made per row or per
 * field: reading the rows as arrays and appending them as vectors cost 4.1 µs of CPU per row of
 * the benchmark's shape (2.5 reading, 1.6 converting and appending), this path about 1 µs per row
 * in the database plus DuckDB's parse.
 *
 * Values stay exact: integers (ticks, longs) are printed as integer text; doubles as the shortest
 * text that reads back to the same double (SQLite 3.53 and PostgreSQL ≥ 12 with
 * extra_float_digits ≥ 1), NaN and ±Infinity as words DuckDB reads; strings are quoted with inner
 * quotes doubled (a missing string is ""); a NULL is an empty unquoted field (read as NULL, since
 * `allow_quoted_nulls` is off).
 *
 * The pages are read by a worker thread with a connection of its own (columnar-worker.ts): on
 * SQLite for the compactor and a query's tail, on PostgreSQL for the compactor (a query's tail
 * there goes through the server's pool, queries in parallel); the formatting runs in the
 * database (on PostgreSQL, its server).
 */
import { DUCKDB_TYPES, type KqlColumn } from '../../kql/index.js'
import { type CsvPageFormat, quoteIdent, type SqlDb } from '../sql/sql-db.js'
import type { ColumnarWorker, PageSummary } from './columnar-worker-client.js'
import { readPageThrough } from './page-file.js'

/** Rows per page (one statement, one text value of a few MB). */
export const EXPORT_PAGE_ROWS = 50_000

/** Runs a page statement (`sql` with `?` placeholders) and appends its CSV text (plus a newline) to `file`. */
export type PageReader = (sql: string, params: readonly unknown[], file: string) => Promise<PageSummary>

export interface ExportResult {
  readonly count: number
  /** The lowest `_rowid` of the keyset pages (undefined when they held none). */
  readonly first: number | undefined
  /** The highest `_rowid` read by the keyset pages (the `after` given when none). */
  readonly last: number
  /** The lowest `_ingested_at` (ms) of the rows (undefined when none). */
  readonly oldest: number | undefined
  /** Bytes appended to the file. */
  readonly bytes: number
}

export interface RowExporter {
  /**
   * Appends to `file` the rows with `_rowid` in (after, after + …] up to `limit` rows, in keyset
   * pages; first, when given, the rows `extra` selects (one statement, few rows).
   */
  exportRows(
    table: { readonly sqlName: string; readonly columns: readonly KqlColumn[] },
    file: string,
    after: number,
    limit: number,
    extra?: { readonly where: string; readonly params: readonly unknown[] },
  ): Promise<ExportResult>
  close(): Promise<void>
}

/** A page statement: count, lowest and highest `_rowid`, lowest `_ingested_at`, and the CSV text of the rows `where` selects. */
export function pageSql(
  format: CsvPageFormat,
  table: { readonly sqlName: string; readonly columns: readonly KqlColumn[] },
  where: string,
): string {
  return `SELECT count(*), min(_rowid), max(_rowid), min(_ingested_at), ${format.aggregate} FROM (SELECT _rowid, _ingested_at, ${format.line(table.columns)} AS line FROM ${quoteIdent(table.sqlName)} WHERE ${where}) page`
}

/** DuckDB's reader of a staging file: the column types named, nothing sniffed. */
export function readCsvSql(file: string, columns: readonly KqlColumn[]): string {
  const types = [
    `'_rowid': 'BIGINT'`,
    `'_ingested_at': 'BIGINT'`,
    ...columns.map((c) => `${sqlString(c.name)}: '${DUCKDB_TYPES[c.type]}'`),
  ].join(', ')
  // a row may be as long as an ingest body (32 MB; DuckDB's default stops at 2 MB): the buffer
  // holds two such lines (DuckDB's default buffer, 16 lines, would take 640 MB)
  return `read_csv(${sqlString(file)}, header = false, auto_detect = false, delim = ',', quote = '"', escape = '"', allow_quoted_nulls = false, max_line_size = 40000000, buffer_size = 80000000, columns = {${types}})`
}

const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`

/** The page loop every exporter shares. */
function exporter(format: CsvPageFormat, read: PageReader, close: () => Promise<void>): RowExporter {
  return {
    async exportRows(table, file, after, limit, extra) {
      let count = 0
      let first: number | undefined
      let oldest: number | undefined
      let bytes = 0
      let cursor = after
      const note = (page: PageSummary): void => {
        if (page[3] !== null) oldest = Math.min(oldest ?? page[3], page[3])
        bytes += page[4]
      }
      if (extra) {
        const page = await read(pageSql(format, table, extra.where), extra.params, file)
        count += page[0]
        note(page)
      }
      const keyset = pageSql(format, table, '_rowid > ? ORDER BY _rowid LIMIT ?')
      let keysetRows = 0
      while (keysetRows < limit) {
        const want = Math.min(EXPORT_PAGE_ROWS, limit - keysetRows)
        const page = await read(keyset, [cursor, want], file)
        const [n, lo, hi] = page
        if (n === 0) break
        note(page)
        first ??= lo ?? undefined
        cursor = hi!
        keysetRows += n
        if (n < want) break
      }
      return { count: count + keysetRows, first, last: cursor, oldest, bytes }
    },
    close,
  }
}

/** Pages read through the main database handle (PostgreSQL query tails; SQLite without a file, in tests). */
export function createDbRowExporter(db: SqlDb): RowExporter {
  return exporter(
    db.engine.csvPage,
    (sql, params, file) => readPageThrough(db, sql, params, file),
    async () => {},
  )
}

/**
 * Pages read by a columnar worker thread with a connection of its own (SQLite: read-only to the
 * file; PostgreSQL: one of its own): neither the read nor the text passes through the event loop.
 */
export function createWorkerRowExporter(worker: ColumnarWorker, format: CsvPageFormat): RowExporter {
  return exporter(
    format,
    (sql, params, file) => worker.readPage(sql, params, file),
    () => worker.close(),
  )
}
