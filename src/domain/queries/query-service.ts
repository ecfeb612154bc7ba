/**
 * @module
 * Warm queries and ad-hoc KQL (spec 2.1–2.3, 4.1; design §5, §7). A warm query is found by its
 * lookup or API path and runs with its approver and approval time; an ad-hoc query is approved by
 * its caller at run time. Queries are compiled here first (fast, cached) so errors, rights and
 * scopes are settled before a worker runs anything.
 */
import { type CompiledQuery, compileQuery, dateTimeFromEpochMs, KqlError, type SqlDialectName } from '../../kql/index.js'
import type { Clock } from '../../shared/clock.js'
import type { Caller } from '../access/caller.js'
import { allowedConnections } from '../access/scope-rules.js'
import { ForbiddenError, InvalidInputError, NotFoundError } from '../errors.js'
import type { Stores } from '../stores.js'
import type { WarmQueryConfig } from '../workspace-config/config-document.js'
import type { ConfigService, CurrentConfig } from '../workspace-config/config-service.js'
import { type QueryExecutor, type QueryOutcome, QueryTimeoutError } from './query-executor.js'
import { type WorkspaceSchema, workspaceSchema } from './workspace-schema.js'

export interface QueryResponse extends QueryOutcome {
  readonly lookup?: string
  readonly rowCount: number
  /** Who approved the query (the caller for ad-hoc runs). */
  readonly approvedBy: string
  /** ISO 8601 approval time (the run time for ad-hoc runs). */
  readonly approvedAt: string
}

export interface QueryServiceDeps {
  readonly stores: Stores
  readonly config: ConfigService
  readonly executor: QueryExecutor
  readonly clock: Clock
  readonly dialect: SqlDialectName
}

/** Longest query text accepted (ad hoc and saved). */
export const MAX_QUERY_LENGTH = 100_000

export type QueryService = ReturnType<typeof createQueryService>

export function createQueryService(deps: QueryServiceDeps) {
  const { stores, config, executor, clock, dialect } = deps
  const schemas = new Map<string, { key: string; value: WorkspaceSchema }>()
  const plans = new Map<string, CompiledQuery>()

  async function schemaOf(workspaceId: string, current: CurrentConfig): Promise<WorkspaceSchema> {
    const key = `${current.seq}:${current.commitId ?? ''}`
    const hit = schemas.get(workspaceId)
    if (hit?.key === key) return hit.value
    const value = workspaceSchema(current.document, await stores.config.connectionTables(workspaceId), current.commitId)
    schemas.set(workspaceId, { key, value })
    return value
  }

  function compile(text: string, schema: WorkspaceSchema): CompiledQuery {
    const key = `${schema.version}\n${text}`
    let plan = plans.get(key)
    if (!plan) {
      try {
        plan = compileQuery(text, schema.schema, { dialect })
      } catch (error) {
        if (error instanceof KqlError)
          throw new InvalidInputError(`KQL ${error.kind === 'unsupported' ? 'not supported' : 'error'}: ${error.message}`, { cause: error })
        throw error
      }
      if (plans.size >= 1000) plans.delete(plans.keys().next().value!)
      plans.set(key, plan)
    }
    return plan
  }

  function checkScopes(caller: Caller, current: CurrentConfig, schema: WorkspaceSchema, plan: CompiledQuery): void {
    const allowed = allowedConnections(caller.scopes, current.document)
    if (!allowed) return
    const denied = plan.tables.filter((t) => !allowed.has(schema.connectionOfTable.get(t) ?? ''))
    if (denied.length)
      throw new ForbiddenError(
        `this token may not read the table${denied.length > 1 ? 's' : ''} ${denied.join(', ')} (its scopes allow other connections)`,
      )
  }

  async function run(caller: Caller, text: string, current: CurrentConfig): Promise<QueryOutcome> {
    if (text.length > MAX_QUERY_LENGTH)
      throw new InvalidInputError(`the query is ${text.length} characters long; at most ${MAX_QUERY_LENGTH} are accepted`)
    const schema = await schemaOf(caller.workspaceId, current)
    const plan = compile(text, schema)
    checkScopes(caller, current, schema, plan)
    const caps = current.document.settings.queries
    try {
      return await executor.run({
        text,
        schema: schema.schema,
        schemaVersion: schema.version,
        now: dateTimeFromEpochMs(clock.now()),
        rowCap: caps.rowCap,
        timeoutMs: Math.round(caps.timeoutSeconds * 1000),
      })
    } catch (error) {
      if (error instanceof KqlError)
        throw new InvalidInputError(`KQL ${error.kind === 'runtime' ? 'run-time error' : 'error'}: ${error.message}`, { cause: error })
      if (error instanceof QueryTimeoutError)
        throw new InvalidInputError(
          `${error.message}; narrow the time window or simplify the query (the cap is set per workspace: settings.queries.timeoutSeconds)`,
          { cause: error },
        )
      throw error
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
  async function runWarm(caller: Caller, address: string): Promise<QueryResponse> {
    const current = await config.current(caller.workspaceId)
    const query = findWarmQuery(current, address)
    if (!query.query || query.query.trim() === '')
      throw new InvalidInputError(`warm query "${query.lookup}" has no saved query text, so it cannot run`)
    const approval = current.approvals[query.lookup]
    const outcome = await run(caller, query.query, current)
    return {
      lookup: query.lookup,
      ...outcome,
      rowCount: outcome.results.length,
      approvedBy: approval?.accountName ?? '',
      approvedAt: approval ? new Date(approval.at).toISOString() : '',
    }
  }

  /** Runs ad-hoc KQL (spec 2.3): the caller vouches for it, at run time (design §5). */
  async function runAdhoc(caller: Caller, text: string): Promise<QueryResponse> {
    if (text.trim() === '') throw new InvalidInputError('Query is empty; send the KQL text to run')
    const current = await config.current(caller.workspaceId)
    const at = clock.now()
    const outcome = await run(caller, text, current)
    return { ...outcome, rowCount: outcome.results.length, approvedBy: caller.accountName, approvedAt: new Date(at).toISOString() }
  }

  /** Compiles without running (portal preview, MCP): throws InvalidInputError for bad KQL. */
  async function check(caller: Caller, text: string): Promise<{ tables: readonly string[]; columns: CompiledQuery['columns'] }> {
    const current = await config.current(caller.workspaceId)
    const schema = await schemaOf(caller.workspaceId, current)
    const plan = compile(text, schema)
    checkScopes(caller, current, schema, plan)
    return { tables: plan.tables, columns: plan.columns }
  }

  return { runWarm, runAdhoc, check, findWarmQuery }
}
