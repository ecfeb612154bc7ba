/**
 * @module
 * `kql-scale` (issue 16): the bench dataset, loaded through the real path (kql-loader.ts: ingest
 * over HTTP from concurrent clients into a server with the columnar tier on, its compactor turning
 * the rows into Parquet segments while they arrive; cached), then the benchmark queries as KQL
 * pushed into DuckDB over the segments (the view of segments + tail the tier reads) against the
 * same queries hand-written in DuckDB SQL over the same files, in the same run, alternating; for
 * the before/after table, the KQL engine on today's SQLite row store; and the warm query over HTTP
 * through a server with the tier on.
 *
 * Rows: PROVENANT_BENCH_ROWS (default 1,000,000; the issue's run is 100,000,000, too slow for CI:
 * its smoke is test/scale/kql-scale-smoke.test.ts). The row store side runs on a dataset of
 * PROVENANT_BENCH_ROW_STORE_ROWS rows (default the same, at most 10,000,000: beyond that its
 * queries pass the 30 s cap). Runs per query: PROVENANT_BENCH_RUNS (default 7, 5 above 10M rows),
 * PROVENANT_BENCH_ROW_STORE_RUNS (default 3; 0 leaves the row store out). DuckDB: the server's
 * settings, PROVENANT_COLUMNAR_THREADS / PROVENANT_COLUMNAR_MEMORY (defaults 2 and 1GB).
 */
import { loadavg } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pino from 'pino'
import { createSqliteQuerySource, registerKqlFunctions } from '../../src/adapters/query-workers/query-source.js'
import { compileQuery, type SqlSource } from '../../src/kql/index.js'
import { createBenchRuntime } from '../bench-server.js'
import type { BenchRow, Scenario } from '../harness.js'
import { BENCH_CONFIG, DATASET_ROWS, type Dataset, type DatasetMarker, openDataset } from './kql-dataset.js'
import { bytes, type LoadReport } from './kql-loader.js'
import { BENCH_QUERIES } from './kql-queries.js'
import { openSegmentQueries, QUERY_NOW } from './kql-segment-queries.js'

/** The row store's size limit here: at 100M rows its scans pass the query time cap (30 s). */
const ROW_STORE_MAX_ROWS = 10_000_000
const ROW_STORE_ROWS = Number(process.env.PROVENANT_BENCH_ROW_STORE_ROWS ?? Math.min(DATASET_ROWS, ROW_STORE_MAX_ROWS))
const RUNS = Number(process.env.PROVENANT_BENCH_RUNS ?? (DATASET_ROWS > ROW_STORE_MAX_ROWS ? 5 : 7))
/** Runs of each query on the SQLite row store (slow at 10M rows; 0 leaves the row store out). */
const ROW_STORE_RUNS = Number(process.env.PROVENANT_BENCH_ROW_STORE_RUNS ?? 3)

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
const ms = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)) + ' ms'
const count = (n: number): string => Math.round(n).toLocaleString('en-US')
async function time(fn: () => Promise<unknown> | unknown, cpu?: { ms: number }): Promise<number> {
  const startCpu = process.cpuUsage()
  const start = performance.now()
  await fn()
  const wall = performance.now() - start
  if (cpu) {
    const used = process.cpuUsage(startCpu)
    cpu.ms += (used.user + used.system) / 1000
  }
  return wall
}

