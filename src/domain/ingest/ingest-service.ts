/**
 * @module
 * Getting data in (issue: KQL, item 6): rows for a connection are validated against its declared
 * columns, typed, stamped with workspace-wide row ids and the ingestion time, committed in one
 * transaction, and announced on the event bus after the commit. The HTTP push endpoint is
 * all-or-nothing; the CLI import and the pull connectors may keep the rows that fit.
 */
import type { Clock } from '../../shared/clock.js'
import { type Caller, inScope } from '../access/index.js'
import { type ActivityLog, type Actor, SYSTEM_ACTOR } from '../activity/index.js'
import { ForbiddenError, InvalidInputError, NotFoundError, NotProvisionedError } from '../errors.js'
import type { Stores } from '../stores.js'
import type { EventBus } from '../streams/index.js'
import type { ConfigService, ConnectionConfig, ConnectionTable } from '../workspace-config/index.js'
import { type RowProblem, readTypedRows, type TypedRow, typeRows } from './row-validation.js'

export interface IngestResult {
  readonly connection: string
  readonly rowCount: number
  readonly firstRowId: number
  readonly lastRowId: number
  readonly ingestedAt: number
}

export interface IngestServiceDeps {
  /** Connection tables (`config`) and their rows (`data`), each batch in one transaction. */
  readonly stores: Pick<Stores, 'config' | 'data' | 'transaction'>
  readonly config: ConfigService
  readonly bus: EventBus
  readonly clock: Clock
  /** Every committed batch is a decision: recorded in the same transaction (spec 1). */
  readonly activity: ActivityLog
}

/**
 * Runs inside the transaction that stores an import's rows, after the insert and before the
 * decision record (pull connectors save their cursor here, so rows and cursor commit together).
 * Also runs, in a transaction of its own, when none of the rows fit (rowCount 0).
 */
export type InTransactionHook = (tx: Stores, batch: { rowCount: number; firstRowId: number; lastRowId: number }) => Promise<void>

export interface ImportOptions {
  /** CSV records: every value is text and the empty string means null. */
  readonly fromText?: boolean
  readonly firstRowNumber?: number
  readonly actor?: Actor
  readonly inTransaction?: InTransactionHook
}

/**
 * A push body as it arrived (the HTTP edge): its bytes, read with the connection's columns in one
 * pass (readTypedRows), and the reference reading of it, used whenever that pass gives up.
 */
export interface UnreadPushBody {
  readonly bytes: Uint8Array
  /** `array`: a JSON array of row objects; `lines`: NDJSON. */
  readonly layout: 'array' | 'lines'
  /** The rows as the strict body parser gives them; throws the body's own error (a 400). */
  readonly values: () => readonly unknown[]
}

/** Rows per push request, and per committed batch of the CLI import and connectors. */
export const MAX_PUSH_ROWS = 50_000

/** The declared contract of ingest (design §4); `createIngestService` is checked against it. */
export interface IngestService {
  /**
   * Push ingest over HTTP: all rows or none. MUST refuse a connection outside the token's scopes
   * (ForbiddenError), a connection that is not a push connection, an empty batch, more than
   * MAX_PUSH_ROWS rows or any row that does not fit the columns (InvalidInputError naming the
   * problems), and push ingest switched off (NotProvisionedError). The rows and their decision MUST
   * commit together; the rows are announced on the bus after the commit. Throws NotFoundError for
   * an unknown connection. An unread body MUST give the rows and errors its `values()` would.
   */
  push(caller: Caller, lookup: string, inputs: readonly unknown[] | UnreadPushBody): Promise<IngestResult>
  /**
   * Imports what fits and reports the rest (CLI import, pull connectors); `fromText` for CSV
   * records. `inTransaction` runs in the rows' transaction (a connector's cursor commits with its
   * rows). Returns the committed batch (undefined when no row fit) and the problems.
   */
  importRows(
    workspaceId: string,
    lookup: string,
    inputs: readonly unknown[],
    options?: ImportOptions,
  ): Promise<{ result: IngestResult | undefined; problems: RowProblem[] }>
  /** The configured connection and its table; throws NotFoundError when either is missing. */
  connectionOf(workspaceId: string, lookup: string): Promise<{ connection: ConnectionConfig; table: ConnectionTable }>
  /**
   * Rows received by each push connection of the workspace, by lookup (the Connections page).
   * Counted in the connection tables, so the figure is exact; pull connectors report theirs in
   * their status.
   */
  pushedRowCounts(workspaceId: string): Promise<Map<string, number>>
}

