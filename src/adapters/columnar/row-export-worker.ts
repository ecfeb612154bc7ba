/**
 * @module
 * The SQLite page reader of row-export.ts, in a worker thread: a read-only connection of its own
 * (WAL: it reads the last committed rows while ingest writes), one page statement per message,
 * the page's CSV text appended to the staging file here, so neither the read nor the bytes pass
 * through the event loop of the server.
 */
import { appendFileSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import type Database from 'better-sqlite3'
import { lowerThisThreadPriority } from '../query-workers/thread-priority.js'
import { openSqliteDatabase } from '../sqlite/sqlite-db.js'
import type { ExportReply } from './row-export.js'

const { sqliteFile, nice } = workerData as { sqliteFile: string; nice: number }
// as the query workers: reading rows for the compactor (or a query's tail) yields the cores to
// the event loop, so ingest is served first when the machine is busy
lowerThisThreadPriority(nice)
const db = openSqliteDatabase(sqliteFile, { readonly: true })
const statements = new Map<string, Database.Statement>()

parentPort!.on('message', ({ id, sql, params, file }: { id: number; sql: string; params: unknown[]; file: string }) => {
  let reply: ExportReply
  try {
    let statement = statements.get(sql)
    if (!statement) {
      statement = db.prepare(sql).raw(true)
      statements.set(sql, statement)
    }
    const [count, first, last, csv] = statement.get(...params) as [number, number | null, number | null, Buffer | null]
    if (csv && csv.length > 0) {
      appendFileSync(file, csv)
      appendFileSync(file, '\n')
    }
    reply = { id, page: [count, first, last] }
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) }
  }
  parentPort!.postMessage(reply)
})