/** The table rows of the dataset's load (from its cache marker: measured when it was built). */
function loadRows(marker: DatasetMarker): BenchRow[] {
  const l: LoadReport = marker.load
  const when = `built ${marker.builtAt.slice(0, 16).replace('T', ' ')} UTC, load ${l.load.map((x) => x.toFixed(1)).join(' → ')}`
  // docs/design/columnar.md: a segment, plus what arrives during one interval and one segment write
  const writeMs = l.longestSegmentMs ?? 0
  const tailBound = l.compactor.segmentRows + (l.loadRowsPerSecond * (l.compactor.intervalMs + writeMs)) / 1000
  return [
    {
      measure: `load: ingest over HTTP (${l.clients} clients, batches of ${count(l.batch)}) into a server with the columnar tier on, compactor running (server defaults)`,
      subject: `${count(l.loadRowsPerSecond)} rows/s`,
      baseline: `${count(l.rows)} rows in ${l.loadSeconds.toFixed(0)} s (${when})`,
      target: '≥ 250,000 rows/s',
      met: l.loadRowsPerSecond >= 250_000,
    },
    {
      measure: 'load: compaction rate (rows in segments ÷ seconds from the first request until the tail was empty)',
      subject: `${count(l.compactionRowsPerSecond)} rows/s`,
      baseline: `tail empty at ${l.drainedSeconds.toFixed(0)} s; largest tail ${count(l.largestTail)} rows (sampled every 250 ms)`,
      ratio: l.compactionRowsPerSecond / l.loadRowsPerSecond,
      target: `keeps up; tail ≤ ${count(tailBound)} (segment rows + the ingest of one interval and the longest segment write, ${l.longestSegmentMs === undefined ? 'not recorded in this cache' : `${writeMs} ms`})`,
      met: l.compactionRowsPerSecond >= 0.9 * l.loadRowsPerSecond && l.largestTail <= tailBound,
    },
    {
      measure: 'load: disk (the row store keeps every row) and peak RSS',
      subject: `segments ${bytes(l.segmentBytes)} (${l.segments} files, ${(l.segmentBytes / l.rows).toFixed(1)} B/row)`,
      baseline: `row store ${bytes(l.rowStoreBytes)} (${(l.rowStoreBytes / l.rows).toFixed(0)} B/row); peak RSS server ${bytes(l.serverPeakRssBytes)}, clients ${bytes(l.clientsPeakRssBytes)}`,
      target: '–',
      met: undefined,
    },
  ]
}

