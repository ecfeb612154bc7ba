/**
 * @module
 * A query worker thread: compiles (parse, bind, constant folding) and runs KQL against the
 * workspace's tables on its own read-only connection, so no query work ever runs on the server's
 * event loop and any query can be stopped by terminating the thread (design §5, §7, §14; issue 15).
 * Its V8 heap is capped by the pool (the query memory budget). SQLite: the database file opened read-only with
 * `query_only` and the engine's SQL functions registered. PostgreSQL: a client whose session is
 * read-only, under a statement_timeout. Read-only is enforced by the database, not by inspecting
 * the SQL (query-source.ts).
 */
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'
import pg from 'pg'
import { QueryEngineLimitError } from '../../domain/queries/query-executor.js'
import { type CompiledQuery, compileQuery, KqlError, type KqlValue, SqlRefusalError, type SqlSource, toWireRows } from '../../kql/index.js'
import { pgTypes } from '../postgres/postgres-db.js'
import type { Dialect } from '../sql/sql-db.js'
import type { ColumnarAnswer, ColumnarStatement, WorkerInit, WorkerMessage, WorkerPriority, WorkerReply, WorkerTask } from './query-pool.js'
import { createPostgresQuerySource, createSqliteQuerySource, registerKqlFunctions } from './query-source.js'
import { lowerThisThreadPriority } from './thread-priority.js'

const init = workerData as WorkerInit & WorkerPriority
const plans = new Map<string, CompiledQuery>()
/** The running task's time cap: PostgreSQL's statement_timeout follows it (plus a margin). */
let currentTimeoutMs = 30_000
/** PostgreSQL: this worker's backend, so the pool can end its session when it stops the worker (pg_terminate_backend). */
let backendPid: number | undefined

/** The running task and the tables its plan reads (the columnar tier opens views of those). */
let currentTask: { id: number; tables: ColumnarStatement['tables'] } | undefined
let nextSeq = 1
const waiting = new Map<number, { resolve(rows: KqlValue[][]): void; reject(error: Error): void }>()

/**
 * Columnar tier: statements run on the process's DuckDB instance, on the pool's thread (DuckDB
 * works on its own threads there; stopping this worker makes the pool interrupt the statement).
 */
function columnarSource(): SqlSource {
  return {
    query(sql, params, columns) {
      const task = currentTask
      if (!task) throw new Error('no running query')
      const seq = nextSeq++
      return new Promise<KqlValue[][]>((resolve, reject) => {
        waiting.set(seq, { resolve, reject })
        const statement: ColumnarStatement = { taskId: task.id, seq, tables: task.tables, sql, params, columns }
        parentPort!.postMessage({ statement } satisfies WorkerMessage)
      })
    },
  }
}

function answered(answer: ColumnarAnswer): void {
  const w = waiting.get(answer.seq)
  if (!w) return
  waiting.delete(answer.seq)
  if (answer.ok) w.resolve(answer.rows)
  else if (answer.limit) w.reject(new QueryEngineLimitError(answer.limit.resource, answer.limit.limit))
  else w.reject(answer.refusal ? new SqlRefusalError(answer.message) : new Error(answer.message))
}

/** How a worker opens its read-only connection to `init.database`, per engine (a new engine is a compile error here). */
const OPEN_READ_SOURCE: Readonly<Record<Dialect, (database: string) => Promise<SqlSource>>> = {
  async sqlite(file) {
    const db = new Database(file, { readonly: true, fileMustExist: true })
    db.pragma('query_only = ON')
    db.pragma('busy_timeout = 10000')
    registerKqlFunctions(db)
    return createSqliteQuerySource(db)
  },
  async postgres(databaseUrl) {
    const client = new pg.Client({
      connectionString: databaseUrl,
      types: pgTypes as unknown as pg.CustomTypesConfig,
      application_name: 'provenant-query',
    })
    client.on('error', () => {})
    await client.connect()
    backendPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid
    return createPostgresQuerySource(client, { timeoutMs: () => currentTimeoutMs + 1000 })
  },
}

async function openSource(): Promise<SqlSource> {
  return init.columnar ? columnarSource() : OPEN_READ_SOURCE[init.dialect](init.database)
}

const source = await openSource()

function compile(task: WorkerTask): CompiledQuery {
  const key = `${task.schemaVersion}\n${task.text}`
  let plan = plans.get(key)
  if (!plan) {
    plan = compileQuery(task.text, task.schema, { dialect: init.columnar ? 'duckdb' : init.dialect })
    if (plans.size >= 500) plans.delete(plans.keys().next().value!)
    plans.set(key, plan)
  }
  return plan
}

async function run(task: WorkerTask): Promise<WorkerReply> {
  try {
    const plan = compile(task)
    if (task.kind === 'check') return { id: task.id, ok: true, checked: true, columns: [...plan.columns], tables: [...plan.tables] }
    if (task.allowedTables) {
      const allowed = new Set(task.allowedTables)
      const denied = plan.tables.filter((t) => !allowed.has(t))
      if (denied.length > 0) return { id: task.id, ok: false, kind: 'forbidden', tables: denied }
    }
    currentTimeoutMs = task.timeoutMs
    const read = new Set(plan.tables)
    currentTask = {
      id: task.id,
      tables: task.schema.tables.filter((t) => read.has(t.name)).map((t) => ({ sqlName: t.sqlName, columns: t.columns })),
    }
    const result = await plan.execute(plan.tables.length > 0 ? source : undefined, { now: task.now, rowCap: task.rowCap })
    const wire = toWireRows(result)
    return {
      id: task.id,
      ok: true,
      columns: [...wire.columns],
      results: [...wire.results],
      truncated: result.truncated,
      ...(result.visualization ? { visualization: result.visualization } : {}),
    }
  } catch (error) {
    if (error instanceof KqlError)
      return {
        id: task.id,
        ok: false,
        kind: 'kql',
        kqlKind: error.kind,
        message: error.message,
        ...(error.position ? { position: error.position } : {}),
      }
    if (error instanceof QueryEngineLimitError)
      return { id: task.id, ok: false, kind: 'limit', resource: error.resource, limit: error.limit }
    return { id: task.id, ok: false, kind: 'error', message: error instanceof Error ? error.message : String(error) }
  }
}

parentPort!.on('message', (message: WorkerTask | { answer: ColumnarAnswer }) => {
  if ('answer' in message) answered(message.answer)
  else void run(message).then((reply) => parentPort!.postMessage(reply))
})
lowerThisThreadPriority(init.nice)
parentPort!.postMessage({ ready: true, ...(backendPid === undefined ? {} : { backendPid }) } satisfies WorkerMessage)
