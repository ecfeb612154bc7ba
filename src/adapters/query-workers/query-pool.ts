/**
 * @module
 * QueryExecutor on a pool of worker threads (query-worker.ts; design §5, §7, §14; issue 15). The
 * main thread never compiles or evaluates KQL: every request (run or compile-only check) goes to a
 * worker, under its caps:
 *
 * - Time: the cap counts from the moment the request arrives, queue wait included. Past it the
 *   worker running it is terminated and, on PostgreSQL, its statement is cancelled with
 *   pg_terminate_backend (statement_timeout bounds it besides). A spare worker, started in advance,
 *   takes the terminated one's place at once, so stopping a query never costs capacity.
 * - Memory: each worker's V8 heap is capped (`memoryMb`); a query that needs more ends its worker
 *   and rejects with QueryMemoryError, so the server's RSS stays bounded.
 * - Fair sharing (fair-queue.ts): per-caller running limit, bounded queue, QueryCapacityError when
 *   it is full.
 * - Cancellation: aborting `signal` removes a waiting request, or terminates the worker running it
 *   (and ends its PostgreSQL session); the promise rejects with QueryCancelledError.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import pg from 'pg'
import {
  type CheckOutcome,
  QueryCancelledError,
  QueryCapacityError,
  type QueryCheck,
  QueryEngineLimitError,
  type QueryExecutor,
  QueryForbiddenError,
  QueryMemoryError,
  type QueryOutcome,
  type QueryRun,
  QueryTimeoutError,
} from '../../domain/queries/query-executor.js'
import {
  type KqlColumn,
  KqlError,
  type KqlErrorKind,
  type KqlSchema,
  type KqlValue,
  type SourcePosition,
  SqlRefusalError,
} from '../../kql/index.js'
import type { ColumnarQuerySource } from '../columnar/columnar-store.js'
import { DuckdbResultTooLargeError } from '../columnar/duckdb-query-source.js'
import type { Dialect } from '../sql/sql-db.js'
import { FairQueue, type FairQueueLimits } from './fair-queue.js'

export interface WorkerInit {
  readonly dialect: Dialect
  /** Where the workers read: the SQLite file, or the PostgreSQL URL. */
  readonly database: string
  /**
   * The columnar tier is on (docs/design/columnar.md): the worker compiles for DuckDB and sends
   * each statement to this thread, which runs it on the process's DuckDB instance.
   */
  readonly columnar?: boolean
}

/** Runs a worker's statements on the columnar tier (src/adapters/columnar/columnar-service.ts). */
export interface ColumnarRunner {
  openSource(tables: readonly { readonly sqlName: string; readonly columns: readonly KqlColumn[] }[]): Promise<ColumnarQuerySource>
}

/** A statement a worker asks this thread to run on DuckDB, and the answer. */
export interface ColumnarStatement {
  readonly taskId: number
  readonly seq: number
  readonly tables: readonly { readonly sqlName: string; readonly columns: readonly KqlColumn[] }[]
  readonly sql: string
  readonly params: readonly unknown[]
  readonly columns: readonly KqlColumn[]
}
export type ColumnarAnswer =
  | { readonly seq: number; readonly ok: true; readonly rows: KqlValue[][] }
  | {
      readonly seq: number
      readonly ok: false
      readonly refusal: boolean
      readonly message: string
      /** DuckDB ran out of memory or spill space (QueryEngineLimitError). */
      readonly limit?: { readonly resource: QueryEngineLimitError['resource']; readonly limit: string }
    }

/** What a worker receives (structured-clonable: no signal, no functions). */
export interface WorkerTask {
  readonly id: number
  readonly kind: 'run' | 'check'
  readonly text: string
  readonly schema: KqlSchema
  readonly schemaVersion: string
  readonly now: bigint
  readonly rowCap: number
  /** What is left of the time cap when the worker gets the task (PostgreSQL's statement_timeout follows it). */
  readonly timeoutMs: number
  readonly allowedTables?: readonly string[]
}

export type WorkerReply =
  | {
      id: number
      ok: true
      columns: KqlColumn[]
      results: Record<string, unknown>[]
      truncated: boolean
      visualization?: QueryOutcome['visualization']
    }
  | { id: number; ok: true; checked: true; columns: KqlColumn[]; tables: string[] }
  | { id: number; ok: false; kind: 'kql'; kqlKind: KqlErrorKind; message: string; position?: SourcePosition }
  | { id: number; ok: false; kind: 'forbidden'; tables: string[] }
  | { id: number; ok: false; kind: 'limit'; resource: QueryEngineLimitError['resource']; limit: string }
  | { id: number; ok: false; kind: 'error'; message: string }

