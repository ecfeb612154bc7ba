/**
 * @module
 * `ingest-compaction` (issue 16): ingest through `POST /oi-api/ingest/data-connections/readings`
 * (batches of 5,000, several concurrent clients) into a fresh server with the columnar tier off
 * (the baseline) and on with the compactor running (the subject), alternating, in the same
 * process and run. Reports sustained ingest rows/s of each, the compaction rate (rows compacted
 * per second from the first acknowledged batch until the tail is empty), the largest tail
 * (acknowledged rows not yet in a segment) sampled every 100 ms, the server process's CPU seconds
 * (its event loop, the row exporter's worker and DuckDB's threads) and the load average. The
 * clients run in a process of their own (ingest-clients.ts): in this one they took a share of the
 * server's event loop.
 *
 * Rows: PROVENANT_BENCH_INGEST_ROWS (default 1,000,000); clients: PROVENANT_BENCH_INGEST_CLIENTS
 * (default 4); backends: both, or PROVENANT_BENCH_BACKEND (sqlite or postgres); rounds:
 * PROVENANT_BENCH_INGEST_ROUNDS (default 2: off, on, off, on). The clients build their request
 * bodies before the clock starts, so their JSON is not measured as ingest.
 */
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import pino from 'pino'
import type { SqlStores } from '../../src/adapters/sql/sql-stores.js'
import { loadConfig } from '../../src/config/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import type { BenchRow, Scenario } from '../harness.js'
import { BENCH_CONFIG, PG_ADMIN_URL } from './kql-dataset.js'

const CLIENTS_SCRIPT = fileURLToPath(new URL('./ingest-clients.ts', import.meta.url))
const BATCH = 5_000

const ROWS = Number(process.env.PROVENANT_BENCH_INGEST_ROWS ?? 1_000_000)
const CLIENTS = Number(process.env.PROVENANT_BENCH_INGEST_CLIENTS ?? 4)
const ROUNDS = Number(process.env.PROVENANT_BENCH_INGEST_ROUNDS ?? 2)
const BACKENDS_RUN: readonly ('sqlite' | 'postgres')[] =
  process.env.PROVENANT_BENCH_BACKEND === 'postgres'
    ? ['postgres']
    : process.env.PROVENANT_BENCH_BACKEND === 'sqlite'
      ? ['sqlite']
      : ['sqlite', 'postgres']
/** The compactor's pause between passes here (the server's default is 5 s; a pass runs until the tail is empty). */
const INTERVAL_MS = 1_000
const SEGMENT_ROWS = 1_000_000

export interface IngestCompactionOptions {
  readonly rows: number
  readonly clients: number
  readonly rounds: number
  readonly backend: 'sqlite' | 'postgres'
  /** false: only the runs with the tier on (the CI smoke checks the path, not the rates). */
  readonly baseline?: boolean
  /** How long to wait after the tail is empty for the merges that follow (default 3 intervals). */
  readonly settleMs?: number
}

export interface Run {
  readonly ingestRowsPerSecond: number
  readonly ingestSeconds: number
  /** Process CPU from the first request until drained (tier on: and settled). */
  readonly cpuSeconds: number
  /** Columnar only: seconds from the first request until the tail was empty. */
  readonly drainedSeconds?: number
  readonly largestTail?: number
  readonly segments?: number
  /** Columnar only, once drained: rows the segments hold, and what check() found. */
  readonly compactedRows?: number
  readonly checkProblems?: number
  /** Columnar only: rows the background merges rewrote (from the compactor's log). */
  readonly mergedRows?: number
  readonly load: readonly [number, number]
}

const load1 = (): number => loadavg()[0]!

