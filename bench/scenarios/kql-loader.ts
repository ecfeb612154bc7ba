/**
 * @module
 * The bench datasets' loader (issue 16: up to 100,000,000 rows through the real path): a server with
 * the columnar tier on (its compactor running with the server's settings) takes the readings over
 * `POST /oi-api/ingest/data-connections/readings` from concurrent clients in a process of their own
 * (ingest-clients.ts in stream mode: batches generated on the fly, one per client in memory), so
 * the compactor moves rows into segments while they arrive and the uncompacted tail stays bounded.
 * Once the clients are done it waits until the tail is empty and the segments settle (no merge for
 * an interval), then reports the load and compaction rates, the largest tail, disk and peak RSS.
 */
import { fork } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sqliteFileOf } from '../../src/adapters/open-stores.js'
import type { SqlStores } from '../../src/adapters/sql/sql-stores.js'
import type { Runtime } from '../../src/main.js'

const CLIENTS_SCRIPT = fileURLToPath(new URL('./ingest-clients.ts', import.meta.url))
export const LOAD_BATCH = 5_000
export const LOAD_CLIENTS = Number(process.env.PROVENANT_BENCH_LOAD_CLIENTS ?? 4)

/** What one load did (kept in the dataset's cache marker, reported by kql-scale). */
export interface LoadReport {
  readonly rows: number
  readonly clients: number
  readonly batch: number
  /** From the first request until the last batch was acknowledged. */
  readonly loadSeconds: number
  readonly loadRowsPerSecond: number
  /** From the first request until the tail was empty (rows in segments ÷ this is the compaction rate). */
  readonly drainedSeconds: number
  readonly compactionRowsPerSecond: number
  /** Acknowledged rows not yet in a segment, largest sampled (every 250 ms). */
  readonly largestTail: number
  readonly segments: number
  /** The row store (SQLite file with its WAL, or the PostgreSQL database); it keeps every row (docs/design/columnar.md). */
  readonly rowStoreBytes: number
  /** The segment files the manifest lists. */
  readonly segmentBytes: number
  /** The server's process (in the bench's process) and the clients' process. */
  readonly serverPeakRssBytes: number
  readonly clientsPeakRssBytes: number
  readonly serverCpuSeconds: number
  readonly clientsCpuSeconds: number
  /** Load average (1 min) at the start and the end. */
  readonly load: readonly [number, number]
  readonly compactor: { readonly intervalMs: number; readonly segmentRows: number; readonly threads: number; readonly memoryLimit: string }
  /** The longest segment write the compactor logged during the load (ms); absent in older markers. */
  readonly longestSegmentMs?: number
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Loads `rows` readings (timestamps spread over 30 days for that many rows) into the `readings`
 * connection of a running server with the columnar tier on; `token` may ingest there.
 */
export async function loadReadings(
  runtime: Runtime,
  baseUrl: string,
  token: string,
  rows: number,
  options: {
    readonly clients?: number
    readonly log?: (line: string) => void
    /** The longest segment write so far (ms), from the server's log (the documented tail bound uses it). */
    readonly longestSegmentMs?: () => number
  } = {},
): Promise<LoadReport> {
  const columnar = runtime.columnar
  const settings = runtime.config.columnar
  if (!columnar || !settings) throw new Error('the loader needs a server with the columnar tier on')
  const clients = options.clients ?? LOAD_CLIENTS
  const log = options.log ?? console.log
  const db = (runtime.stores as SqlStores).db
  const workspaceId = (await runtime.services.admin.listWorkspaces()).find((w) => w.name === 'bench')!.id
  const table = (await runtime.stores.config.connectionTables(workspaceId)).find((t) => t.lookup === 'readings')!
  let largestTail = 0
  let serverPeakRss = process.memoryUsage.rss()
  const sample = async (): Promise<number> => {
    serverPeakRss = Math.max(serverPeakRss, process.memoryUsage.rss())
    const top = await db.get<{ n: unknown }>(`SELECT max(_rowid) AS n FROM "${table.sqlName}"`)
    const tail = Number(top?.n ?? 0) - (await columnar.store.watermark(table.sqlName))
    largestTail = Math.max(largestTail, tail)
    return tail
  }
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      await sample()
      await sleep(250)
    }
  })()
  const load0 = loadavg()[0]!
  const cpu0 = process.cpuUsage()
  const started = performance.now()
  let clientStats = { peakRssBytes: 0, cpuSeconds: 0 }
  try {
    const child = fork(CLIENTS_SCRIPT, [baseUrl, token, String(rows), String(clients), String(LOAD_BATCH), 'stream', String(rows)], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    await new Promise<void>((resolve, reject) => {
      child.on('exit', (code) => reject(new Error(`the ingest clients exited (${code})`)))
      child.on('message', (message) => {
        const text = String(message)
        if (text === 'ready') child.send('go')
        else if (text === 'done') resolve()
        else if (text.startsWith('progress ')) {
          const done = Number(text.slice('progress '.length))
          const seconds = (performance.now() - started) / 1000
          log(
            `    ${done.toLocaleString('en-US')} rows, ${Math.round(done / seconds).toLocaleString('en-US')} rows/s, largest tail ${largestTail.toLocaleString('en-US')}`,
          )
        } else if (text.startsWith('stats ')) clientStats = JSON.parse(text.slice('stats '.length))
        else reject(new Error(`the ingest clients: ${text}`))
      })
    })
    const loadSeconds = (performance.now() - started) / 1000
    // The compaction policy leaves a partial tail (and the small Sites table) in the row store
    // until it ages; the benchmark wants every row in segments now, as an operator gets them with
    // `provenant columnar compact`. Then the compactor's own passes settle the rest.
    await columnar.compactAll()
    while ((await sample()) > 0) await sleep(250)
    const drainedSeconds = (performance.now() - started) / 1000
    // ...and merges small segments after it: settled when no segment changed for an interval and a second
    let ids = ''
    let stableSince = performance.now()
    while (performance.now() - stableSince < settings.intervalMs + 1_000) {
      const now = (await columnar.store.segments()).map((s) => s.id).join()
      if (now !== ids) {
        ids = now
        stableSince = performance.now()
      }
      await sleep(250)
    }
    sampling = false
    await sampler
    const cpu = process.cpuUsage(cpu0)
    const segments = await columnar.store.segments(table.sqlName)
    return {
      rows,
      clients,
      batch: LOAD_BATCH,
      loadSeconds,
      loadRowsPerSecond: rows / loadSeconds,
      drainedSeconds,
      compactionRowsPerSecond: rows / drainedSeconds,
      largestTail,
      segments: segments.length,
      rowStoreBytes: await rowStoreBytes(runtime),
      segmentBytes: segments.reduce((n, s) => n + fileBytes(join(settings.dir, table.sqlName, s.fileName)), 0),
      serverPeakRssBytes: Math.max(serverPeakRss, process.resourceUsage().maxRSS * 1024),
      clientsPeakRssBytes: clientStats.peakRssBytes,
      serverCpuSeconds: (cpu.user + cpu.system) / 1e6,
      clientsCpuSeconds: clientStats.cpuSeconds,
      load: [load0, loadavg()[0]!],
      ...(options.longestSegmentMs ? { longestSegmentMs: options.longestSegmentMs() } : {}),
      compactor: {
        intervalMs: settings.intervalMs,
        segmentRows: settings.segmentRows,
        threads: settings.threads,
        memoryLimit: settings.memoryLimit,
      },
    }
  } finally {
    sampling = false
    await sampler
  }
}

const fileBytes = (file: string): number => (existsSync(file) ? statSync(file).size : 0)

/** Bytes under a directory (its files, recursively). */
export function directoryBytes(dir: string): number {
  if (!existsSync(dir)) return 0
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .reduce((n, e) => n + fileBytes(join(e.parentPath, e.name)), 0)
}

async function rowStoreBytes(runtime: Runtime): Promise<number> {
  if (runtime.config.databaseUrl) {
    const row = await (runtime.stores as SqlStores).db.get<{ n: unknown }>('SELECT pg_database_size(current_database()) AS n')
    return Number(row?.n ?? 0)
  }
  const file = sqliteFileOf(runtime.config.dataDir)
  return fileBytes(file) + fileBytes(`${file}-wal`)
}

/** "1.2 GB" */
export function bytes(n: number): string {
  return n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(0)} MB` : `${(n / 1e3).toFixed(0)} kB`
}
