/**
 * @module
 * The KQL benchmarks' data: a workspace with a `Readings` table of PROVENANT_BENCH_ROWS rows
 * (default 1,000,000; kql-scale up to 100,000,000) and a small `Sites` dimension table, built per
 * backend through the real path (kql-loader.ts: `POST /oi-api/ingest/data-connections/readings`
 * in batches of 5,000 from concurrent clients, into a server with the columnar tier on and its
 * compactor running). The row store keeps every row (docs/design/columnar.md), so the same
 * dataset serves the row-store scenarios and, through its segments, the columnar one. Building it
 * takes minutes, so it is cached by its parameters: the data directory (with its segments) and the
 * PostgreSQL database are kept under names derived from DATASET_VERSION and the row count, and
 * reused until those change; a marker written only when the build is complete tells a finished
 * cache from an interrupted one, which is built again (delete $TMPDIR/provenant-bench-kql-* and the
 * provenant_bench_kql_* databases to rebuild).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import pino from 'pino'
import { sqliteFileOf } from '../../src/adapters/open-stores.js'
import type { SqlStores } from '../../src/adapters/sql/sql-stores.js'
import type { Services } from '../../src/domain/services.js'
import type { ConnectionTable } from '../../src/domain/workspace-config/config-store.js'
import type { KqlSchema } from '../../src/kql/index.js'
import type { Runtime } from '../../src/main.js'
import { benchWorkspace, createBenchRuntime, issueBenchToken, scratchDatabase } from '../bench-server.js'
import { type LoadReport, loadReadings } from './kql-loader.js'

export type BenchBackend = 'sqlite' | 'postgres'

/** Bump when the generated data or the configuration below changes. */
const DATASET_VERSION = 2
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

/** Deterministic rows: row i of a dataset of `total` rows (the same on every machine). */
export function readingRow(i: number, total = DATASET_ROWS): Record<string, unknown> {
  const ticks = T0 + (SPAN_TICKS * BigInt(i)) / BigInt(total)
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

/** Whether the PostgreSQL database `name` exists (a cached dataset's marker without it is incomplete). */
async function pgDatabaseExists(name: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL })
  await admin.connect()
  try {
    return ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount ?? 0) > 0
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

/** Where a dataset of `rows` readings is cached for a backend (its directory; PostgreSQL: its database too). */
function cacheOf(backend: BenchBackend, rows: number): { dir: string; marker: string; pgName: string } {
  const dir = join(tmpdir(), `provenant-bench-kql-v${DATASET_VERSION}-${rows}-${backend}`)
  return { dir, marker: join(dir, 'complete.json'), pgName: `provenant_bench_kql_v${DATASET_VERSION}_${rows}` }
}

/** What the cache marker holds: written only once the dataset is complete. */
export interface DatasetMarker {
  readonly workspaceId: string
  readonly rows: number
  readonly builtAt: string
  readonly load: LoadReport
}

/**
 * Builds a dataset of `rows` readings (and the Sites rows) in `dataDir` (PostgreSQL: at
 * `databaseUrl`, empty) through the real path: a server with the columnar tier on, its compactor
 * running with the server's settings (`env` may change them), the rows pushed over HTTP by
 * kql-loader's clients. Returns the load report; the server is closed again.
 */
export async function buildDataset(
  dataDir: string,
  rows: number,
  options: { readonly databaseUrl?: string; readonly env?: NodeJS.ProcessEnv; readonly log?: (line: string) => void } = {},
): Promise<{ workspaceId: string; tables: ConnectionTable[]; load: LoadReport }> {
  // the compactor's segment writes, from its log: the documented tail bound counts the longest
  let longestSegmentMs = 0
  const logger = pino(
    { level: 'info' },
    {
      write(line: string) {
        if (line.includes('"columnar: segment written"')) longestSegmentMs = Math.max(longestSegmentMs, JSON.parse(line).ms ?? 0)
        else if (/"level":(4|5|6)0/.test(line)) process.stderr.write(line)
      },
    },
  )
  const runtime = await createBenchRuntime(dataDir, logger, {
    databaseUrl: options.databaseUrl,
    env: { ...options.env, PROVENANT_COLUMNAR: 'on' },
  })
  try {
    const baseUrl = await runtime.app.listen({ port: 0, host: '127.0.0.1' })
    const { workspaceId, admin } = await benchWorkspace(runtime.services, BENCH_CONFIG)
    const token = await issueBenchToken(runtime.services, workspaceId, admin, { name: 'bench ingest', expires: '24h' })
    await pushOverHttp(baseUrl, token, 'sites', SITE_ROWS.length, (i) => SITE_ROWS[i]!)
    const load = await loadReadings(runtime, baseUrl, token, rows, {
      ...(options.log ? { log: options.log } : {}),
      longestSegmentMs: () => longestSegmentMs,
    })
    if (options.databaseUrl) await (runtime.stores as SqlStores).db.run('VACUUM ANALYZE')
    return { workspaceId, tables: await runtime.stores.config.connectionTables(workspaceId), load }
  } finally {
    await runtime.close()
  }
}

