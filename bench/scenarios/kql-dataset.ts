/**
 * @module
 * The KQL benchmarks' data: a workspace with a 1,000,000-row `Readings` table (and a small `Sites`
 * dimension table), ingested through HTTP (`POST /oi-api/ingest/data-connections/{lookup}`,
 * batches of 1,000) into a real server, per backend. Building it takes minutes on a small
 * machine, so it is cached by its parameters: the SQLite data directory and the PostgreSQL
 * database are kept under names derived from DATASET_VERSION and the row count, and reused until
 * those change (delete $TMPDIR/provenant-bench-kql-* and the provenant_bench_kql_* databases to
 * rebuild).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import pino from 'pino'
import { sqliteFileOf } from '../../src/adapters/open-stores.js'
import type { Services } from '../../src/domain/services.js'
import type { KqlSchema } from '../../src/kql/index.js'
import type { Runtime } from '../../src/main.js'
import { applyAsAdmin, createBenchRuntime, issueBenchToken } from '../bench-server.js'

export type BenchBackend = 'sqlite' | 'postgres'

/** Bump when the generated data or the configuration below changes. */
const DATASET_VERSION = 1
export const DATASET_ROWS = Number(process.env.PROVENANT_BENCH_ROWS ?? 1_000_000)
export const PG_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** 2026-01-01T00:00:00Z in ticks; the rows span 30 days from there, in time order. */
export const T0 = 1_767_225_600_000n * 10_000n
const SPAN_TICKS = 30n * 86_400n * 10_000_000n
export const SITES = ['north', 'south', 'east', 'west', 'plant-a', 'plant-b', 'harbor', 'airport'] as const
export const SENSORS = 200

export const BENCH_CONFIG = {
  connections: [
    {
      lookup: 'readings',
      kind: 'push',
      table: 'Readings',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'sensor', type: 'string' },
        { name: 'site', type: 'string' },
        { name: 'value', type: 'real' },
        { name: 'status', type: 'long' },
        { name: 'note', type: 'string' },
      ],
    },
    {
      lookup: 'sites',
      kind: 'push',
      table: 'Sites',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'site', type: 'string' },
        { name: 'region', type: 'string' },
        { name: 'capacity', type: 'long' },
      ],
    },
  ],
  warmQueries: [
    {
      lookup: 'sensor-hourly',
      path: 'bench/sensor-hourly',
      description: 'One sensor, hourly average over the last two days of data',
      query: 'Readings | where timestamp >= datetime(2026-01-29) and sensor == "s-042" | summarize avg(value) by bin(timestamp, 1h)',
    },
  ],
}

/** Deterministic rows: row i of the dataset (the same on every machine). */
export function readingRow(i: number): Record<string, unknown> {
  const ticks = T0 + (SPAN_TICKS * BigInt(i)) / BigInt(DATASET_ROWS)
  const ms = Number(ticks / 10_000n)
  const sensorIndex = (i * 7919) % SENSORS
  const r = ((i * 2654435761) >>> 0) / 2 ** 32
  const status = r < 0.01 ? 500 : r < 0.015 ? 503 : r < 0.025 ? 404 : 200
  const note =
    status === 500
      ? 'error: timeout on line 3'
      : status === 503
        ? 'ERROR disk full'
        : status === 404
          ? 'not found'
          : r > 0.95
            ? 'maintenance window'
            : ''
  return {
    timestamp: new Date(ms).toISOString(),
    sensor: `s-${String(sensorIndex).padStart(3, '0')}`,
    site: SITES[sensorIndex % SITES.length],
    value: Math.round((20 + 10 * Math.sin(i / 5000) + (r - 0.5) * 4) * 100) / 100,
    status,
    note,
  }
}

export const SITE_ROWS = SITES.map((site, k) => ({
  timestamp: '2026-01-01T00:00:00Z',
  site,
  region: k < 4 ? 'EU' : 'US',
  capacity: 10 + k,
}))

export interface Dataset {
  readonly backend: BenchBackend
  readonly runtime: Runtime
  readonly services: Services
  readonly workspaceId: string
  readonly schema: KqlSchema
  /** Physical table names by KQL table name. */
  readonly sqlNames: Readonly<Record<string, string>>
  readonly sqliteFile?: string
  readonly databaseUrl?: string
  /** A token of the analyst (warm-queries:read, queries:run). */
  readonly analystToken: string
  close(): Promise<void>
}

const quiet = pino({ level: 'warn' })

async function ensurePgDatabase(name: string): Promise<{ url: string; existed: boolean }> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL })
  await admin.connect()
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${name}`)
    const url = new URL(PG_ADMIN_URL)
    url.pathname = `/${name}`
    return { url: url.toString(), existed: (found.rowCount ?? 0) > 0 }
  } finally {
    await admin.end()
  }
}

/** Pushes rows through the HTTP ingest endpoint in batches, `concurrency` requests at a time; returns rows/s. */
export async function pushOverHttp(
  baseUrl: string,
  token: string,
  lookup: string,
  count: number,
  row: (i: number) => Record<string, unknown>,
  options: { batch?: number; concurrency?: number; onProgress?: (done: number) => void } = {},
): Promise<number> {
  const batch = options.batch ?? 1000
  const concurrency = options.concurrency ?? 2
  let next = 0
  let done = 0
  const started = performance.now()
  async function worker(): Promise<void> {
    for (;;) {
      const start = next
      if (start >= count) return
      next += batch
      const rows = Array.from({ length: Math.min(batch, count - start) }, (_, k) => row(start + k))
      const response = await fetch(`${baseUrl}/oi-api/ingest/data-connections/${lookup}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(rows),
      })
      if (response.status !== 200) throw new Error(`ingest failed: ${response.status} ${await response.text()}`)
      await response.arrayBuffer()
      done += rows.length
      options.onProgress?.(done)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return count / ((performance.now() - started) / 1000)
}

