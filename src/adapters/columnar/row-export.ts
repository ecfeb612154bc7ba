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
 * On SQLite the pages are read by a worker thread with a read-only connection of its own
 * (row-export-worker.ts), so a compaction or a large tail never blocks the event loop; on
 * PostgreSQL the formatting runs in the database server.
 */
import { appendFileSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import { DUCKDB_TYPES, type KqlColumn } from '../../kql/index.js'
import { type CsvPageFormat, quoteIdent, type SqlDb } from '../sql/sql-db.js'
import { sqliteEngine } from '../sqlite/sqlite-engine.js'

/** Rows per page (one statement, one text value of a few MB). */
export const EXPORT_PAGE_ROWS = 50_000

/** One page: how many rows, their lowest and highest `_rowid`, and the CSV text (no trailing newline). */
export type ExportedPage = readonly [count: number, first: number | null, last: number | null, csv: string | Uint8Array | null]

/** Runs a page statement (`sql` with `?` placeholders) and appends its CSV text (plus a newline) to `file`. */
export type PageReader = (sql: string, params: readonly unknown[], file: string) => Promise<readonly [number, number | null, number | null]>

export interface ExportResult {
  readonly count: number
  /** The lowest `_rowid` of the keyset pages (undefined when they held none). */
  readonly first: number | undefined
  /** The highest `_rowid` read by the keyset pages (the `after` given when none). */
  readonly last: number
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

/** A page statement: count, lowest and highest `_rowid`, and the CSV text of the rows `where` selects. */
export function pageSql(
  format: CsvPageFormat,
  table: { readonly sqlName: string; readonly columns: readonly KqlColumn[] },
  where: string,
): string {
  return `SELECT count(*), min(_rowid), max(_rowid), ${format.aggregate} FROM (SELECT _rowid, ${format.line(table.columns)} AS line FROM ${quoteIdent(table.sqlName)} WHERE ${where}) page`
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

function appendPage(file: string, csv: string | Uint8Array | null): void {
  if (csv === null || csv.length === 0) return
  appendFileSync(file, csv)
  appendFileSync(file, '\n')
}

/** The page loop every exporter shares. */
function exporter(format: CsvPageFormat, read: PageReader, close: () => Promise<void>): RowExporter {
  return {
    async exportRows(table, file, after, limit, extra) {
      let count = 0
      let first: number | undefined
      let cursor = after
      if (extra) count += (await read(pageSql(format, table, extra.where), extra.params, file))[0]
      const keyset = pageSql(format, table, '_rowid > ? ORDER BY _rowid LIMIT ?')
      let keysetRows = 0
      while (keysetRows < limit) {
        const want = Math.min(EXPORT_PAGE_ROWS, limit - keysetRows)
        const [n, lo, hi] = await read(keyset, [cursor, want], file)
        if (n === 0) break
        first ??= lo ?? undefined
        cursor = hi!
        keysetRows += n
        if (n < want) break
      }
      return { count: count + keysetRows, first, last: cursor }
    },
    close,
  }
}

/** Pages read through the main database handle (PostgreSQL; SQLite without a file, in tests). */
export function createDbRowExporter(db: SqlDb): RowExporter {
  const read: PageReader = async (sql, params, file) => {
    const run = async (handle: SqlDb) => (await handle.all<ExportedPage>(sql, params, { arrays: true }))[0]!
    const setup = db.engine.csvPage.setup
    const page =
      setup === undefined
        ? await run(db)
        : await db.transaction(async (tx) => {
            await tx.run(setup)
            return run(tx)
          })
    appendPage(file, page[3])
    return [Number(page[0]), page[1] === null ? null : Number(page[1]), page[2] === null ? null : Number(page[2])]
  }
  return exporter(db.engine.csvPage, read, async () => {})
}

// Under tsx (tests, `npm run dev`) this module is TypeScript and the worker needs tsx registered
// in its own thread; built, both are JavaScript (as query-pool.ts starts its workers).
const FROM_SOURCE = import.meta.url.endsWith('.ts')
const WORKER_URL = new URL(`./row-export-worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url)

/** Replies of the SQLite page worker. */
export type ExportReply = { id: number; page: readonly [number, number | null, number | null] } | { id: number; error: string }

/**
 * The page reader's CPU priority (Linux nice), as the query workers' default: under a full
 * machine, ingest and the event loop go first and the tail waits (it is caught up when ingest eases).
 */
const EXPORT_WORKER_NICE = 10

/** Pages read by a worker thread with its own read-only connection to the SQLite file. */
export function createSqliteRowExporter(sqliteFile: string): RowExporter {
  let worker: Worker | undefined
  let next = 0
  const waiting = new Map<
    number,
    { resolve: (page: readonly [number, number | null, number | null]) => void; reject: (e: Error) => void }
  >()
  const failAll = (error: Error): void => {
    for (const w of waiting.values()) w.reject(error)
    waiting.clear()
    worker = undefined
  }
  const start = (): Worker => {
    const w = FROM_SOURCE
      ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}) })`, {
          eval: true,
          workerData: { sqliteFile, nice: EXPORT_WORKER_NICE },
        })
      : new Worker(WORKER_URL, { workerData: { sqliteFile, nice: EXPORT_WORKER_NICE } })
    w.on('message', (reply: ExportReply) => {
      const pending = waiting.get(reply.id)
      waiting.delete(reply.id)
      // an idle exporter does not keep the process alive; a read in flight does
      if (waiting.size === 0) w.unref()
      if (!pending) return
      if ('error' in reply) pending.reject(new Error(reply.error))
      else pending.resolve(reply.page)
    })
    w.on('error', failAll)
    w.on('exit', () => failAll(new Error('the row export worker stopped')))
    return w
  }
  const read: PageReader = (sql, params, file) =>
    new Promise((resolve, reject) => {
      worker ??= start()
      const id = next++
      waiting.set(id, { resolve, reject })
      worker.ref()
      worker.postMessage({ id, sql, params, file })
    })
  return exporter(sqliteEngine.csvPage, read, async () => {
    const w = worker
    worker = undefined
    await w?.terminate()
  })
}