/**
 * Starts a server (the columnar tier off: kql-scale opens the segments itself) on the cached
 * dataset of `rows` readings of a backend, building it first when there is none or the one there
 * is incomplete (no marker: a build was interrupted).
 */
export async function openDataset(backend: BenchBackend, rows = DATASET_ROWS): Promise<Dataset & { marker: DatasetMarker }> {
  const cache = cacheOf(backend, rows)
  const databaseUrl = backend === 'postgres' ? pgUrl(cache.pgName) : undefined
  if (backend === 'postgres' && existsSync(cache.marker) && !(await pgDatabaseExists(cache.pgName))) rmSync(cache.marker)
  if (!existsSync(cache.marker)) {
    if (existsSync(cache.dir)) console.log(`  the cached ${backend} dataset in ${cache.dir} is incomplete (no marker): building it again`)
    rmSync(cache.dir, { recursive: true, force: true })
    mkdirSync(cache.dir, { recursive: true })
    if (backend === 'postgres') await scratchDatabase(PG_ADMIN_URL, cache.pgName)
    console.log(
      `  building the ${backend} dataset: ${rows.toLocaleString('en-US')} rows through HTTP with the columnar tier on (cached for later runs in ${cache.dir})`,
    )
    const built = await buildDataset(join(cache.dir, 'data'), rows, { ...(databaseUrl ? { databaseUrl } : {}) })
    const marker: DatasetMarker = { workspaceId: built.workspaceId, rows, builtAt: new Date().toISOString(), load: built.load }
    writeFileSync(cache.marker, JSON.stringify(marker, null, 2))
  }
  const marker = JSON.parse(readFileSync(cache.marker, 'utf8')) as DatasetMarker
  // The warm-query load sends 16 requests at once from one account, against a baseline that uses
  // every core for its one client: the account may use both workers and queue 64 queries (the
  // defaults, one worker per account and 8 waiting, are a fairness policy between accounts that
  // this comparison of overheads would otherwise measure instead; docs/configuration.md).
  const runtime = await createBenchRuntime(join(cache.dir, 'data'), quiet, {
    databaseUrl,
    env: { PROVENANT_QUERY_PER_CALLER: '2', PROVENANT_QUERY_QUEUE_PER_CALLER: '64' },
  })
  const services = runtime.services
  await runtime.app.listen({ port: 0, host: '127.0.0.1' })
  const workspace = (await services.admin.listWorkspaces()).find((w) => w.name === 'bench')!
  const benchAccount = async (role: 'admin' | 'analyst', workspaceId: string) =>
    (await runtime.stores.access.accountByName(`bench-${role}@bench`)) ??
    (await services.admin.addAccount({ name: `bench-${role}@bench`, role, workspaceId, password: `bench-${role}-password` }))
  const analyst = await benchAccount('analyst', workspace.id)
  const analystToken = await issueBenchToken(services, workspace.id, analyst, { expires: '24h' })
  const tables = await runtime.stores.config.connectionTables(workspace.id)
  const { schema, sqlNames } = schemaOf(tables)
  return {
    backend,
    runtime,
    services,
    workspaceId: workspace.id,
    schema,
    sqlNames,
    analystToken,
    ...(databaseUrl ? { databaseUrl } : { sqliteFile: sqliteFileOf(runtime.config.dataDir) }),
    marker,
    close: () => runtime.close(),
  }
}

/** The KQL schema of the bench connections' tables, and their physical names by KQL table name. */
export function schemaOf(tables: readonly ConnectionTable[]): { schema: KqlSchema; sqlNames: Record<string, string> } {
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
  return { schema, sqlNames }
}

function pgUrl(name: string): string {
  const url = new URL(PG_ADMIN_URL)
  url.pathname = `/${name}`
  return url.toString()
}
