/**
 * @module
 * Starts the columnar tier's worker thread (columnar-worker.ts) on first use and sends it
 * requests: pages of SQLite rows into staging files, Parquet segment writes. An idle worker does
 * not keep the process alive; a request in flight does. A worker that stops fails what it had in
 * flight, and the next request starts a new one.
 */
import { Worker } from 'node:worker_threads'

/** Reading rows for the compactor or a query's tail yields the cores to ingest and the event loop (as the query workers). */
export const COLUMNAR_WORKER_NICE = 10

export interface ColumnarWorkerData {
  /** The SQLite row store's file, for page reads. */
  readonly sqliteFile?: string | undefined
  /** The PostgreSQL row store, for page reads (one connection of the worker's own). */
  readonly postgresUrl?: string | undefined
  readonly nice: number
  /** The worker's DuckDB instance (the compactor's worker only: segment writes). */
  readonly duckdb?: { readonly memoryLimit: string; readonly spillDir: string; readonly spillLimit: string }
}

/**
 * DuckDB's spill cap, set on a running instance: given to create() beside temp_directory, DuckDB 1.5
 * reports the size but does not enforce it (a 320 MB spill under a 50MB setting, measured).
 */
export const spillLimitSql = (limit: string): string => `SET GLOBAL max_temp_directory_size = '${limit.replace(/'/g, '')}'`

/** A segment file to write: `copy` writes `temp`; then stats, failpoint, fsync, rename to `final`. */
export interface SegmentWrite {
  readonly dir: string
  readonly copy: string
  readonly temp: string
  readonly final: string
  /** Reads min and max `timestamp` back from the written file (tables with a `timestamp`). */
  readonly statsSql?: string
  /** The crash suite's failpoint between writing the file and renaming it. */
  readonly failpoint: string
}

/** count, lowest and highest `_rowid`, lowest `_ingested_at`, bytes appended to the file. */
export type PageSummary = readonly [count: number, first: number | null, last: number | null, oldest: number | null, bytes: number]

export type ColumnarWorkerRequest =
  | { readonly id: number; readonly kind: 'page'; readonly sql: string; readonly params: readonly unknown[]; readonly file: string }
  | { readonly id: number; readonly kind: 'write'; readonly write: SegmentWrite }

export type ColumnarWorkerReply =
  | { readonly id: number; readonly page: PageSummary }
  | { readonly id: number; readonly written: { readonly min: bigint | null; readonly max: bigint | null } }
  | { readonly id: number; readonly error: string }

export interface ColumnarWorker {
  readPage(sql: string, params: readonly unknown[], file: string): Promise<PageSummary>
  writeSegment(write: SegmentWrite): Promise<{ min: bigint | null; max: bigint | null }>
  close(): Promise<void>
}

// Under tsx (tests, `npm run dev`) this module is TypeScript and the worker needs tsx registered
// in its own thread; built, both are JavaScript (as query-pool.ts starts its workers).
const FROM_SOURCE = import.meta.url.endsWith('.ts')
const WORKER_URL = new URL(`./columnar-worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url)

/** A request before it is given its id. */
type Unnumbered<T> = T extends unknown ? Omit<T, 'id'> : never

type Pending = { resolve: (reply: ColumnarWorkerReply) => void; reject: (e: Error) => void }

export function createColumnarWorker(data: ColumnarWorkerData): ColumnarWorker {
  let worker: Worker | undefined
  let next = 0
  const waiting = new Map<number, Pending>()
  const failAll = (error: Error): void => {
    for (const w of waiting.values()) w.reject(error)
    waiting.clear()
    worker = undefined
  }
  const start = (): Worker => {
    const w = FROM_SOURCE
      ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}) })`, {
          eval: true,
          workerData: data,
        })
      : new Worker(WORKER_URL, { workerData: data })
    w.on('message', (reply: ColumnarWorkerReply) => {
      const pending = waiting.get(reply.id)
      waiting.delete(reply.id)
      if (waiting.size === 0) w.unref()
      pending?.resolve(reply)
    })
    w.on('error', failAll)
    w.on('exit', () => failAll(new Error('the columnar worker stopped')))
    return w
  }
  const request = (message: Unnumbered<ColumnarWorkerRequest>): Promise<ColumnarWorkerReply> =>
    new Promise<ColumnarWorkerReply>((resolve, reject) => {
      worker ??= start()
      const id = next++
      waiting.set(id, { resolve, reject })
      worker.ref()
      worker.postMessage({ ...message, id })
    }).then((reply) => {
      if ('error' in reply) throw new Error(reply.error)
      return reply
    })
  return {
    async readPage(sql, params, file) {
      const reply = await request({ kind: 'page', sql, params, file })
      if (!('page' in reply)) throw new Error('the columnar worker answered a page read with something else')
      return reply.page
    },
    async writeSegment(write) {
      const reply = await request({ kind: 'write', write })
      if (!('written' in reply)) throw new Error('the columnar worker answered a segment write with something else')
      return reply.written
    },
    async close() {
      const w = worker
      worker = undefined
      await w?.terminate()
    },
  }
}
