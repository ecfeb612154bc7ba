/**
 * @module
 * QueryExecutor on a pool of worker threads (query-worker.ts). A task that passes its time cap is
 * stopped by terminating its worker, which is then replaced; the server keeps answering meanwhile.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { QueryExecutor, QueryOutcome, QueryRun } from '../domain/queries/query-executor.js'
import { QueryTimeoutError } from '../domain/queries/query-executor.js'
import { type KqlColumn, KqlError, type KqlErrorKind, type SourcePosition } from '../kql/index.js'

export type WorkerInit =
  | { readonly dialect: 'sqlite'; readonly sqliteFile: string }
  | { readonly dialect: 'postgres'; readonly databaseUrl: string }

export interface WorkerTask extends QueryRun {
  readonly id: number
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
  | { id: number; ok: false; kind: 'kql'; kqlKind: KqlErrorKind; message: string; position?: SourcePosition }
  | { id: number; ok: false; kind: 'error'; message: string }

interface Pending {
  readonly task: WorkerTask
  resolve(outcome: QueryOutcome): void
  reject(error: Error): void
}

interface Slot {
  worker: Worker
  ready: Promise<void>
  current: Pending | undefined
  timer: NodeJS.Timeout | undefined
}

// Under tsx (tests, `npm run dev`) this module is TypeScript and the worker needs tsx registered
// in its own thread; built, both are JavaScript.
const FROM_SOURCE = import.meta.url.endsWith('.ts')
const WORKER_URL = new URL(`./query-worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url)

function newWorker(workerData: WorkerInit): Worker {
  if (!FROM_SOURCE) return new Worker(WORKER_URL, { workerData })
  const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}) })`
  return new Worker(bootstrap, { eval: true, workerData })
}

export function createQueryPool(init: WorkerInit, size = Math.max(1, Math.min(4, availableParallelism()))): QueryExecutor {
  const slots: Slot[] = []
  const queue: Pending[] = []
  let nextId = 1
  let closed = false

  /** Starts a worker for the slot and routes its events there. */
  function start(slot: Slot): void {
    const worker = newWorker(init)
    slot.worker = worker
    slot.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: WorkerReply | { ready: true }) => {
        if ('ready' in reply) resolve()
        else finish(slot, reply)
      })
      worker.once('error', reject)
    })
    slot.ready.catch(() => {})
    worker.on('error', (error) => {
      if (slot.worker === worker) fail(slot, error)
    })
    worker.on('exit', () => {
      if (!closed && slot.worker === worker) fail(slot, new Error('the query worker stopped unexpectedly'))
    })
    worker.unref()
  }

  /** Terminates the slot's worker (stopping whatever it runs) and starts a fresh one. */
  function replace(slot: Slot): void {
    const old = slot.worker
    start(slot)
    void old.terminate()
  }

  function finish(slot: Slot, reply: WorkerReply): void {
    const pending = slot.current
    if (!pending || pending.task.id !== reply.id) return
    clearTimeout(slot.timer)
    slot.current = undefined
    if (reply.ok) {
      pending.resolve({
        columns: reply.columns,
        results: reply.results,
        truncated: reply.truncated,
        ...(reply.visualization ? { visualization: reply.visualization } : {}),
      })
    } else if (reply.kind === 'kql') {
      pending.reject(new KqlError(reply.kqlKind, reply.message.replace(/^line \d+, column \d+: /, ''), reply.position))
    } else {
      pending.reject(new Error(reply.message))
    }
    dispatch()
  }

  function fail(slot: Slot, error: Error): void {
    const pending = slot.current
    clearTimeout(slot.timer)
    slot.current = undefined
    if (!closed) replace(slot)
    pending?.reject(error)
    dispatch()
  }

  function dispatch(): void {
    for (const slot of slots) {
      if (slot.current || queue.length === 0) continue
      const pending = queue.shift()!
      slot.current = pending
      slot.ready.then(
        () => {
          if (slot.current !== pending) return
          // The cap counts the query's own run, not a replacement worker's start-up.
          slot.timer = setTimeout(() => {
            if (slot.current !== pending) return
            slot.current = undefined
            replace(slot) // terminating the thread really stops the query
            pending.reject(new QueryTimeoutError(pending.task.timeoutMs))
            dispatch()
          }, pending.task.timeoutMs)
          slot.worker.postMessage(pending.task)
        },
        (error: Error) => {
          if (slot.current === pending) fail(slot, error)
        },
      )
    }
  }

  for (let i = 0; i < size; i++) {
    const slot = { current: undefined, timer: undefined } as unknown as Slot
    start(slot)
    slots.push(slot)
  }

  return {
    run(query) {
      if (closed) return Promise.reject(new Error('the query pool is closed'))
      return new Promise((resolve, reject) => {
        queue.push({ task: { ...query, id: nextId++ }, resolve, reject })
        dispatch()
      })
    },
    async close() {
      closed = true
      for (const pending of queue.splice(0)) pending.reject(new Error('the server is shutting down'))
      await Promise.all(
        slots.map(async (slot) => {
          clearTimeout(slot.timer)
          slot.current?.reject(new Error('the server is shutting down'))
          await slot.worker.terminate()
        }),
      )
    },
  }
}
