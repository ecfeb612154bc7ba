/**
 * @module
 * The `postgres` pull connector (issue 6, item 2): polls a read-only query against an external
 * PostgreSQL database. The connector wraps the configured query (the query contract, README
 * "Pull connectors"):
 *
 *   SELECT q.*, q.<cursor>::text, q.<tiebreak>::text FROM (<query>) AS q
 *    WHERE (q.<cursor>, q.<tiebreak>) > ($1, $2) ORDER BY q.<cursor>, q.<tiebreak> LIMIT <batchSize>
 *
 * inside a READ ONLY transaction with a statement timeout. The last row's (cursor, tiebreak) is the
 * new cursor, saved in the same transaction as the ingested rows, so each source row is ingested
 * exactly once across restarts. A non-unique cursor column (updated_at) needs a tiebreak column
 * (a unique id); without one the cursor column alone must be unique and increasing.
 */
import pg from 'pg'
import { z } from 'zod'
import {
  type ConnectorContext,
  type ConnectorFactory,
  ConnectorSettingsError,
  type RunningConnector,
} from '../../domain/connectors/connector-supervisor.js'
import type { ColumnConfig } from '../../domain/workspace-config/config-document.js'
import { parseDynamicJson } from '../../kql/index.js'
import { stringifyExact } from '../../shared/exact-json.js'

const identifier = z.string().min(1).max(63)

export const postgresSettingsSchema = z.strictObject({
  host: z.string().min(1).optional(),
  port: z.number().int().min(1).max(65535).optional(),
  database: z.string().min(1).optional(),
  user: z.string().min(1).optional(),
  /** A SELECT (no trailing semicolon, no parameters); the connector wraps it. */
  query: z.string().min(1).max(100_000),
  cursorColumn: identifier,
  /** A unique column that orders rows sharing a cursor value (required when the cursor is not unique). */
  tiebreakColumn: identifier.optional(),
  intervalSeconds: z.number().min(0.05).max(86_400).default(10),
  batchSize: z.number().int().min(1).max(50_000).default(1000),
  statementTimeoutSeconds: z.number().min(0.1).max(3600).default(30),
  ssl: z.union([z.boolean(), z.strictObject({ rejectUnauthorized: z.boolean().optional(), ca: z.string().optional() })]).optional(),
})

export type PostgresSettings = z.output<typeof postgresSettingsSchema>

export interface PostgresCursor {
  readonly value: string
  readonly tiebreak?: string
}

const CURSOR_ALIAS = '__provenant_cursor'
const TIEBREAK_ALIAS = '__provenant_tiebreak'

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