export const kqlScale: Scenario = {
  id: 'kql-scale',
  title: `Columnar tier: KQL on DuckDB over Parquet segments vs hand-written DuckDB SQL, and vs the SQLite row store (${DATASET_ROWS.toLocaleString('en-US')} rows)`,
  async run() {
    const dataset = await openDataset('sqlite')
    let rowStoreDataset: Dataset | undefined
    const rows: BenchRow[] = loadRows(dataset.marker)
    const notes: string[] = []
    const cpuNotes: string[] = []
    let peakRss = 0
    const rssSampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage.rss())
    }, 50)
    const tables = await dataset.runtime.stores.config.connectionTables(dataset.workspaceId)
    const queries = await openSegmentQueries(dataset.sqliteFile!, tables)
    const { threads, memoryLimit } = queries.settings
    let reader: Database.Database | undefined
    /** The row store's slowest query (median), for the note on why it runs on fewer rows. */
    let slowest = { id: '', ms: 0 }
    try {
      // today's path, for the before/after table: the KQL engine on the SQLite row store (at most 10M rows)
      let rowStore: SqlSource | undefined
      if (ROW_STORE_RUNS > 0) {
        rowStoreDataset = ROW_STORE_ROWS === DATASET_ROWS ? dataset : await openDataset('sqlite', ROW_STORE_ROWS)
        reader = new Database(rowStoreDataset.sqliteFile!, { readonly: true, fileMustExist: true })
        reader.pragma('query_only = ON')
        registerKqlFunctions(reader)
        rowStore = createSqliteQuerySource(reader)
      }
      const rowStoreLabel = ROW_STORE_ROWS === DATASET_ROWS ? 'row store (SQLite)' : `row store (SQLite) at ${count(ROW_STORE_ROWS)} rows`
      for (const q of BENCH_QUERIES) {
        const query = await queries.prepare(q)
        const first = await query.kql()
        const base = await query.hand()
        const expectedRows = q.id === 'make-series' ? 2 : base.length
        if (first.rows.length !== expectedRows)
          throw new Error(`${q.id}: KQL on DuckDB returned ${first.rows.length} rows, hand-written ${expectedRows}`)
        const engine: number[] = []
        const handTimes: number[] = []
        // CPU of the whole process (DuckDB's threads included): less noisy than wall time on a shared machine
        const engineCpu = { ms: 0 }
        const handCpu = { ms: 0 }
        const runEngine = async () => engine.push(await time(query.kql, engineCpu))
        const runBaseline = async () => handTimes.push(await time(query.hand, handCpu))
        // each side goes first every other run: the first statement after a pause pays for waking
        // DuckDB's threads (window-count at 10M rows measured 2× when the engine always went first)
        for (let i = 0; i < RUNS; i++) {
          if (i % 2 === 0) {
            await runEngine()
            await runBaseline()
          } else {
            await runBaseline()
            await runEngine()
          }
        }
        cpuNotes.push(
          `${q.id} ${(engineCpu.ms / RUNS).toFixed(0)}/${(handCpu.ms / RUNS).toFixed(0)} (${(engineCpu.ms / handCpu.ms).toFixed(2)}×)`,
        )
        const e = median(engine)
        const h = median(handTimes)
        let vsRowStore = ''
        if (rowStore && rowStoreDataset) {
          const lite = compileQuery(q.kql, rowStoreDataset.schema, { dialect: 'sqlite' })
          const liteTimes: number[] = []
          for (let i = 0; i < ROW_STORE_RUNS; i++)
            liteTimes.push(await time(() => lite.execute(rowStore, { now: QUERY_NOW, rowCap: 10_000_000 })))
          const r = median(liteTimes)
          if (r > slowest.ms) slowest = { id: q.id, ms: r }
          vsRowStore = `; ${rowStoreLabel} ${ms(r)}, ${(r / e).toFixed(r / e >= 10 ? 0 : r / e >= 1 ? 1 : 2)}× ${ROW_STORE_ROWS === DATASET_ROWS && r >= e ? 'slower' : 'the time'}`
        }
        // progress: a 100M-row run takes long
        console.log(`  ${q.id}: KQL on DuckDB ${ms(e)}, hand-written ${ms(h)}${vsRowStore}`)
        rows.push({
          measure: `\`${q.id}\`, KQL on DuckDB/Parquet`,
          subject: ms(e),
          baseline: `${ms(h)} hand-written DuckDB SQL${vsRowStore}`,
          ratio: e / h,
          target: '≤ 1.5×',
          met: e / h <= 1.5,
        })
        if (e / h > 1.5) notes.push(`\`${q.id}\` missed 1.5× (${(e / h).toFixed(2)}×): ${planOutline(query.compiled)}`)
      }
    } finally {
      clearInterval(rssSampler)
      reader?.close()
      await queries.close()
      if (rowStoreDataset && rowStoreDataset !== dataset) await rowStoreDataset.close()
      await dataset.close()
    }
    // the issue's warm-query target, through the real server with the tier on (the segments are
    // complete: its compactor finds nothing to do)
    const warm = await warmQueryOverHttp(join(dataset.sqliteFile!, '..'), dataset.analystToken)
    rows.push({
      measure: `warm query \`${BENCH_CONFIG.warmQueries[0]!.lookup}\` over HTTP, columnar tier on, one client`,
      subject: `p50 ${ms(warm.p50)}`,
      baseline: `p90 ${ms(warm.p90)}, ${warm.requests} requests after ${WARM_UP} warm-up`,
      target: 'p50 < 250 ms',
      met: warm.p50 < 250,
    })
    const load = loadavg()
      .map((x) => x.toFixed(1))
      .join(', ')
    const l = dataset.marker.load
    return {
      rows,
      notes: [
        `Load average at the end of the run (1, 5, 15 min): ${load} on 2 cores shared with other jobs; on this machine the figures move by ±2× between runs.`,
        `Dataset: bench/scenarios/kql-dataset.ts (${count(DATASET_ROWS)} readings), loaded by bench/scenarios/kql-loader.ts: ${l.clients} clients in a process of their own post batches of ${count(l.batch)} generated on the fly to \`POST /oi-api/ingest/data-connections/readings\` of a server (in the bench's process) with PROVENANT_COLUMNAR=on and the compactor's defaults (interval ${l.compactor.intervalMs} ms, segments of up to ${count(l.compactor.segmentRows)} rows, DuckDB threads ${l.compactor.threads}, memory ${l.compactor.memoryLimit}), which writes zstd Parquet segments sorted by timestamp while the rows arrive and merges small ones. The load figures are from when the cache was built (server CPU ${l.serverCpuSeconds.toFixed(0)} s, clients CPU ${l.clientsCpuSeconds.toFixed(0)} s).`,
        `Queries: KQL runs through the duckdb dialect on the view the tier queries (segments + the row-store tail, here empty); the hand-written DuckDB SQL reads the same files with read_parquet. One DuckDB instance with the server's settings (threads ${threads}, memory_limit ${memoryLimit}); peak RSS of the bench process during the queries ${bytes(peakRss)}. Median of ${RUNS} runs each, alternating (each side first every other run), after a warm-up.`,
        ...(ROW_STORE_RUNS > 0
          ? [
              ROW_STORE_ROWS === DATASET_ROWS
                ? `Row store: the KQL engine's sqlite dialect on the same dataset's SQLite file, median of ${ROW_STORE_RUNS} runs.`
                : `Row store: the KQL engine's sqlite dialect on the ${count(ROW_STORE_ROWS)}-row dataset (built the same way), median of ${ROW_STORE_RUNS} runs: its full scans grow with the rows, and the slowest here, \`${slowest.id}\`, took ${(slowest.ms / 1000).toFixed(1)} s at ${count(ROW_STORE_ROWS)} rows, about ${((slowest.ms / 1000) * (DATASET_ROWS / ROW_STORE_ROWS)).toFixed(0)} s at ${count(DATASET_ROWS)} (the query time cap is 30 s); "N× the time" compares the row store at ${count(ROW_STORE_ROWS)} rows with the segments at ${count(DATASET_ROWS)}.`,
            ]
          : []),
        `CPU per run, ms, KQL/hand-written (the whole process, DuckDB's threads included): ${cpuNotes.join('; ')}.`,
        `Warm query over HTTP: \`${BENCH_CONFIG.warmQueries[0]!.query}\` as GET /oi-api/warm-queries/${BENCH_CONFIG.warmQueries[0]!.path} on a server started with PROVENANT_COLUMNAR=on over the same data directory and segments (token check, rights, call recording, plan cache, query worker, DuckDB over the segments), one request at a time.`,
        "`has-count`: the hand-written SQL matches the term with Unicode letters and digits as term characters (Kusto's definition, what the engine answers); the common ASCII-only regular expression, which counts a term glued to a non-ASCII letter, takes about 0.8× of the engine's time on the same files (44 vs 52 ms CPU at 10M rows, measured by hand).",
        'Elsewhere: three PostgreSQL processes sharing the segments, every answer compared (the kql-shared-segments scenario); ingest with and without the compactor, alternating (the ingest-compaction scenario).',
        ...notes,
      ],
    }
  },
}

