/**
 * @module
 * Group commit (design §8, ledger note §3.8): appends wait in per-container queues and one flusher
 * commits everything pending in a single transaction, so concurrent appends share one fsync and
 * one lock acquisition per container instead of paying them each. One flush runs at a time per
 * process; entries arriving meanwhile form the next flush, so a lone append is never delayed by a
 * timer and a busy one batches by itself.
 *
 * Guarantees: an entry's promise settles only after the transaction of its flush has committed
 * (resolved with its result) or failed (rejected, like every other entry of that flush: a flush is
 * never committed in part). Entries of one key keep their submission order.
 */

export interface GroupCommitOptions<K, E, R> {
  /** Key text of a container (entries with equal keys are grouped). */
  readonly keyOf: (key: K) => string
  /**
   * Commits one flush: for each container its entries in submission order. Returns the results per
   * key in the same order. MUST commit all or nothing.
   */
  readonly commit: (
    groups: ReadonlyMap<string, { readonly key: K; readonly entries: readonly E[] }>,
  ) => Promise<ReadonlyMap<string, readonly R[]>>
  /** Entries per flush at most (default 2,000); the rest wait for the next flush. */
  readonly maxBatch?: number
  /** Called with every flush's size and duration (for logs and benchmarks). */
  readonly onFlush?: (info: FlushInfo) => void
}

/** One flush: the entries and keys it carried, how long it took, and its error if it failed. */
export interface FlushInfo {
  readonly entries: number
  readonly containers: number
  readonly ms: number
  readonly error?: unknown
}

export interface GroupCommitQueue<K, E, R> {
  /** Queues one entry; settles after the flush that carries it commits or fails. */
  submit(key: K, entry: E): Promise<R>
  /** Resolves once everything submitted so far has been committed or has failed. */
  drain(): Promise<void>
  /** Refuses new entries and drains. */
  close(): Promise<void>
}

interface Pending<K, E, R> {
  readonly key: K
  readonly keyText: string
  readonly entry: E
  resolve(result: R): void
  reject(error: unknown): void
}

export class QueueClosedError extends Error {
  constructor() {
    super('the activity log is shutting down and accepts no more records')
    this.name = 'QueueClosedError'
  }
}

export function createGroupCommitQueue<K, E, R>(options: GroupCommitOptions<K, E, R>): GroupCommitQueue<K, E, R> {
  const maxBatch = Math.max(1, options.maxBatch ?? 2000)
  let pending: Pending<K, E, R>[] = []
  let running: Promise<void> | null = null
  let scheduled = false
  let closed = false
  const idleWaiters: (() => void)[] = []

  function schedule(): void {
    if (running !== null || scheduled) return
    scheduled = true
    // One macrotask: lets the requests of the current I/O turn join the first flush.
    setImmediate(() => {
      scheduled = false
      run()
    })
  }

  function run(): void {
    if (pending.length === 0) {
      for (const w of idleWaiters.splice(0)) w()
      return
    }
    const batch = pending.slice(0, maxBatch)
    pending = pending.slice(batch.length)
    running = flush(batch).finally(() => {
      running = null
      run()
    })
  }

  async function flush(batch: Pending<K, E, R>[]): Promise<void> {
    const groups = new Map<string, { key: K; entries: E[] }>()
    for (const p of batch) {
      const g = groups.get(p.keyText)
      if (g) g.entries.push(p.entry)
      else groups.set(p.keyText, { key: p.key, entries: [p.entry] })
    }
    const started = performance.now()
    let results: ReadonlyMap<string, readonly R[]>
    try {
      results = await options.commit(groups)
    } catch (error) {
      options.onFlush?.({ entries: batch.length, containers: groups.size, ms: performance.now() - started, error })
      for (const p of batch) p.reject(error)
      return
    }
    options.onFlush?.({ entries: batch.length, containers: groups.size, ms: performance.now() - started })
    const taken = new Map<string, number>()
    for (const p of batch) {
      const i = taken.get(p.keyText) ?? 0
      taken.set(p.keyText, i + 1)
      const list = results.get(p.keyText)
      if (list === undefined || i >= list.length) p.reject(new Error(`group commit: no result for entry ${i} of ${p.keyText}`))
      else p.resolve(list[i]!)
    }
  }

  function drain(): Promise<void> {
    if (running === null && !scheduled && pending.length === 0) return Promise.resolve()
    return new Promise((resolve) => idleWaiters.push(resolve))
  }

  return {
    submit(key, entry) {
      if (closed) return Promise.reject(new QueueClosedError())
      return new Promise<R>((resolve, reject) => {
        pending.push({ key, keyText: options.keyOf(key), entry, resolve, reject })
        schedule()
      })
    },
    drain,
    async close() {
      closed = true
      await drain()
    },
  }
}
