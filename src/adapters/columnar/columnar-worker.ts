/**
 * @module
 * The columnar tier's worker thread (started by columnar-worker-client.ts), at a lower CPU
 * priority (nice 10, as the query workers): on a full machine ingest and the event loop go first.
 *
 * - `page`: one page statement on a connection of its own to the row store (SQLite: read-only, WAL
 *   lets it read the last committed rows while ingest writes; PostgreSQL: one connection); the
 *   page's CSV text is appended to the staging file here, so neither the read nor the bytes pass
 *   through the server's event loop.
 * - `write` (the compactor's worker only): a Parquet segment file written by a DuckDB instance of
 *   its own with one thread, this one: every task of the COPY runs here through the pending
 *   result's `runTask()`, so all of it runs at this thread's priority (DuckDB's own threads and
 *   libuv's pool, which a promise-returning call runs on, cannot be niced from inside the process
 *   without niceing the server's pool). Then the file's `timestamp` range is read back, the
 *   failpoint (crash suite) fires, and the file is fsynced and renamed.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import type { DuckDBConnection } from '@duckdb/node-api'
import type Database from 'better-sqlite3'
import { lowerThisThreadPriority } from '../query-workers/thread-priority.js'
import type { SqlDb } from '../sql/sql-db.js'
import { openSqliteDatabase } from '../sqlite/sqlite-db.js'
import {
  type ColumnarWorkerData,
  type ColumnarWorkerReply,
  type ColumnarWorkerRequest,
  type PageSummary,
  type SegmentWrite,
  spillLimitSql,
} from './columnar-worker-client.js'
import { appendPage, readPageThrough } from './page-file.js'

const { sqliteFile, postgresUrl, nice, duckdb: duckdbSettings } = workerData as ColumnarWorkerData
lowerThisThreadPriority(nice)

const statements = new Map<string, Database.Statement>()
let sqlite: Database.Database | undefined

let postgres: Promise<SqlDb> | undefined

/** Runs a page statement; appends its CSV text (and a newline) to `file`. */
async function readPage(sql: string, params: readonly unknown[], file: string): Promise<PageSummary> {
  if (postgresUrl !== undefined) {
    postgres ??= import('../postgres/postgres-db.js').then(({ createPgPool, createPostgresDb }) =>
      createPostgresDb(createPgPool(postgresUrl, 1)),
    )
    return readPageThrough(await postgres, sql, params, file)
  }
  if (sqliteFile === undefined) throw new Error('this worker has no row store')
  sqlite ??= openSqliteDatabase(sqliteFile, { readonly: true })
  let statement = statements.get(sql)
  if (!statement) {
    statement = sqlite.prepare(sql).raw(true)
    statements.set(sql, statement)
  }
  const [count, first, last, oldest, csv] = statement.get(...params) as [number, number | null, number | null, number | null, Buffer | null]
  return [count, first, last, oldest, appendPage(file, csv)]
}

let connection: Promise<DuckDBConnection> | undefined

async function duckdb(): Promise<DuckDBConnection> {
  connection ??= (async () => {
    if (!duckdbSettings) throw new Error('this worker writes no segments')
    const { DuckDBInstance } = await import('@duckdb/node-api')
    // threads 1: no thread of DuckDB's own; the tasks run on this thread (runHere)
    mkdirSync(duckdbSettings.spillDir, { recursive: true, mode: 0o700 })
    const instance = await DuckDBInstance.create(':memory:', {
      threads: '1',
      memory_limit: duckdbSettings.memoryLimit,
      temp_directory: duckdbSettings.spillDir,
    })
    const connection = await instance.connect()
    await connection.run(spillLimitSql(duckdbSettings.spillLimit))
    return connection
  })()
  return connection
}

/** Runs `sql` with every task on this thread; returns its rows. */
async function runHere(sql: string): Promise<unknown[][]> {
  const { DuckDBPendingResultState } = await import('@duckdb/node-api')
  const pending = await (await duckdb()).start(sql)
  for (;;) {
    const state = pending.runTask()
    if (state === DuckDBPendingResultState.RESULT_READY) break
    // with one thread this does not happen; should it, wait 1 ms rather than spin
    if (state === DuckDBPendingResultState.NO_TASKS_AVAILABLE) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1)
  }
  return (await pending.getResult()).getRows()
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

async function writeSegment(write: SegmentWrite): Promise<{ min: bigint | null; max: bigint | null }> {
  mkdirSync(write.dir, { recursive: true, mode: 0o700 })
  await runHere(write.copy)
  let stats: { min: bigint | null; max: bigint | null } = { min: null, max: null }
  if (write.statsSql !== undefined) {
    const r = (await runHere(write.statsSql))[0]
    stats = { min: (r?.[0] as bigint | null) ?? null, max: (r?.[1] as bigint | null) ?? null }
  }
  if (process.env['PROVENANT_FAILPOINT'] === write.failpoint) process.kill(process.pid, 'SIGKILL')
  fsyncPath(write.temp)
  renameSync(write.temp, write.final)
  fsyncPath(write.dir)
  return stats
}

async function answer(request: ColumnarWorkerRequest): Promise<ColumnarWorkerReply> {
  try {
    if (request.kind === 'page') return { id: request.id, page: await readPage(request.sql, request.params, request.file) }
    return { id: request.id, written: await writeSegment(request.write) }
  } catch (error) {
    return { id: request.id, error: error instanceof Error ? error.message : String(error) }
  }
}

// one request at a time, in order: a segment write is not interleaved with a page read
let queue: Promise<void> = Promise.resolve()
parentPort!.on('message', (request: ColumnarWorkerRequest) => {
  queue = queue.then(async () => parentPort!.postMessage(await answer(request)))
})