async function freshServer(
  columnar: boolean,
  backend: 'sqlite' | 'postgres',
  onMerge: (rows: number) => void,
): Promise<{ runtime: Runtime; baseUrl: string; token: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-bench-ingest-'))
  let dropDatabase: (() => Promise<void>) | undefined
  let databaseUrl: string | undefined
  if (backend === 'postgres') {
    const name = `provenant_bench_ingest_${process.pid}_${Date.now()}`
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    await admin.end()
    const url = new URL(PG_ADMIN_URL)
    url.pathname = `/${name}`
    databaseUrl = url.toString()
    dropDatabase = async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    }
  }
  const env = columnar
    ? {
        PROVENANT_COLUMNAR: 'on',
        PROVENANT_COLUMNAR_INTERVAL_MS: String(INTERVAL_MS),
        PROVENANT_COLUMNAR_SEGMENT_ROWS: String(SEGMENT_ROWS),
        PROVENANT_COLUMNAR_THREADS: process.env.PROVENANT_COLUMNAR_THREADS ?? '2',
      }
    : {}
  const config = loadConfig({ data: join(dir, 'data'), port: 0, ...(databaseUrl ? { databaseUrl } : {}) }, env)
  // the compactor's log (info) tells how many rows merges rewrote; nothing else is printed
  const logger = pino(
    { level: 'info' },
    {
      write(line: string) {
        if (!line.includes('segments merged')) return
        const entry = JSON.parse(line) as { msg?: string; rows?: number }
        if (entry.msg === 'columnar: segments merged') onMerge(entry.rows ?? 0)
      },
    },
  )
  const runtime = await createRuntime(config, { logger, scryptCost: { log2N: 10, r: 8, p: 1 } })
  const baseUrl = await runtime.app.listen({ port: 0, host: '127.0.0.1' })
  const services = runtime.services
  const workspace = await services.admin.createWorkspace('bench')
  const admin = await services.admin.addAccount({
    name: 'bench-admin@bench',
    role: 'admin',
    workspaceId: workspace.id,
    password: 'bench-admin-password',
  })
  await services.config.apply(workspace.id, { accountId: admin.id, accountName: admin.name, role: 'admin' }, BENCH_CONFIG)
  const { token } = await services.access.createToken({
    workspaceId: workspace.id,
    accountId: admin.id,
    name: 'bench ingest',
    expires: '24h',
    createdBy: { id: admin.id, name: admin.name },
  })
  return {
    runtime,
    baseUrl,
    token,
    async close() {
      await runtime.close()
      await dropDatabase?.()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The clients' process (ingest-clients.ts), started and ready (bodies built); go() sends them all. */
async function startClients(baseUrl: string, token: string, options: IngestCompactionOptions): Promise<{ go(): Promise<void> }> {
  const child = fork(CLIENTS_SCRIPT, [baseUrl, token, String(options.rows), String(options.clients), String(BATCH)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const next = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`the ingest clients exited (${code})`))
      child.once('exit', onExit)
      child.once('message', (message) => {
        child.off('exit', onExit)
        resolve(String(message))
      })
    })
  const ready = await next()
  if (ready !== 'ready') throw new Error(`the ingest clients: ${ready}`)
  return {
    async go() {
      const finished = next()
      child.send('go')
      const result = await finished
      if (result !== 'done') throw new Error(`the ingest clients: ${result}`)
    },
  }
}