/**
 * The CPU priority a worker takes once it is ready (Linux nice): query work yields the cores to the
 * event loop, while starting up (loading the engine) runs at the server's own priority, so a busy
 * machine cannot starve a worker's start and leave queries waiting for capacity.
 */
export interface WorkerPriority {
  readonly nice: number
}

export type WorkerMessage = WorkerReply | { ready: true; backendPid?: number } | { statement: ColumnarStatement }

export interface QueryPoolOptions extends FairQueueLimits {
  /** Worker threads (queries running at once, all callers together). */
  readonly workers: number
  /** V8 heap budget of one worker, MB: one query's memory budget. */
  readonly memoryMb: number
  /**
   * The workers' CPU priority as a Linux nice value (0-19): above 0 the event loop (health checks,
   * appends, streams) wins the CPU over query work when the cores are busy. No effect elsewhere.
   */
  readonly workerNice: number
}

/** Defaults (docs/configuration.md): 2 workers on this 2-core class of machine, up to 4. */
export function defaultQueryPoolOptions(): QueryPoolOptions {
  const workers = Math.max(2, Math.min(4, availableParallelism()))
  return { workers, perCaller: Math.max(1, workers - 1), queueLimit: 64, perCallerQueue: 8, memoryMb: 512, workerNice: 10 }
}

interface Job {
  readonly caller: string
  readonly task: WorkerTask
  readonly arrived: number
  readonly timeoutMs: number
  readonly signal: AbortSignal | undefined
  resolve(reply: WorkerReply): void
  reject(error: Error): void
  slot?: Slot
  /** When a worker took it (Date.now()). */
  dispatched?: number
  timer?: NodeJS.Timeout
  onAbort?: () => void
  /** The job's DuckDB source (columnar tier), opened by its first statement. */
  columnar?: Promise<ColumnarQuerySource>
}

/** A worker thread and what the pool knows of it. */
interface Handle {
  readonly worker: Worker
  ready: boolean
  backendPid: number | undefined
  /** The slot it serves; undefined for the spare. */
  slot: Slot | undefined
}

interface Slot {
  handle: Handle
  current: Job | undefined
  /**
   * The stopped job whose worker this slot is waiting to replace: it still counts against its
   * account until the replacement is ready, so an account whose queries get stopped pays for the
   * restart and cannot take the other accounts' worker meanwhile.
   */
  charged: Job | undefined
}

// Under tsx (tests, `npm run dev`) this module is TypeScript and the worker needs tsx registered
// in its own thread; built, both are JavaScript.
const FROM_SOURCE = import.meta.url.endsWith('.ts')
const WORKER_URL = new URL(`./query-worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url)

function newWorker(workerData: WorkerInit & WorkerPriority, memoryMb: number): Worker {
  const options = { workerData, resourceLimits: { maxOldGenerationSizeMb: memoryMb } }
  if (!FROM_SOURCE) return new Worker(WORKER_URL, options)
  const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}) })`
  return new Worker(bootstrap, { ...options, eval: true })
}

/**
 * Ends a stopped worker's PostgreSQL session (pg_terminate_backend) from a short-lived connection
 * of its own. Ending the session, not only cancelling the statement, also stops a statement that
 * was still on its way to the server when the worker was terminated (a cancel that arrives before
 * the statement starts is ignored); the session is of no further use anyway.
 */
