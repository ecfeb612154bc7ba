/**
 * @module
 * A query worker thread: compiles and runs KQL against the workspace's tables on its own
 * read-only connection, so a slow query never blocks the server's event loop and can be stopped by
 * terminating the thread (design §5, §7). SQLite: the database file opened read-only with
 * `query_only`. PostgreSQL: a client whose statements run in READ ONLY transactions under a
 * statement_timeout. Read-only is enforced by the database, not by inspecting the SQL.
 */
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'
import pg from 'pg'
import { type CompiledQuery, compileQuery, KqlError, type KqlColumn, type KqlValue, type SqlSource, toWireRows } from '../kql/index.js'
import { decodeValue } from './column-codec.js'
import { pgTypes } from './postgres/postgres-db.js'
import type { WorkerInit, WorkerReply, WorkerTask } from './query-pool.js'

const init = workerData as WorkerInit
const plans = new Map<string, CompiledQuery>()

function decodeRows(rows: unknown[][], columns: readonly KqlColumn[]): KqlValue[][] {
  return rows.map((row) => columns.map((column, i) => decodeValue(column.type, row[i])))
}

async function openSource(): Promise<(task: WorkerTask) => SqlSource> {
  if (init.dialect === 'sqlite') {
    const db = new Database(init.sqliteFile, { readonly: true, fileMustExist: true })
    db.pragma('query_only = ON')
    db.pragma('busy_timeout = 10000')
    const statements = new Map<string, Database.Statement>()
    return () => ({
      query(sql, params, columns) {
        let statement = statements.get(sql)
        if (!statement) {
          statement = db.prepare(sql)
          statement.safeIntegers(true)
          statement.raw(true)
          if (statements.size > 500) statements.clear()
          statements.set(sql, statement)
        }
        return decodeRows(statement.all(...params) as unknown[][], columns)
      },
    })
  }
  const client = new pg.Client({ connectionString: init.databaseUrl, types: pgTypes as unknown as pg.CustomTypesConfig, application_name: 'provenant-query' })
  client.on('error', () => {})
  await client.connect()
  return (task) => ({
    async query(sql, params, columns) {
      await client.query('BEGIN READ ONLY')
      try {
        await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.ceil(task.timeoutMs)) + 1000}`)
        const result = await client.query({ text: sql, values: params.map((p) => (typeof p === 'bigint' ? p.toString() : p)), rowMode: 'array' })
        return decodeRows(result.rows as unknown[][], columns)
      } finally {
        await client.query('COMMIT').catch(() => {})
      }
    },
  })
}

const sourceFor = await openSource()

async function run(task: WorkerTask): Promise<WorkerReply> {
  try {
    const key = `${task.schemaVersion}\n${task.text}`
    let plan = plans.get(key)
    if (!plan) {
      plan = compileQuery(task.text, task.schema, { dialect: init.dialect })
      if (plans.size >= 500) plans.delete(plans.keys().next().value!)
      plans.set(key, plan)
    }
    const result = await plan.execute(plan.tables.length > 0 ? sourceFor(task) : undefined, { now: task.now, rowCap: task.rowCap })
    const wire = toWireRows(result)
    return { id: task.id, ok: true, columns: [...wire.columns], results: [...wire.results], truncated: result.truncated, ...(result.visualization ? { visualization: result.visualization } : {}) }
  } catch (error) {
    if (error instanceof KqlError) return { id: task.id, ok: false, kind: 'kql', kqlKind: error.kind, message: error.message, ...(error.position ? { position: error.position } : {}) }
    return { id: task.id, ok: false, kind: 'error', message: error instanceof Error ? error.message : String(error) }
  }
}

parentPort!.on('message', (task: WorkerTask) => {
  void run(task).then((reply) => parentPort!.postMessage(reply))
})
parentPort!.postMessage({ ready: true })