/** Starts a server on the cached dataset of a backend, building the dataset first when needed. */
export async function openDataset(backend: BenchBackend): Promise<Dataset> {
  const key = `v${DATASET_VERSION}-${DATASET_ROWS}`
  const dir = join(tmpdir(), `provenant-bench-kql-${key}-${backend}`)
  const marker = join(dir, 'complete.json')
  mkdirSync(dir, { recursive: true })
  let databaseUrl: string | undefined
  let fresh = !existsSync(marker)
  if (backend === 'postgres') {
    const db = await ensurePgDatabase(`provenant_bench_kql_v${DATASET_VERSION}_${DATASET_ROWS}`)
    databaseUrl = db.url
    if (!db.existed) fresh = true
  }
  // A dataset cached by a version that created its database 0644 is made private, as an operator
  // upgrading would (the server refuses a database others may read).
  for (const suffix of ['', '-wal', '-shm']) {
    const file = `${sqliteFileOf(join(dir, 'data'))}${suffix}`
    if (existsSync(file)) chmodSync(file, 0o600)
  }
  // The warm-query load sends 16 requests at once from one account, against a baseline that uses
  // every core for its one client: the account may use both workers and queue 64 queries (the
  // defaults, one worker per account and 8 waiting, are a fairness policy between accounts that
  // this comparison of overheads would otherwise measure instead; docs/configuration.md).
  const runtime = await createBenchRuntime(join(dir, 'data'), quiet, {
    databaseUrl,
    env: { PROVENANT_QUERY_PER_CALLER: '2', PROVENANT_QUERY_QUEUE_PER_CALLER: '64' },
  })
  const services = runtime.services
  const baseUrl = await runtime.app.listen({ port: 0, host: '127.0.0.1' })
  let workspace = (await services.admin.listWorkspaces()).find((w) => w.name === 'bench')
  // the cached dataset's accounts are reused; a fresh one gets them
  const benchAccount = async (role: 'admin' | 'analyst', workspaceId: string) =>
    (await runtime.stores.access.accountByName(`bench-${role}@bench`)) ??
    (await services.admin.addAccount({ name: `bench-${role}@bench`, role, workspaceId, password: `bench-${role}-password` }))
  if (!workspace || fresh) {
    if (!workspace) workspace = await services.admin.createWorkspace('bench')
    const admin = await benchAccount('admin', workspace.id)
    await applyAsAdmin(services, workspace.id, admin, BENCH_CONFIG)
    const table = (await runtime.stores.config.connectionTables(workspace.id)).find((t) => t.lookup === 'readings')!
    if ((await runtime.stores.config.countRows(table)) > 0)
      throw new Error(`the cached ${backend} dataset is incomplete: delete ${dir}${databaseUrl ? ` and ${databaseUrl}` : ''} and run again`)
    const token = await issueBenchToken(services, workspace.id, admin, { name: 'bench ingest', expires: '24h' })
    console.log(
      `  building the ${backend} dataset: ${DATASET_ROWS.toLocaleString('en-US')} rows through HTTP (cached for later runs in ${dir})`,
    )
    let shown = 0
    await pushOverHttp(baseUrl, token, 'readings', DATASET_ROWS, readingRow, {
      onProgress: (done) => {
        if (done - shown >= 100_000) {
          shown = done
          console.log(`    ${done.toLocaleString('en-US')} rows`)
        }
      },
    })
    await pushOverHttp(baseUrl, token, 'sites', SITE_ROWS.length, (i) => SITE_ROWS[i]!)
    if (databaseUrl) {
      const client = new pg.Client({ connectionString: databaseUrl })
      await client.connect()
      await client.query('VACUUM ANALYZE')
      await client.end()
    }
    writeFileSync(marker, JSON.stringify({ workspaceId: workspace.id, rows: DATASET_ROWS, builtAt: new Date().toISOString() }))
  }
  const analyst = await benchAccount('analyst', workspace.id)
  const analystToken = await issueBenchToken(services, workspace.id, analyst, { expires: '24h' })
  const tables = await runtime.stores.config.connectionTables(workspace.id)
  const sqlNames = Object.fromEntries(BENCH_CONFIG.connections.map((c) => [c.table, tables.find((t) => t.lookup === c.lookup)!.sqlName]))
  const schema: KqlSchema = {
    tables: BENCH_CONFIG.connections.map((c) => ({
      name: c.table,
      columns: c.columns.map((col) => ({ name: col.name, type: col.type as 'string' })),
      hiddenColumns: [
        { name: '_rowid', type: 'long' },
        { name: '_ingested_at', type: 'datetime' },
      ],
      sqlName: sqlNames[c.table]!,
    })),
  }
  JSON.parse(readFileSync(marker, 'utf8'))
  return {
    backend,
    runtime,
    services,
    workspaceId: workspace.id,
    schema,
    sqlNames,
    analystToken,
    ...(databaseUrl ? { databaseUrl } : { sqliteFile: sqliteFileOf(runtime.config.dataDir) }),
    close: () => runtime.close(),
  }
}