function settingsProblem(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? `settings.${i.path.join('.')}` : 'settings'}: ${i.message}`).join('; ')
}

export function parsePostgresSettings(settings: unknown): PostgresSettings {
  const parsed = postgresSettingsSchema.safeParse(settings)
  if (!parsed.success) throw new ConnectorSettingsError(`postgres connector: ${settingsProblem(parsed.error)}`)
  return parsed.data
}

/** The wrapped polling statement; `$1` (and `$2` with a tiebreak) bind the last cursor. */
export function pollStatement(settings: PostgresSettings, hasCursor: boolean): string {
  const inner = settings.query.trim().replace(/;+\s*$/, '')
  const cursor = `q.${quote(settings.cursorColumn)}`
  const tiebreak = settings.tiebreakColumn ? `q.${quote(settings.tiebreakColumn)}` : undefined
  const select = `SELECT q.*, (${cursor})::text AS ${CURSOR_ALIAS}${tiebreak ? `, (${tiebreak})::text AS ${TIEBREAK_ALIAS}` : ''} FROM (${inner}) AS q`
  const where = !hasCursor ? '' : tiebreak ? ` WHERE (${cursor}, ${tiebreak}) > ($1, $2)` : ` WHERE ${cursor} > $1`
  const order = ` ORDER BY ${cursor}${tiebreak ? `, ${tiebreak}` : ''}`
  return `${select}${where}${order} LIMIT ${settings.batchSize}`
}

// Timestamps and dates stay text (exact to the microsecond; the ingest path parses them), int8 is a
// number when exact, numeric stays text (the ingest path types it per column), json and jsonb keep
// integers beyond 2^53 as exact longs (pg's own parser is JSON.parse, which rounds them).
const TEXT_OIDS = new Set([1082, 1114, 1184])
const JSON_OIDS = new Set([114, 3802])
export const sourceTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (TEXT_OIDS.has(oid)) return (value: string) => value
    if (JSON_OIDS.has(oid)) return (value: string) => parseDynamicJson(value)
    if (oid === 20) return (value: string) => (Number.isSafeInteger(Number(value)) ? Number(value) : value)
    return pg.types.getTypeParser(oid, format as 'text')
  },
}

/** One source row to the connection's declared columns, matched by name (exact, else ignoring case). */
export function mapRow(columns: readonly ColumnConfig[], row: Record<string, unknown>): Record<string, unknown> {
  const lower = new Map(Object.keys(row).map((k) => [k.toLowerCase(), k]))
  const out: Record<string, unknown> = {}
  for (const column of columns) {
    const key = column.name in row ? column.name : lower.get(column.name.toLowerCase())
    if (key === undefined) continue
    let value = row[key]
    if (value instanceof Date) value = value.toISOString()
    if (column.type === 'string' && value !== null && value !== undefined && typeof value !== 'string')
      value = typeof value === 'object' ? stringifyExact(value) : String(value)
    out[column.name] = value
  }
  return out
}

function clientConfig(settings: PostgresSettings, credentials: Readonly<Record<string, string>> | undefined): pg.ClientConfig {
  const ssl = settings.ssl === undefined ? undefined : settings.ssl === true ? {} : settings.ssl === false ? false : { ...settings.ssl }
  const common = {
    application_name: 'provenant-connector',
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
    types: sourceTypes as unknown as pg.CustomTypesConfig,
    ...(ssl !== undefined ? { ssl } : {}),
  }
  if (credentials?.['connectionString']) return { ...common, connectionString: credentials['connectionString'] }
  if (!settings.host || !settings.database)
    throw new ConnectorSettingsError(
      'postgres connector: settings.host and settings.database are required unless the credentials hold a connectionString',
    )
  return {
    ...common,
    host: settings.host,
    port: settings.port ?? 5432,
    database: settings.database,
    ...((settings.user ?? credentials?.['user']) ? { user: settings.user ?? credentials?.['user'] } : {}),
    ...(credentials?.['password'] !== undefined ? { password: credentials['password'] } : {}),
  }
}

function parseCursor(text: string | undefined): PostgresCursor | undefined {
  if (!text) return undefined
  const value = JSON.parse(text) as PostgresCursor
  return typeof value?.value === 'string' ? value : undefined
}

export const postgresConnector: ConnectorFactory = (ctx: ConnectorContext): RunningConnector => {
  const settings = parsePostgresSettings(ctx.connection.settings)
  const config = clientConfig(settings, ctx.credentials)
  let cursor = parseCursor(ctx.cursor)
  if (cursor && settings.tiebreakColumn && cursor.tiebreak === undefined) cursor = undefined
  let stopping = false
  let wake: (() => void) | undefined
  let connectionError: Error | undefined

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        wake = undefined
        resolve()
      }
      wake = done
    })

  async function poll(client: pg.Client): Promise<number> {
    const statement = pollStatement(settings, cursor !== undefined)
    const params = cursor === undefined ? [] : settings.tiebreakColumn ? [cursor.value, cursor.tiebreak] : [cursor.value]
    await client.query('BEGIN TRANSACTION READ ONLY')
    let result: pg.QueryResult<Record<string, unknown>>
    try {
      await client.query(`SET LOCAL statement_timeout = ${Math.round(settings.statementTimeoutSeconds * 1000)}`)
      result = await client.query<Record<string, unknown>>(statement, params)
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    }
    const rows = result.rows
    if (rows.length === 0) return 0
    const last = rows[rows.length - 1]!
    const next: PostgresCursor = {
      value: String(last[CURSOR_ALIAS]),
      ...(settings.tiebreakColumn ? { tiebreak: String(last[TIEBREAK_ALIAS]) } : {}),
    }
    if (last[CURSOR_ALIAS] === null || (settings.tiebreakColumn && last[TIEBREAK_ALIAS] === null)) {
      throw new Error(
        `postgres connector: the query returned a row whose ${settings.cursorColumn}${settings.tiebreakColumn ? ` or ${settings.tiebreakColumn}` : ''} is NULL; the cursor columns must never be NULL (filter them out in the query)`,
      )
    }
    const inputs = rows.map((r) => mapRow(ctx.connection.columns, r))
    await ctx.ingest(inputs, JSON.stringify(next))
    cursor = next
    return rows.length
  }

  async function run(): Promise<void> {
    const client = new pg.Client(config)
    client.on('error', (error) => {
      connectionError = error
      wake?.()
    })
    try {
      await client.connect()
      await client.query("SET TIME ZONE 'UTC'")
      while (!stopping) {
        if (connectionError) throw connectionError
        const count = await poll(client)
        await ctx.healthy()
        if (count === settings.batchSize || stopping) continue
        await sleep(settings.intervalSeconds * 1000)
      }
    } finally {
      await client.end().catch(() => {})
    }
  }

  const done = run()
  return {
    done,
    async stop() {
      stopping = true
      wake?.()
      await done.catch(() => {})
    },
  }
}