/** The SQL statements the engine sent, for a missed target's note. */
function planOutline(q: ReturnType<typeof compileQuery>): string {
  const out: string[] = []
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return
    const n = node as { kind?: string; sql?: string }
    if (n.kind === 'SqlQuery' && n.sql) {
      out.push(n.sql)
      return
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'fallback' && typeof v === 'object') walk(v)
  }
  walk(q.executable)
  return out.map((s) => `\`${s.length > 400 ? `${s.slice(0, 400)}…` : s}\``).join('; ')
}

const WARM_UP = 5
const WARM_REQUESTS = Number(process.env.PROVENANT_BENCH_WARM_REQUESTS ?? 40)

/** Latency of the bench's warm query through a server with the columnar tier on, one request at a time. */
async function warmQueryOverHttp(dataDir: string, token: string): Promise<{ p50: number; p90: number; requests: number }> {
  const runtime = await createBenchRuntime(dataDir, pino({ level: 'warn' }), { env: { PROVENANT_COLUMNAR: 'on' } })
  try {
    const url = `${await runtime.app.listen({ port: 0, host: '127.0.0.1' })}/oi-api/warm-queries/${BENCH_CONFIG.warmQueries[0]!.path}`
    const headers = { authorization: `Bearer ${token}` }
    const once = async (): Promise<number> => {
      const start = performance.now()
      const response = await fetch(url, { headers })
      if (response.status !== 200) throw new Error(`warm query failed: ${response.status} ${await response.text()}`)
      await response.arrayBuffer()
      return performance.now() - start
    }
    for (let i = 0; i < WARM_UP; i++) await once()
    const times: number[] = []
    for (let i = 0; i < WARM_REQUESTS; i++) times.push(await once())
    times.sort((a, b) => a - b)
    return { p50: median(times), p90: times[Math.floor(times.length * 0.9)]!, requests: times.length }
  } finally {
    await runtime.close()
  }
}
