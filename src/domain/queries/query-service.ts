/**
 * @module
 * Warm queries and ad-hoc KQL (spec 2.1–2.3, 4.1; design §5, §7, §14). A warm query is found by
 * its lookup or API path and runs with its approver and approval time; an ad-hoc query is approved
 * by its caller at run time.
 *
 * No KQL work happens here (issue 15): compiling and running both go to the QueryExecutor (worker
 * threads), under the workspace's time cap, the server's memory budget and fair sharing per
 * account. Scopes (issue 14 item 8): text the caller wrote (ad-hoc, proposals, previews) compiles
 * against a schema holding only the tables its scopes allow, so other connections' tables and
 * columns do not exist for it (`getschema`, "did you mean", `union *`, errors). Saved warm queries
 * compile against the whole schema and are refused with a 403 that names no table when they read
 * outside the scopes.
 *
 * Cancellation: `runWarm`/`runAdhoc`/`check` take `{ signal }`; aborting it stops the query on the
 * server (the worker is terminated, its PostgreSQL session ended) and the call rejects with a
 * 400 saying it was cancelled. The HTTP route aborts when the client disconnects.
 */
import { dateTimeFromEpochMs, type KqlColumn, KqlError, type SqlDialectName } from '../../kql/index.js'
import type { Clock } from '../../shared/clock.js'
import { allowedConnections, type Caller } from '../access/index.js'
import { ForbiddenError, InvalidInputError, NotFoundError, UnavailableError } from '../errors.js'
import type { Stores } from '../stores.js'
import type { ConfigService, CurrentConfig, WarmQueryConfig } from '../workspace-config/index.js'
import {
  QueryCancelledError,
  QueryCapacityError,
  QueryEngineLimitError,
  type QueryExecutor,
  QueryForbiddenError,
  QueryMemoryError,
  type QueryOutcome,
  QueryTimeoutError,
} from './query-executor.js'
import { scopedSchema, type WorkspaceSchema, workspaceSchema } from './workspace-schema.js'

export interface QueryResponse extends QueryOutcome {
  readonly lookup?: string
  readonly rowCount: number
  /** Who approved the query (the caller for ad-hoc runs). */
  readonly approvedBy: string
  /** ISO 8601 approval time (the run time for ad-hoc runs). */
  readonly approvedAt: string
}

export interface QueryServiceDeps {
  /** Only the connection tables are read (the schema a query compiles against). */
  readonly stores: Pick<Stores, 'config'>
  readonly config: ConfigService
  readonly executor: QueryExecutor
  readonly clock: Clock
  readonly dialect: SqlDialectName
}

export interface QueryCallOptions {
  /** Aborting stops the query on the server (portal Cancel button, a disconnected HTTP client). */
  readonly signal?: AbortSignal
}

/** Longest query text accepted (ad hoc and saved). */
export const MAX_QUERY_LENGTH = 100_000

/** The declared contract of warm and ad-hoc queries; `createQueryService` is checked against it. */
export interface QueryService {
  /**
   * Runs a saved warm query found by its lookup, else by its API path (slashes at either end
   * ignored), against the caller's workspace (spec 4.1). MUST refuse a query without saved text
   * with InvalidInputError (spec 2.1) and one reading outside the caller's scopes with
   * ForbiddenError naming no table. Returns the rows with the approver and ISO approval time;
   * throws NotFoundError for an unknown address, InvalidInputError for KQL, time-cap, memory and
   * cancellation failures, UnavailableError when the workers are saturated.
   */
  runWarm(caller: Caller, address: string, options?: QueryCallOptions): Promise<QueryResponse>
  /**
   * Runs ad-hoc KQL (spec 2.3) that MUST compile against only the tables the caller's scopes allow
   * (other tables do not exist for it). Returns the rows approved by the caller at run time; throws
   * InvalidInputError for text over MAX_QUERY_LENGTH or bad KQL, as `runWarm` otherwise.
   */
  runAdhoc(caller: Caller, text: string, options?: QueryCallOptions): Promise<QueryResponse>
  /**
   * Compiles without running (portal preview, MCP, proposal validation). The caller's own text MUST
   * see only its scoped tables; a saved query's text (`savedAs` its lookup) sees the whole schema
   * and MUST be refused with ForbiddenError when it reads outside the scopes. Returns the tables
   * read and the result columns; throws InvalidInputError for bad KQL.
   */
  check(
    caller: Caller,
    text: string,
    options?: QueryCallOptions & { readonly savedAs?: string },
  ): Promise<{ tables: readonly string[]; columns: readonly KqlColumn[] }>
  /** The warm query with this lookup, else this API path, in `current`; throws NotFoundError. Pure. */
  findWarmQuery(current: CurrentConfig, address: string): WarmQueryConfig
  /**
   * The tables and typed columns the caller's own text may read, exactly what ad-hoc text compiles
   * against (scopes applied, hidden columns left out), each with its connection's lookup.
   */
  schemaFor(caller: Caller): Promise<{ table: string; connection: string; columns: readonly KqlColumn[] }[]>
}