async function endPostgresSession(databaseUrl: string, backendPid: number): Promise<void> {
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: 'provenant-query-cancel',
    // generous: on a loaded server a new session can take seconds
    connectionTimeoutMillis: 30_000,
    query_timeout: 30_000,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT pg_terminate_backend($1)', [backendPid])
  } catch {
    // best effort: statement_timeout stops the statement anyway
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * How a stopped worker's database session is ended, per engine: a server's session outlives the
 * thread and may still run its statement; a SQLite connection dies with the thread.
 */
const END_SESSION: Readonly<Record<Dialect, ((database: string, backendPid: number) => Promise<void>) | undefined>> = {
  sqlite: undefined,
  postgres: endPostgresSession,
}

export function createQueryPool(init: WorkerInit, options: Partial<QueryPoolOptions> = {}, columnar?: ColumnarRunner): QueryExecutor {
  const settings = { ...defaultQueryPoolOptions(), ...options }
  const slots: Slot[] = []
  const queue = new FairQueue<Job>(settings)
  let nextId = 1
  let closed = false

  /**
   * A ready spare worker takes the place of one that is terminated (a stopped query), so capacity
   * comes back at once instead of after a thread start-up; a new spare then starts in the background.
   * The first spare starts with the first query, not with the pool: a server that never runs a
   * query (a process that only ingests, most test servers) does not load the engine a third time.
   */
  let spare: Handle | undefined

  function spawn(): Handle {
    const worker = newWorker({ ...init, nice: settings.workerNice }, settings.memoryMb)
    const handle: Handle = { worker, ready: false, backendPid: undefined, slot: undefined }
    const lost = (error: Error & { code?: string }) => {
      if (closed) return
      if (handle.slot?.handle === handle) crashed(handle.slot, error)
      else if (spare === handle) spare = spawn()
    }
    worker.on('message', (message: WorkerMessage) => {
      if ('statement' in message) {
        const job = handle.slot?.handle === handle ? handle.slot.current : undefined
        if (job && job.task.id === message.statement.taskId) void runStatement(handle, job, message.statement)
        return
      }
      if ('ready' in message) {
        handle.ready = true
        handle.backendPid = message.backendPid
        if (handle.slot) {
          release(handle.slot)
          dispatch()
        }
      } else if (handle.slot?.handle === handle) finish(handle.slot, message)
    })
    worker.on('error', lost)
    worker.on('exit', () => lost(new Error('the query worker stopped unexpectedly')))
    worker.unref()
    return handle
  }

  /** The slot's worker is ready again: the account charged for its restart is free. */
  function release(slot: Slot): void {
    if (slot.charged) queue.finished(slot.charged)
    slot.charged = undefined
  }

  /**
   * Terminates the slot's worker (really stopping what it runs); the spare, or a new worker, takes
   * over. `charge`: the stopped job, counted against its account until the replacement is ready.
   */
  function replace(slot: Slot, charge?: Job): void {
    if (charge) {
      if (slot.charged) queue.finished(slot.charged)
      slot.charged = charge
    }
    const old = slot.handle
    old.slot = undefined
    if (!closed) {
      const next = spare ?? spawn()
      spare = spawn()
      next.slot = slot
      slot.handle = next
      if (next.ready) release(slot)
    }
    // the thread first (it can send nothing more), then its PostgreSQL session and any statement in it
    void old.worker.terminate()
    const endSession = END_SESSION[init.dialect]
    if (old.backendPid !== undefined && endSession) void endSession(init.database, old.backendPid)
  }

  /** Runs a worker's statement on the columnar tier and posts the answer back (if the job is still its worker's). */
  async function runStatement(handle: Handle, job: Job, statement: ColumnarStatement): Promise<void> {
    let answer: ColumnarAnswer
    try {
      if (!columnar) throw new Error('the columnar tier is off')
      job.columnar ??= columnar.openSource(statement.tables)
      const source = await job.columnar
      // decoded here, on the main thread, then copied to the worker: no more than the worker's budget
      const budget = { maxBytes: settings.memoryMb * 2 ** 20 }
      answer = { seq: statement.seq, ok: true, rows: await source.query(statement.sql, statement.params, statement.columns, budget) }
    } catch (error) {
      if (error instanceof DuckdbResultTooLargeError) {
        if (handle.slot?.current === job) stop(job, new QueryMemoryError(settings.memoryMb))
        return
      }
      answer = {
        seq: statement.seq,
        ok: false,
        refusal: error instanceof SqlRefusalError,
        message: error instanceof Error ? error.message : String(error),
        ...(error instanceof QueryEngineLimitError ? { limit: { resource: error.resource, limit: error.limit } } : {}),
      }
    }
    if (handle.slot?.current === job) handle.worker.postMessage({ answer })
  }

  /** Stops the job's DuckDB statement, if any, and closes its source. */
  function closeColumnar(job: Job): void {
    const pending = job.columnar
    if (!pending) return
    job.columnar = undefined
    void pending.then(
      (source) => {
        source.interrupt()
        source.close()
      },
      () => {},
    )
  }

  /** Forgets a job's timer, listener and slot; `running`: still count it against its account (replace() charges it). */
  function settle(job: Job, running = false): void {
    closeColumnar(job)
    clearTimeout(job.timer)
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort)
    if (job.slot) {
      job.slot.current = undefined
      job.slot = undefined
      if (!running) queue.finished(job)
    }
  }

  /** Stops a job wherever it is (waiting or running) and rejects it. */
  function stop(job: Job, error: Error): void {
    const slot = job.slot
    if (!slot && !queue.remove(job)) return // already settled
    settle(job, slot !== undefined)
    if (slot) replace(slot, job)
    job.reject(error)
    dispatch()
  }

  function finish(slot: Slot, reply: WorkerReply): void {
    const job = slot.current
    if (!job || job.task.id !== reply.id) return
    settle(job)
    job.resolve(reply)
    dispatch()
  }

  function crashed(slot: Slot, error: Error & { code?: string }): void {
    const job = slot.current
    if (job) settle(job, true)
    replace(slot, job)
    job?.reject(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new QueryMemoryError(settings.memoryMb) : error)
    dispatch()
  }

  function dispatch(): void {
    for (const slot of slots) {
      if (!slot.handle.ready || slot.current || queue.length === 0) continue
      const job = queue.next()
      if (!job) return // every waiting caller is at its running limit
      slot.current = job
      job.slot = slot
      job.dispatched = Date.now()
      const left = Math.max(1, job.timeoutMs - (Date.now() - job.arrived))
      slot.handle.worker.postMessage({ ...job.task, timeoutMs: left })
    }
  }

  function submit(kind: 'run' | 'check', request: QueryCheck & Partial<QueryRun>): Promise<WorkerReply> {
    if (closed) return Promise.reject(new Error('the query pool is closed'))
    spare ??= spawn()
    if (request.signal?.aborted) return Promise.reject(new QueryCancelledError())
    const refusal =
      queue.mayRun(request.caller) && slots.some((s) => s.handle.ready && !s.current) ? undefined : queue.refusal(request.caller)
    if (refusal) return Promise.reject(new QueryCapacityError(refusal))
    return new Promise<WorkerReply>((resolve, reject) => {
      const job: Job = {
        caller: request.caller,
        task: {
          id: nextId++,
          kind,
          text: request.text,
          schema: request.schema,
          schemaVersion: request.schemaVersion,
          now: request.now ?? 0n,
          rowCap: request.rowCap ?? 0,
          timeoutMs: request.timeoutMs,
          ...(request.allowedTables ? { allowedTables: request.allowedTables } : {}),
        },
        arrived: Date.now(),
        timeoutMs: request.timeoutMs,
        signal: request.signal,
        resolve,
        reject,
      }
      job.timer = setTimeout(() => {
        stop(job, new QueryTimeoutError(job.timeoutMs, (job.dispatched ?? Date.now()) - job.arrived))
      }, job.timeoutMs)
      if (job.signal) {
        job.onAbort = () => stop(job, new QueryCancelledError())
        job.signal.addEventListener('abort', job.onAbort, { once: true })
      }
      queue.push(job)
      dispatch()
    })
  }

  function unwrap(reply: WorkerReply): WorkerReply & { ok: true } {
    if (reply.ok) return reply
    if (reply.kind === 'kql') throw new KqlError(reply.kqlKind, reply.message.replace(/^line \d+, column \d+: /, ''), reply.position)
    if (reply.kind === 'forbidden') throw new QueryForbiddenError(reply.tables)
    if (reply.kind === 'limit') throw new QueryEngineLimitError(reply.resource, reply.limit)
    throw new Error(reply.message)
  }

  for (let i = 0; i < Math.max(1, settings.workers); i++) {
    const handle = spawn()
    const slot: Slot = { handle, current: undefined, charged: undefined }
    handle.slot = slot
    slots.push(slot)
  }

  return {
    async run(query) {
      const reply = unwrap(await submit('run', query))
      if ('checked' in reply) throw new Error('the query worker answered a run with a check')
      return {
        columns: reply.columns,
        results: reply.results,
        truncated: reply.truncated,
        ...(reply.visualization ? { visualization: reply.visualization } : {}),
      }
    },
    async check(query): Promise<CheckOutcome> {
      const reply = unwrap(await submit('check', query))
      if (!('checked' in reply)) throw new Error('the query worker answered a check with a run')
      return { columns: reply.columns, tables: reply.tables }
    },
    async close() {
      closed = true
      for (const job of queue.drain()) {
        settle(job)
        job.reject(new Error('the server is shutting down'))
      }
      await Promise.all(
        slots.map(async (slot) => {
          const job = slot.current
          if (job) {
            settle(job)
            job.reject(new Error('the server is shutting down'))
          }
          await slot.handle.worker.terminate()
        }),
      )
      if (spare) await spare.worker.terminate()
    },
  }
}
