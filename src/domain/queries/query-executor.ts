/**
 * @module
 * The port that compiles and runs KQL against the workspace's tables, off the event loop and under
 * the query's caps (design §5, §7, §14; issue 15). Implemented in src/adapters/query-workers/ with a pool of worker
 * threads (query-pool.ts: read-only SQLite connections, or PostgreSQL clients in READ ONLY
 * sessions with a statement_timeout). A columnar (DuckDB) adapter implements the same port.
 *
 * Contract every adapter keeps:
 * - No query work on the caller's thread: parsing, binding, constant folding and evaluation all run
 *   where the time cap and memory budget apply.
 * - `timeoutMs` counts from the moment the request is handed over (time waiting for capacity
 *   included); past it the work is really stopped and the promise rejects with QueryTimeoutError.
 * - Capacity is shared fairly: at most a configured number of queries per `caller` run at once,
 *   the rest wait in a bounded queue; when that is full the promise rejects at once with
 *   QueryCapacityError (no query was started).
 * - `signal` cancels: a queued request leaves the queue, a running one is stopped (worker
 *   terminated, PostgreSQL session ended) and the promise rejects with QueryCancelledError.
 *   This is what the portal's Cancel button and a disconnecting HTTP client use.
 * - A query that needs more memory than the budget rejects with QueryMemoryError.
 * - Query errors reject with the engine's KqlError; anything else is infrastructure.
 */
import type { KqlColumn, KqlSchema } from '../../kql/index.js'

interface QueryRequest {
  readonly text: string
  /** The schema the text compiles against: for ad-hoc text, only the tables the caller's scopes allow. */
  readonly schema: KqlSchema
  /** Part of the compiled-plan cache key: changes whenever `schema` does. */
  readonly schemaVersion: string
  /** Who the request counts against for fair sharing (the token owner's account id). */
  readonly caller: string
  readonly timeoutMs: number
  readonly signal?: AbortSignal
}

export interface QueryRun extends QueryRequest {
  /** now() for the query, in datetime ticks. */
  readonly now: bigint
  readonly rowCap: number
  /**
   * When set, the query may read only these tables (KQL names): reading another is refused with
   * QueryForbiddenError before anything runs. Used for saved queries compiled against the full schema.
   */
  readonly allowedTables?: readonly string[]
}

/** Compile only: the result columns and the tables the query reads (portal preview, MCP, proposals). */
export type QueryCheck = QueryRequest

export interface QueryOutcome {
  readonly columns: readonly KqlColumn[]
  /** Row objects keyed by column name, values in their JSON wire form. */
  readonly results: readonly Record<string, unknown>[]
  readonly truncated: boolean
  readonly visualization?: { readonly kind: string; readonly properties: Readonly<Record<string, unknown>> }
}

export interface CheckOutcome {
  readonly columns: readonly KqlColumn[]
  readonly tables: readonly string[]
}

export interface QueryExecutor {
  run(query: QueryRun): Promise<QueryOutcome>
  check(query: QueryCheck): Promise<CheckOutcome>
  close(): Promise<void>
}

export class QueryTimeoutError extends Error {
  constructor(
    readonly timeoutMs: number,
    /** Milliseconds of the cap spent waiting for a free worker. */
    readonly queuedMs = 0,
  ) {
    const waited = queuedMs >= 1000 ? ` (${(queuedMs / 1000).toFixed(1)} s of it waiting for query capacity)` : ''
    super(`the query ran longer than the ${timeoutMs / 1000} s time cap${waited} and was stopped`)
    this.name = 'QueryTimeoutError'
  }
}

/** Every worker is busy and the queue is full (overall, or for this caller). Nothing ran. */
export class QueryCapacityError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'QueryCapacityError'
  }
}

/** The caller cancelled (signal aborted); the work was stopped. */
export class QueryCancelledError extends Error {
  constructor() {
    super('the query was cancelled')
    this.name = 'QueryCancelledError'
  }
}

/** The query needed more memory than the per-query budget and was stopped. */
export class QueryMemoryError extends Error {
  constructor(readonly budgetMb: number) {
    super(`the query needed more than the ${budgetMb} MB query memory budget and was stopped`)
    this.name = 'QueryMemoryError'
  }
}

/**
 * The columnar engine (DuckDB) ran out of its memory limit, or of the disk space it may spill to
 * past that limit, and stopped the query. Like QueryMemoryError: the query is too big for the
 * server's settings, not a fault.
 */
export class QueryEngineLimitError extends Error {
  constructor(
    readonly resource: 'memory' | 'spill',
    /** The configured limit, as set (e.g. 1GB). */
    readonly limit: string,
    options?: ErrorOptions,
  ) {
    super(
      resource === 'memory'
        ? `the query needed more than the columnar engine's ${limit} memory limit and was stopped`
        : `the query needed more than the columnar engine's ${limit} of spill space on disk and was stopped`,
      options,
    )
    this.name = 'QueryEngineLimitError'
  }
}

/** A saved query reads a table outside `allowedTables`. */
export class QueryForbiddenError extends Error {
  constructor(readonly tables: readonly string[]) {
    super('the query reads tables outside the allowed set')
    this.name = 'QueryForbiddenError'
  }
}
