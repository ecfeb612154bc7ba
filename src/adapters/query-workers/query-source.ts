/**
 * @module
 * The KQL engine's SqlSource on each database: runs the engine's generated, parameterised SELECTs
 * on a read-only connection and decodes rows by column type (column-codec.ts). Used by the query
 * worker threads (query-worker.ts) and by tests that need the exact production read path.
 *
 * Read-only is enforced by the database: SQLite connections open the file read-only with
 * `query_only`; PostgreSQL sessions have `default_transaction_read_only` on, so every statement
 * runs in a read-only transaction.
 */
import { createHash } from 'node:crypto'
import type Database from 'better-sqlite3'
import type pg from 'pg'
import type { SqlSource } from '../../kql/index.js'
import { SQLITE_FUNCTIONS, SqlRefusalError } from '../../kql/index.js'
import { decodeRows } from '../sql/column-codec.js'

/** Registers the engine's SQL functions (kql_match, kql_lower, kql_utf16, kql_refuse) on a connection. */
export function registerKqlFunctions(db: Database.Database): void {
  for (const f of SQLITE_FUNCTIONS)
    db.function(
      f.name,
      { deterministic: f.deterministic, safeIntegers: f.safeIntegers ?? false },
      f.impl as (...args: unknown[]) => unknown,
    )
}

/** A SqlSource on a (read-only) better-sqlite3 connection that has the KQL functions registered. */
export function createSqliteQuerySource(db: Database.Database): SqlSource {
  const statements = new Map<string, Database.Statement>()
  return {
    query(sql, params, columns) {
      let statement = statements.get(sql)
      if (!statement) {
        statement = db.prepare(sql)
        statement.safeIntegers(true)
        statement.raw(true)
        if (statements.size > 500) statements.clear()
        statements.set(sql, statement)
      }
      let rows: unknown[][]
      try {
        rows = statement.all(...params) as unknown[][]
      } catch (error) {
        // SUM over int64 overflows where the evaluator's doubles do not
        if (error instanceof Error && !(error instanceof SqlRefusalError) && /integer overflow/i.test(error.message)) {
          throw new SqlRefusalError(error.message, { cause: error })
        }
        throw error
      }
      return decodeRows(rows, columns)
    },
  }
}

export interface PostgresQuerySourceOptions {
  /** statement_timeout for the session, milliseconds (the time cap plus a margin). */
  readonly timeoutMs: () => number
}

/** Distinct prepared statements one session keeps before it is reset (bounds server memory). */
const MAX_PREPARED = 500

/**
 * A SqlSource on a dedicated pg client. The session is read-only; statements are prepared once
 * per session (named by a hash of their text), so a warm query is planned once.
 */
export function createPostgresQuerySource(client: pg.Client, options: PostgresQuerySourceOptions): SqlSource & { close(): Promise<void> } {
  let setup: Promise<void> | undefined
  let timeout = -1
  const prepared = new Set<string>()
  async function ready(): Promise<void> {
    setup ??= client.query('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY').then(() => undefined)
    await setup
    const wanted = Math.max(1, Math.ceil(options.timeoutMs()))
    if (wanted !== timeout) {
      await client.query(`SET statement_timeout = ${wanted}`)
      timeout = wanted
    }
    if (prepared.size >= MAX_PREPARED) {
      // forget this session's prepared statements (DEALLOCATE ALL) and pg's record of them
      await client.query('DEALLOCATE ALL')
      const parsed = (client as unknown as { connection?: { parsedStatements?: Record<string, unknown> } }).connection?.parsedStatements
      if (parsed) for (const name of prepared) delete parsed[name]
      prepared.clear()
    }
  }
  return {
    async query(sql, params, columns) {
      await ready()
      const name = `kql_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`
      prepared.add(name)
      try {
        const result = await client.query({
          name,
          text: sql,
          values: params.map((p) => (typeof p === 'bigint' ? p.toString() : p)),
          rowMode: 'array',
        })
        return decodeRows(result.rows as unknown[][], columns)
      } catch (error) {
        const code = (error as { code?: unknown }).code
        // data exceptions (overflow, division by zero...): the engine answers in memory instead
        if (typeof code === 'string' && code.startsWith('22')) throw new SqlRefusalError((error as Error).message, { cause: error })
        throw error
      }
    },
    async close() {
      await client.end()
    },
  }
}
