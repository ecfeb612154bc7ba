/**
 * @module
 * The port that runs KQL against the workspace's tables, off the event loop and under the caps.
 * Implemented in storage/ with a pool of worker threads (read-only SQLite connections, or
 * PostgreSQL clients in READ ONLY transactions with a statement_timeout).
 */
import type { KqlColumn, KqlSchema } from '../../kql/index.js'

export interface QueryRun {
  readonly text: string
  readonly schema: KqlSchema
  /** Part of the compiled-plan cache key. */
  readonly schemaVersion: string
  /** now() for the query, in datetime ticks. */
  readonly now: bigint
  readonly rowCap: number
  readonly timeoutMs: number
}

export interface QueryOutcome {
  readonly columns: readonly KqlColumn[]
  /** Row objects keyed by column name, values in their JSON wire form. */
  readonly results: readonly Record<string, unknown>[]
  readonly truncated: boolean
  readonly visualization?: { readonly kind: string; readonly properties: Readonly<Record<string, unknown>> }
}

export interface QueryExecutor {
  /**
   * Runs one query. MUST reject with a KqlError for a query error, and with QueryTimeoutError when
   * the time cap passes (the query MUST then really be stopped, not left running).
   */
  run(query: QueryRun): Promise<QueryOutcome>
  close(): Promise<void>
}

export class QueryTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the query ran longer than the ${timeoutMs / 1000} s time cap and was stopped`)
    this.name = 'QueryTimeoutError'
  }
}