async function ingestRun(columnar: boolean, options: IngestCompactionOptions): Promise<Run> {
  let mergedRows = 0
  const server = await freshServer(columnar, options.backend, (rows) => {
    mergedRows += rows
  })
  try {
    const db = (server.runtime.stores as SqlStores).db
    const table = (await server.runtime.stores.config.connectionTables((await server.runtime.services.admin.listWorkspaces())[0]!.id)).find(
      (t) => t.lookup === 'readings',
    )!
    let largestTail = 0
    let sampling = columnar
    const sample = async (): Promise<number> => {
      const top = await db.get<{ n: unknown }>(`SELECT max(_rowid) AS n FROM "${table.sqlName}"`)
      const tail = Number(top?.n ?? 0) - (await server.runtime.columnar!.store.watermark(table.sqlName))
      largestTail = Math.max(largestTail, tail)
      return tail
    }
    const sampler = (async () => {
      while (sampling) {
        await sample()
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    })()
    const clients = await startClients(server.baseUrl, server.token, options)
    const load0 = load1()
    const cpu0 = process.cpuUsage()
    const started = performance.now()
    await clients.go()
    const ingestSeconds = (performance.now() - started) / 1000
    let drainedSeconds: number | undefined
    if (columnar) {
      // the compactor finishes the tail (its next pass starts within INTERVAL_MS)
      while ((await sample()) > 0) await new Promise((resolve) => setTimeout(resolve, 50))
      drainedSeconds = (performance.now() - started) / 1000
      // merges run once a pass has emptied the tail: give the next passes their time (their CPU counts)
      await new Promise((resolve) => setTimeout(resolve, options.settleMs ?? 3 * INTERVAL_MS))
    }
    sampling = false
    await sampler
    const cpu = process.cpuUsage(cpu0)
    let compacted = {}
    if (columnar) {
      const store = server.runtime.columnar!.store
      const list = await store.segments(table.sqlName)
      const report = await store.check()
      compacted = {
        drainedSeconds,
        largestTail,
        segments: list.length,
        compactedRows: list.reduce((n, s) => n + s.rowCount, 0),
        checkProblems: report.missing.length + report.mismatched.length,
        mergedRows,
      }
    }
    return {
      ingestRowsPerSecond: options.rows / ingestSeconds,
      ingestSeconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      ...compacted,
      load: [load0, load1()],
    }
  } finally {
    await server.close()
  }
}

const rate = (x: number): string => `${Math.round(x).toLocaleString('en-US')} rows/s`
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** Alternating runs, tier off then on, `rounds` of each (the bench and its CI smoke). */
export async function measureIngestCompaction(
  options: IngestCompactionOptions,
  log: (line: string) => void = console.log,
): Promise<{ off: Run[]; on: Run[] }> {
  const off: Run[] = []
  const on: Run[] = []
  for (let round = 0; round < options.rounds; round++) {
    if (options.baseline !== false) off.push(await ingestRun(false, options))
    on.push(await ingestRun(true, options))
    const [a, b] = [off.at(-1), on.at(-1)!]
    log(
      `  round ${round + 1}: off ${a ? `${rate(a.ingestRowsPerSecond)} (cpu ${a.cpuSeconds.toFixed(1)} s)` : '–'}, on ${rate(b.ingestRowsPerSecond)}, drained at ${b.drainedSeconds!.toFixed(1)} s, largest tail ${b.largestTail}, ${b.segments} segments, merges rewrote ${b.mergedRows} rows, cpu ${b.cpuSeconds.toFixed(1)} s; load ${b.load.map((l) => l.toFixed(1)).join(' → ')}`,
    )
  }
  return { off, on }
}

/** The table rows of one backend's runs. */
function backendRows(backend: string, off: readonly Run[], on: readonly Run[]): BenchRow[] {
  const offRate = median(off.map((r) => r.ingestRowsPerSecond))
  const onRate = median(on.map((r) => r.ingestRowsPerSecond))
  const compactionRate = median(on.map((r) => ROWS / r.drainedSeconds!))
  const largestTail = Math.max(...on.map((r) => r.largestTail!))
  const merged = median(on.map((r) => r.mergedRows!))
  return [
    {
      measure: `ingest, tier on with the compactor running (median of ${ROUNDS}), ${backend}`,
      subject: rate(onRate),
      baseline: `${rate(offRate)} (tier off)`,
      ratio: onRate / offRate,
      target: '≥ 250,000 rows/s, not below the tier off',
      met: onRate >= 250_000 && onRate >= offRate * 0.95,
    },
    {
      measure: `compaction rate: rows in segments ÷ seconds from the first request until the tail is empty, ${backend}`,
      subject: rate(compactionRate),
      baseline: `${rate(onRate)} (ingest, same runs)`,
      ratio: compactionRate / onRate,
      target: 'keeps up with ingest',
      met: compactionRate >= onRate * 0.9,
    },
    {
      measure: `largest tail seen (acknowledged rows not yet in a segment; sampled every 100 ms), ${backend}`,
      subject: largestTail.toLocaleString('en-US'),
      baseline: `${ROWS.toLocaleString('en-US')} rows ingested`,
      target: `≤ ${SEGMENT_ROWS.toLocaleString('en-US')} + one interval's ingest`,
      met: largestTail <= SEGMENT_ROWS + (onRate * INTERVAL_MS) / 1000,
    },
    {
      measure: `rows rewritten by background merges of small segments (per run), ${backend}`,
      subject: merged.toLocaleString('en-US'),
      baseline: `${ROWS.toLocaleString('en-US')} rows compacted`,
      ratio: merged / ROWS,
      target: '–',
      met: undefined,
    },
    {
      measure: `server process CPU seconds per run (event loop, exporter worker, DuckDB threads), ${backend}`,
      subject: `${median(on.map((r) => r.cpuSeconds)).toFixed(1)} s (tier on, until drained)`,
      baseline: `${median(off.map((r) => r.cpuSeconds)).toFixed(1)} s (tier off)`,
      target: '–',
      met: undefined,
    },
  ]
}

export const ingestCompaction: Scenario = {
  id: 'ingest-compaction',
  title: `Columnar tier: ingest over HTTP (batches of ${BATCH.toLocaleString('en-US')}, ${CLIENTS} clients) with the compactor running vs the tier off (${ROWS.toLocaleString('en-US')} rows)`,
  async run() {
    const rows: BenchRow[] = []
    const notes: string[] = [
      `Each run is a fresh server in this process, ${ROWS.toLocaleString('en-US')} bench rows (kql-dataset's shape) sent by ${CLIENTS} concurrent clients (a process of their own) in batches of ${BATCH.toLocaleString('en-US')}; runs alternate off/on, ${ROUNDS} of each. Compactor: PROVENANT_COLUMNAR_INTERVAL_MS=${INTERVAL_MS}, segments of up to ${SEGMENT_ROWS.toLocaleString('en-US')} rows, DuckDB threads ${process.env.PROVENANT_COLUMNAR_THREADS ?? '2'}. PostgreSQL's own CPU (it formats the compactor's CSV there) is not in the server process's CPU.`,
    ]
    for (const backend of BACKENDS_RUN) {
      console.log(`  ${backend}`)
      const { off, on } = await measureIngestCompaction({ rows: ROWS, clients: CLIENTS, rounds: ROUNDS, backend })
      rows.push(...backendRows(backend, off, on))
      const loads = [...off, ...on].flatMap((r) => r.load)
      notes.push(
        `${backend}: load average (1 min) during the runs ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)} (2 shared cores); segments at the end of each run (after background merges): ${on.map((r) => r.segments).join(', ')}.`,
      )
    }
    return { rows, notes }
  },
}
