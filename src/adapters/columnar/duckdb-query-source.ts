/**
 * @module
 * The KQL engine's SqlSource on DuckDB (the columnar tier, docs/design/columnar.md): runs the
 * engine's generated, parameterised SELECTs on a DuckDB connection and decodes rows by column type
 * (column-codec.ts). DuckDB runs statements on its own threads and the node-api returns promises,
 * so the event loop stays free while a statement runs; `interrupt()` stops the one running.
 *
 * Failures that mean "the evaluator must answer" become SqlRefusalError: 64-bit overflow ("Out of
 * Range Error") and the dialect's own error('kql_refuse') (a has-term over non-ASCII text).
 */
import { DOUBLE, type DuckDBConnection, type DuckDBPreparedStatement, type DuckDBValue } from '@duckdb/node-api'
import type { KqlColumn, SqlSource } from '../../kql/index.js'
import { DUCKDB_REFUSAL, SqlRefusalError } from '../../kql/index.js'
import { decodeRows } from '../sql/column-codec.js'

/** Distinct prepared statements one connection keeps before it forgets them (bounds memory). */
const MAX_PREPARED = 500

/**
 * Which of DuckDB's limits a failure ran into, if any: its memory_limit ("Out of Memory Error"),
 * or the spill space (the same error naming max_temp_directory_size, or a full disk). The query
 * then fails for its size (the server's answer is a 400 that says what to change), not as a fault.
 */
export function duckdbLimitOf(error: unknown): 'memory' | 'spill' | undefined {
  if (!(error instanceof Error)) return undefined
  if (/max_temp_directory_size|No space left on device/i.test(error.message)) return 'spill'
  if (/^Out of Memory Error/.test(error.message)) return 'memory'
  return undefined
}

/** Whether a DuckDB error means the data, not the statement: the engine then answers in memory. */
export function isDuckdbRefusal(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  return /^Out of Range Error/.test(error.message) || error.message.includes(`Invalid Input Error: ${DUCKDB_REFUSAL}`)
}

/**
 * A statement's result is decoded on the thread that runs DuckDB (the server's main thread, whose
 * heap no query budget caps) and then copied to the query worker. Past `maxBytes` of decoded rows
 * (estimated from the row and column counts before decoding) it is refused instead: the worker
 * could not hold it within its own budget anyway.
 */
export interface ResultBudget {
  readonly maxBytes: number
}

/** A result larger than its ResultBudget; nothing was decoded. */
export class DuckdbResultTooLargeError extends Error {
  constructor(readonly rows: number) {
    super(`the statement's result has ${rows} rows, more than the query memory budget holds`)
    this.name = 'DuckdbResultTooLargeError'
  }
}

/**
 * What a decoded row costs at least on a V8 heap: the row array (headers and an 8-byte slot per
 * column) and a boxed value per column (doubles, bigints, strings are heap objects); string
 * contents come on top, so the estimate errs towards letting a result through.
 */
export const decodedRowBytes = (columns: number): number => 32 + 24 * columns

export interface DuckdbQuerySource extends SqlSource {
  query(sql: string, params: readonly unknown[], columns: readonly KqlColumn[], budget?: ResultBudget): ReturnType<SqlSource['query']>
  /** Stops the statement running on this connection, if any (a stopped query, a time cap). */
  interrupt(): void
}

export function createDuckdbQuerySource(connection: DuckDBConnection): DuckdbQuerySource {
  const prepared = new Map<string, Promise<DuckDBPreparedStatement>>()
  return {
    async query(sql, params, columns, budget) {
      let statement = prepared.get(sql)
      if (!statement) {
        if (prepared.size >= MAX_PREPARED) prepared.clear()
        statement = connection.prepare(sql)
        prepared.set(sql, statement)
        statement.catch(() => prepared.delete(sql))
      }
      try {
        const s = await statement
        // a real parameter is a JS number, which the driver would bind as BIGINT when it is integral
        // (1e19 then fails as "out of int64 range"): numbers bind as DOUBLE (longs arrive as bigints)
        for (const [i, p] of params.entries()) s.bindValue(i + 1, p as DuckDBValue, typeof p === 'number' ? DOUBLE : undefined)
        const reader = await s.runAndReadAll()
        if (budget && reader.currentRowCount * decodedRowBytes(columns.length) > budget.maxBytes)
          throw new DuckdbResultTooLargeError(reader.currentRowCount)
        return decodeRows(reader.getRows(), columns)
      } catch (error) {
        if (isDuckdbRefusal(error)) throw new SqlRefusalError((error as Error).message, { cause: error })
        throw error
      }
    },
    interrupt() {
      connection.interrupt()
    },
  }
}
