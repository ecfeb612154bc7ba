/**
 * @module
 * SqlDb on a pg Pool. `?` placeholders are numbered `$1…`; int8 values come back as numbers when
 * exact and as bigint otherwise (datetime ticks exceed 2^53).
 */
import { finished } from 'node:stream/promises'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { type AllOptions, quoteIdent, type SqlDb } from '../sql/sql-db.js'
import { postgresEngine } from './postgres-engine.js'

const INT8_OID = 20

/** Type parsers for our pools only (never the process-wide pg.types). */
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') {
      return (value: string) => {
        const n = Number(value)
        return Number.isSafeInteger(n) ? n : BigInt(value)
      }
    }
    return pg.types.getTypeParser(oid, format as 'text')
  },
}

export function createPgPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, types: pgTypes as unknown as pg.CustomTypesConfig, application_name: 'provenant' })
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {})
  return pool
}

const placeholderCache = new Map<string, string>()

/** Numbers `?` placeholders (`?` never appears in our SQL text otherwise). */
export function numberPlaceholders(sql: string): string {
  let out = placeholderCache.get(sql)
  if (out === undefined) {
    let n = 0
    out = sql.replace(/\?/g, () => `$${++n}`)
    if (placeholderCache.size > 5000) placeholderCache.clear()
    placeholderCache.set(sql, out)
  }
  return out
}

type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient

function normalise(params: readonly unknown[]): unknown[] {
  return params.map((p) => (typeof p === 'bigint' ? p.toString() : p === undefined ? null : p))
}

const COPY_SPECIAL = /[\\\t\n\r]/g
const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' }

/**
 * One field of COPY's text format: `\N` is NULL; a backslash, tab, newline or carriage return in a
 * value is escaped (so `\N` or `\.` in a string stays text). Numbers and bigints print exactly
 * (the shortest text that reads back as the same double), booleans as t/f, and
 * 'NaN'/'Infinity' arrive as the text the codec binds them as.
 */
function copyField(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value.replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c]!)
    case 'number':
    case 'bigint':
      return String(value)
    case 'boolean':
      return value ? 't' : 'f'
    default:
      if (value === null || value === undefined) return '\\N'
      throw new TypeError(`insertMany takes scalar values, got ${Object.prototype.toString.call(value)}`)
  }
}

/** Rows as the text COPY reads: fields split by tabs, rows ended by newlines. */
function copyText(values: readonly unknown[], width: number): string {
  let text = ''
  for (let start = 0; start < values.length; start += width) {
    text += copyField(values[start])
    for (let i = start + 1; i < start + width; i++) text += `\t${copyField(values[i])}`
    text += '\n'
  }
  return text
}

/** How long close() waits for operations in flight before ending the pool anyway. */
const CLOSE_DRAIN_MS = 5000

export function createPostgresDb(pool: pg.Pool): SqlDb {
  let ended = false
  // Operations in flight, so close() can let them finish: pg-pool's end() never answers a request
  // still waiting for a client, which would leave its caller (and a shutdown) hanging for ever.
  const inFlight = new Set<Promise<unknown>>()
  function tracked<T>(operation: () => Promise<T>): Promise<T> {
    if (ended) return Promise.reject(new Error('the database connection pool is closed'))
    const promise = operation()
    inFlight.add(promise)
    const forget = () => {
      inFlight.delete(promise)
    }
    promise.then(forget, forget)
    return promise
  }
  function handle(client: Queryable, inTransaction: boolean): SqlDb {
    const query = <T>(sql: string, params: readonly unknown[], arrays = false) => {
      const text = numberPlaceholders(sql)
      const values = normalise(params)
      const run = async () =>
        (await (arrays ? client.query({ text, values, rowMode: 'array' }) : client.query(text, values))) as unknown as pg.QueryResult & {
          rows: T[]
        }
      // Statements of an open transaction are covered by the transaction's own tracking.
      return inTransaction ? run() : tracked(run)
    }
    const self: SqlDb = {
      engine: postgresEngine,
      inTransaction,
      all: async <T>(sql: string, params: readonly unknown[] = [], options?: AllOptions) =>
        (await query<T>(sql, params, options?.arrays === true)).rows,
      get: async <T>(sql: string, params: readonly unknown[] = []) => (await query<T>(sql, params)).rows[0],
      run: async (sql, params = []) => ({ changes: (await query(sql, params)).rowCount ?? 0 }),
      exec: async (sql) => {
        await (inTransaction ? client.query(sql) : tracked(() => client.query(sql)))
      },
      async insertMany(table, columns, values) {
        if (values.length === 0) return
        if (!inTransaction) return self.transaction((tx) => tx.insertMany(table, columns, values))
        if (values.length % columns.length !== 0)
          throw new Error(`insertMany: ${values.length} values are not rows of ${columns.length} columns`)
        // the server parses COPY's text in C: a quarter of the server CPU of a 30,000-parameter INSERT (docs/decisions.md)
        const copy = (client as pg.PoolClient).query(
          copyFrom(`COPY ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) FROM STDIN`),
        )
        copy.end(copyText(values, columns.length))
        await finished(copy)
      },
      transaction<T>(fn: (tx: SqlDb) => Promise<T>): Promise<T> {
        if (inTransaction) return fn(self)
        return tracked(async () => {
          const txClient = await pool.connect()
          try {
            await txClient.query('BEGIN')
            const result = await fn(handle(txClient, true))
            await txClient.query('COMMIT')
            return result
          } catch (error) {
            await txClient.query('ROLLBACK').catch(() => {})
            throw error
          } finally {
            txClient.release()
          }
        })
      },
      async close() {
        if (ended) return
        ended = true
        let timer: NodeJS.Timeout | undefined
        const drained = Promise.allSettled([...inFlight])
        await Promise.race([
          drained,
          new Promise((resolve) => {
            timer = setTimeout(resolve, CLOSE_DRAIN_MS)
          }),
        ])
        clearTimeout(timer)
        await pool.end()
      },
    }
    return self
  }
  return handle(pool, false)
}