export function createIngestService(deps: IngestServiceDeps): IngestService {
  const { stores, config, bus, clock, activity } = deps

  async function connectionOf(workspaceId: string, lookup: string): Promise<{ connection: ConnectionConfig; table: ConnectionTable }> {
    const current = await config.current(workspaceId)
    const connection = current.document.connections.find((c) => c.lookup === lookup)
    if (!connection) throw new NotFoundError(`no data connection "${lookup}" in this workspace`)
    const table = (await stores.config.connectionTables(workspaceId)).find((t) => t.lookup === lookup)
    if (!table) throw new NotFoundError(`data connection "${lookup}" has no table yet`)
    return { connection, table }
  }

  /** Commits typed rows and announces them; the caller has checked rights and the connection's kind. */
  async function commitRows(
    workspaceId: string,
    lookup: string,
    table: ConnectionTable,
    rows: readonly TypedRow[],
    actor: Actor,
    inTransaction?: InTransactionHook,
  ): Promise<IngestResult> {
    const ingestedAt = clock.now()
    const { firstRowId, lastRowId } = await stores.transaction(async (tx) => {
      const ids = await tx.data.insertRows(table, rows, ingestedAt)
      if (inTransaction) await inTransaction(tx, { rowCount: rows.length, ...ids })
      await activity.recordDecision(
        {
          workspaceId,
          entityType: 'data-connection',
          entityId: lookup,
          actionType: 'rows-ingested',
          actor,
          details: {
            rowCount: rows.length,
            firstRowId: ids.firstRowId,
            lastRowId: ids.lastRowId,
            ingestedAt: new Date(ingestedAt).toISOString(),
          },
        },
        tx,
      )
      return ids
    })
    bus.publish({ kind: 'rows', workspaceId, connection: lookup, firstRowId, lastRowId, at: ingestedAt, rows })
    return { connection: lookup, rowCount: rows.length, firstRowId, lastRowId, ingestedAt }
  }

  function problemsMessage(problems: readonly RowProblem[], total: number): string {
    const shown = problems.slice(0, 20).map((p) => `row ${p.row}: ${p.message}`)
    const more = problems.length > shown.length ? `; … and ${problems.length - shown.length} more` : ''
    return `${problems.length} of ${total} rows do not fit the connection's columns, so none were stored: ${shown.join('; ')}${more}`
  }

  /** Push ingest over HTTP: all rows or none. */
  async function push(caller: Caller, lookup: string, body: readonly unknown[] | UnreadPushBody): Promise<IngestResult> {
    if (!inScope(caller.scopes, 'connections', lookup))
      throw new ForbiddenError(`this token is restricted to other connections than "${lookup}"`)
    const { connection, table } = await connectionOf(caller.workspaceId, lookup)
    if (connection.kind !== 'push')
      throw new InvalidInputError(
        `data connection "${lookup}" is a ${connection.kind} connection; only push connections accept rows over HTTP`,
      )
    const current = await config.current(caller.workspaceId)
    if (!current.document.settings.capabilities.connectors.push)
      throw new NotProvisionedError("push ingest is switched off in this workspace's settings")
    // The one-pass reader covers the common body; anything else (and every error) takes the
    // reference path: parse, then type, as the CLI import and the connectors do.
    const unread = isUnreadPushBody(body)
    let rows = unread ? readTypedRows(body.bytes, body.layout, table.columns) : undefined
    if (rows !== undefined) refuseBatchSize(rows.length)
    else {
      const inputs = unread ? body.values() : body
      refuseBatchSize(inputs.length)
      const typed = typeRows(table.columns, inputs)
      if (typed.problems.length > 0) throw new InvalidInputError(problemsMessage(typed.problems, inputs.length))
      rows = typed.rows
    }
    return commitRows(caller.workspaceId, lookup, table, rows, { id: caller.accountId, name: caller.accountName, via: caller.via ?? 'api' })
  }

  function refuseBatchSize(count: number): void {
    if (count === 0) throw new InvalidInputError('the batch is empty; send at least one row')
    if (count > MAX_PUSH_ROWS) throw new InvalidInputError(`a batch may hold at most ${MAX_PUSH_ROWS} rows; split this one (${count} rows)`)
  }

  function isUnreadPushBody(body: readonly unknown[] | UnreadPushBody): body is UnreadPushBody {
    return !Array.isArray(body)
  }

  /**
   * Imports what fits and reports the rest (CLI import, pull connectors). `fromText` for CSV
   * records. Returns the committed batch (if any row fit) and the problems.
   */
  async function importRows(
    workspaceId: string,
    lookup: string,
    inputs: readonly unknown[],
    options: ImportOptions = {},
  ): Promise<{ result: IngestResult | undefined; problems: RowProblem[] }> {
    const { table } = await connectionOf(workspaceId, lookup)
    const { rows, problems } = typeRows(table.columns, inputs, options)
    if (rows.length > 0)
      return { result: await commitRows(workspaceId, lookup, table, rows, options.actor ?? SYSTEM_ACTOR, options.inTransaction), problems }
    // Nothing fit, but a connector's cursor must still move past what it read.
    const hook = options.inTransaction
    if (hook) await stores.transaction((tx) => hook(tx, { rowCount: 0, firstRowId: 0, lastRowId: 0 }))
    return { result: undefined, problems }
  }

  /**
   * Rows received by each push connection (the Connections page; pull connectors keep their own
   * counters in their status). Counted in the tables: nothing on the ingest path has to keep a tally.
   */
  async function pushedRowCounts(workspaceId: string): Promise<Map<string, number>> {
    const current = await config.current(workspaceId)
    const push = new Set(current.document.connections.filter((c) => c.kind === 'push').map((c) => c.lookup))
    const tables = (await stores.config.connectionTables(workspaceId)).filter((t) => push.has(t.lookup))
    return new Map(await Promise.all(tables.map(async (t) => [t.lookup, await stores.data.rowCount(t)] as const)))
  }

  return { push, importRows, connectionOf, pushedRowCounts }
}
