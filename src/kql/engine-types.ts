/**
 * @module
 * Types of the engine's entry points (see index.ts).
 */
import type { KqlColumn } from './schema.js'
import type { KqlValue } from './types.js'

export type SqlDialectName = 'sqlite' | 'postgres' | 'duckdb'

export interface CompileOptions {
  /** The SQL dialect the workspace tables live in. */
  readonly dialect: SqlDialectName
  /**
   * Push what the dialect can answer exactly into SQL (default true). false reads whole tables and
   * evaluates everything in memory (the reference the pushdown is tested against).
   */
  readonly pushdown?: boolean
}

/**
 * Runs SQL that the engine generated. Implemented by storage (a read-only SQLite connection in a
 * worker thread, or a PostgreSQL client inside a READ ONLY transaction).
 */
export interface SqlSource {
  /**
   * Runs one read-only SELECT with positional parameters and returns its rows, each decoded into
   * the engine's value model for the given column types (use the dialect's decodeValue()).
   * Parameters are the dialect's driver values (bigint for 64-bit integers). When the database
   * refuses the data rather than failing (PostgreSQL data exceptions, SQLSTATE class 22, and the
   * SQLite functions' refusals), it MUST reject with SqlRefusalError: the engine then evaluates
   * that part in memory.
   */
  query(sql: string, params: readonly unknown[], columns: readonly KqlColumn[]): Promise<KqlValue[][]> | KqlValue[][]
}

export interface ExecuteOptions {
  /** now() for the whole query, in datetime ticks (100 ns since the Unix epoch). */
  readonly now: bigint
  /** At most this many rows are returned; `truncated` is set when the result had more. */
  readonly rowCap: number
  /** Seed for rand()/sample; defaults to a fixed seed. */
  readonly seed?: number
  /** Aborts the run between rows/statements (the time cap); the run rejects with the signal's reason. */
  readonly signal?: AbortSignal
}

/** `render` is accepted and returned as a hint, never executed. */
export interface Visualization {
  readonly kind: string
  readonly properties: Readonly<Record<string, unknown>>
}

export interface QueryResult {
  readonly columns: readonly KqlColumn[]
  readonly rows: readonly (readonly KqlValue[])[]
  readonly truncated: boolean
  readonly visualization?: Visualization
}

export interface CompiledQuery {
  readonly text: string
  /** The result columns, known before running. */
  readonly columns: readonly KqlColumn[]
  /** Workspace tables the query reads (by KQL name): the caller checks rights and scopes on these. */
  readonly tables: readonly string[]
  readonly visualization?: Visualization
  /**
   * True when some result columns depend on the data (evaluate bag_unpack() without an output
   * schema, evaluate pivot()): `columns` then lists only those known before running, and the
   * QueryResult's columns are the authoritative ones.
   */
  readonly dynamicSchema?: boolean
  /**
   * Runs the query; `source` may be omitted when `tables` is empty. Rejects with a KqlError for
   * query errors (kind 'runtime'), with the signal's reason when aborted, and with the source's
   * own error, unchanged, when the database fails.
   */
  execute(source: SqlSource | undefined, options: ExecuteOptions): Promise<QueryResult>
}