export function createQueryService(deps: QueryServiceDeps): QueryService {
  const { stores, config, executor, clock } = deps
  const schemas = new Map<string, { key: string; value: WorkspaceSchema }>()
  const scoped = new Map<string, WorkspaceSchema>()

  async function fullSchema(workspaceId: string, current: CurrentConfig): Promise<WorkspaceSchema> {
    const key = `${current.seq}:${current.commitId ?? ''}`
    const hit = schemas.get(workspaceId)
    if (hit?.key === key) return hit.value
    const value = workspaceSchema(current.document, await stores.config.connectionTables(workspaceId), current.commitId)
    schemas.set(workspaceId, { key, value })
    return value
  }

  /** The schema the caller's own text compiles against: only the tables its scopes allow. */
  async function callerSchema(caller: Caller, current: CurrentConfig): Promise<WorkspaceSchema> {
    const full = await fullSchema(caller.workspaceId, current)
    const allowed = allowedConnections(caller.scopes, current.document)
    if (!allowed) return full
    const key = `${caller.workspaceId}\n${full.version}\n${[...allowed].sort().join('\n')}`
    let value = scoped.get(key)
    if (!value) {
      value = scopedSchema(full, allowed)
      if (scoped.size >= 200) scoped.delete(scoped.keys().next().value!)
      scoped.set(key, value)
    }
    return value
  }

  /** Tables a saved query may read for this caller, or undefined when every table is allowed. */
  async function allowedTables(caller: Caller, current: CurrentConfig): Promise<string[] | undefined> {
    const allowed = allowedConnections(caller.scopes, current.document)
    if (!allowed) return undefined
    const full = await fullSchema(caller.workspaceId, current)
    return [...full.connectionOfTable].filter(([, connection]) => allowed.has(connection)).map(([table]) => table)
  }

  function checkLength(text: string): void {
    if (text.length > MAX_QUERY_LENGTH)
      throw new InvalidInputError(`the query is ${text.length} characters long; at most ${MAX_QUERY_LENGTH} are accepted`)
  }

  /** The executor's failures as the domain's errors (each maps to one HTTP status). */
  function domainError(error: unknown, what: string): unknown {
    if (error instanceof KqlError) {
      const label = error.kind === 'runtime' ? 'run-time error' : error.kind === 'unsupported' ? 'not supported' : 'error'
      return new InvalidInputError(`KQL ${label}: ${error.message}`, { cause: error })
    }
    if (error instanceof QueryTimeoutError)
      return new InvalidInputError(
        `${error.message}; narrow the time window or simplify the query (the cap is set per workspace: settings.queries.timeoutSeconds)`,
        { cause: error },
      )
    if (error instanceof QueryMemoryError)
      return new InvalidInputError(
        `${error.message}; filter or summarize earlier so less data is held at once (the budget is set per server: PROVENANT_QUERY_MEMORY_MB)`,
        { cause: error },
      )
    if (error instanceof QueryEngineLimitError)
      return new InvalidInputError(
        `${error.message}; narrow the time range, or filter or summarize earlier so less data is held at once, or raise the server's ${error.resource === 'memory' ? 'PROVENANT_COLUMNAR_MEMORY' : 'PROVENANT_COLUMNAR_SPILL'}`,
        { cause: error },
      )
    if (error instanceof QueryCapacityError) return new UnavailableError(error.message, { cause: error })
    if (error instanceof QueryCancelledError) return new InvalidInputError(`${what} was cancelled by its caller`, { cause: error })
    return error
  }

  async function run(
    caller: Caller,
    text: string,
    current: CurrentConfig,
    saved: string | undefined,
    options: QueryCallOptions,
  ): Promise<QueryOutcome> {
    checkLength(text)
    const schema = saved ? await fullSchema(caller.workspaceId, current) : await callerSchema(caller, current)
    const limited = saved ? await allowedTables(caller, current) : undefined
    const caps = current.document.settings.queries
    try {
      return await executor.run({
        text,
        schema: schema.schema,
        schemaVersion: schema.version,
        caller: caller.accountId,
        now: dateTimeFromEpochMs(clock.now()),
        rowCap: caps.rowCap,
        timeoutMs: Math.round(caps.timeoutSeconds * 1000),
        ...(limited ? { allowedTables: limited } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      })
    } catch (error) {
      if (error instanceof QueryForbiddenError)
        throw new ForbiddenError(`warm query "${saved}" reads connections this token's scopes do not include`, { cause: error })
      throw domainError(error, 'the query')
    }
  }

  function findWarmQuery(current: CurrentConfig, address: string): WarmQueryConfig {
    const trimmed = address.replace(/^\/+|\/+$/g, '')
    const query =
      current.document.warmQueries.find((q) => q.lookup === trimmed) ?? current.document.warmQueries.find((q) => q.path === trimmed)
    if (!query) throw new NotFoundError(`no warm query has the lookup or API path "${trimmed}"`)
    return query
  }

  /** Runs a saved, approved query by its lookup or API path (spec 4.1). */
  async function runWarm(caller: Caller, address: string, options: QueryCallOptions = {}): Promise<QueryResponse> {
    const current = await config.current(caller.workspaceId)
    const query = findWarmQuery(current, address)
    if (!query.query || query.query.trim() === '')
      throw new InvalidInputError(`warm query "${query.lookup}" has no saved query text, so it cannot run`)
    const approval = current.approvals[query.lookup]
    const outcome = await run(caller, query.query, current, query.lookup, options)
    return {
      lookup: query.lookup,
      ...outcome,
      rowCount: outcome.results.length,
      approvedBy: approval?.accountName ?? '',
      approvedAt: approval ? new Date(approval.at).toISOString() : '',
    }
  }

  /** Runs ad-hoc KQL (spec 2.3): the caller vouches for it, at run time (design §5). */
  async function runAdhoc(caller: Caller, text: string, options: QueryCallOptions = {}): Promise<QueryResponse> {
    if (text.trim() === '') throw new InvalidInputError('Query is empty; send the KQL text to run')
    const current = await config.current(caller.workspaceId)
    const at = clock.now()
    const outcome = await run(caller, text, current, undefined, options)
    return { ...outcome, rowCount: outcome.results.length, approvedBy: caller.accountName, approvedAt: new Date(at).toISOString() }
  }

  /**
   * Compiles without running (portal preview, MCP, proposal validation) in a query worker: throws
   * InvalidInputError for bad KQL. The caller's own text (default) sees only the tables its scopes
   * allow; a saved warm query's text (`savedAs` its lookup) is refused with a ForbiddenError when it
   * reads outside them.
   */
  async function check(
    caller: Caller,
    text: string,
    options: QueryCallOptions & { readonly savedAs?: string } = {},
  ): Promise<{ tables: readonly string[]; columns: readonly KqlColumn[] }> {
    checkLength(text)
    const current = await config.current(caller.workspaceId)
    const saved = options.savedAs
    const schema = saved ? await fullSchema(caller.workspaceId, current) : await callerSchema(caller, current)
    let outcome: { tables: readonly string[]; columns: readonly KqlColumn[] }
    try {
      outcome = await executor.check({
        text,
        schema: schema.schema,
        schemaVersion: schema.version,
        caller: caller.accountId,
        timeoutMs: Math.round(current.document.settings.queries.timeoutSeconds * 1000),
        ...(options.signal ? { signal: options.signal } : {}),
      })
    } catch (error) {
      throw domainError(error, 'checking the query')
    }
    const limited = saved ? await allowedTables(caller, current) : undefined
    if (limited && outcome.tables.some((t) => !limited.includes(t)))
      throw new ForbiddenError(`warm query "${saved}" reads connections this token's scopes do not include`)
    return outcome
  }

  /**
   * The tables and typed columns the caller's own text may read (its scopes applied), for an
   * editor's completion and schema panel: exactly what ad-hoc text compiles against, hidden columns
   * left out (they are named explicitly only). Each table comes with its connection's lookup.
   */
  async function schemaFor(caller: Caller): Promise<{ table: string; connection: string; columns: readonly KqlColumn[] }[]> {
    const current = await config.current(caller.workspaceId)
    const schema = await callerSchema(caller, current)
    return schema.schema.tables.map((t) => ({
      table: t.name,
      connection: schema.connectionOfTable.get(t.name) ?? '',
      columns: t.columns.map((c) => ({ name: c.name, type: c.type })),
    }))
  }

  return { runWarm, runAdhoc, check, findWarmQuery, schemaFor }
}
