/**
 * @module
 * `kql-scale` (issue 16): the bench dataset (ingested through HTTP into the row store, cached) is
 * compacted into Parquet segments by the columnar tier's compactor (cached too, beside the
 * dataset), then the benchmark queries run as KQL pushed into DuckDB over the segments
 * (src/adapters/columnar: the view of segments + tail the tier reads) against the same queries
 * hand-written in DuckDB SQL over the same files, in the same run, alternating; and, for the
 * before/after table, the KQL engine on today's SQLite row store.
 *
 * Rows: PROVENANT_BENCH_ROWS (default 1,000,000). DuckDB: PROVENANT_COLUMNAR_THREADS (default 2),
 * PROVENANT_COLUMNAR_MEMORY (default 1GB).
 */
import { rmSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import Database from 'better-sqlite3'
import pino from 'pino'
import { createColumnarStore } from '../../src/adapters/columnar/columnar-store.js'
import { appendRows, duckdbColumnDefs } from '../../src/adapters/columnar/duckdb-values.js'
import { createSqliteQuerySource, registerKqlFunctions } from '../../src/adapters/query-workers/query-source.js'
import { decodeValue } from '../../src/adapters/sql/column-codec.js'
import { quoteIdent, type SqlDb } from '../../src/adapters/sql/sql-db.js'
import { createSqliteDb, openSqliteDatabase } from '../../src/adapters/sqlite/sqlite-db.js'
import { loadConfig } from '../../src/config/config.js'
import type { ConnectionTable } from '../../src/domain/workspace-config/config-store.js'
import { compileQuery, type SqlSource } from '../../src/kql/index.js'
import { createRuntime } from '../../src/main.js'
import type { BenchRow, Scenario } from '../harness.js'
import { BENCH_CONFIG, DATASET_ROWS, openDataset, T0 } from './kql-dataset.js'
import { BENCH_QUERIES } from './kql-queries.js'

const RUNS = Number(process.env.PROVENANT_BENCH_RUNS ?? 7)
/** Runs of each query on the SQLite row store (slow at 10M rows; 0 leaves the row store out). */
const ROW_STORE_RUNS = Number(process.env.PROVENANT_BENCH_ROW_STORE_RUNS ?? 3)
/** Rows the first slice's compaction path is timed on (it is slow). */
const REFERENCE_ROWS = 200_000

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
const ms = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)) + ' ms'
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

export const kqlScale: Scenario = {
  id: 'kql-scale',
  title: `Columnar tier: KQL on DuckDB over Parquet segments vs hand-written DuckDB SQL, and vs the SQLite row store (${DATASET_ROWS.toLocaleString('en-US')} rows)`,
  async run() {
    const dataset = await openDataset('sqlite')
    const rows: BenchRow[] = []
    const notes: string[] = []
    const cpuNotes: string[] = []
    const db = createSqliteDb(openSqliteDatabase(dataset.sqliteFile!))
    const duck = await DuckDBInstance.create(':memory:', {
      threads: process.env.PROVENANT_COLUMNAR_THREADS ?? '2',
      memory_limit: process.env.PROVENANT_COLUMNAR_MEMORY ?? '1GB',
    })
    const segmentsDir = join(dataset.sqliteFile!, '..', 'segments')
    // rows read by the exporter's worker thread, as in the server
    const store = createColumnarStore(db, duck, { dir: segmentsDir, segmentRows: 1_000_000, sqliteFile: dataset.sqliteFile! })
    const tables = await dataset.runtime.stores.config.connectionTables(dataset.workspaceId)
    try {
      // compaction (cached: only rows above the watermark are compacted); first, for the
      // before/after figure, the first slice's row-by-row path on the same rows
      const readings = tables.find((t) => t.sqlName === dataset.sqlNames['Readings'])!
      if ((await store.watermark(readings.sqlName)) === 0) {
        const before = await rowByRowReference(db, duck, readings, REFERENCE_ROWS, join(segmentsDir, '..'))
        rows.push({
          measure: "compaction, first slice's path (row objects → KQL values → one appender call per value), same rows",
          subject: `${Math.round(before.rows / before.seconds).toLocaleString('en-US')} rows/s`,
          baseline: `${before.rows.toLocaleString('en-US')} rows in ${before.seconds.toFixed(1)} s`,
          target: '–',
          met: true,
        })
      }
      let compacted = 0
      const started = performance.now()
      for (const table of tables) {
        for (;;) {
          const r = await store.compact(table)
          if (!r) break
          compacted += r.segment.rowCount
        }
      }
      const seconds = (performance.now() - started) / 1000
      if (compacted > 0) {
        rows.push({
          measure:
            'compaction: row store → Parquet segments (CSV pages formatted by SQLite in a worker thread, parsed by DuckDB, sort, zstd, manifest)',
          subject: `${Math.round(compacted / seconds).toLocaleString('en-US')} rows/s`,
          baseline: `${compacted.toLocaleString('en-US')} rows in ${seconds.toFixed(1)} s`,
          target: '≥ 250,000 rows/s (keeps up with ingest)',
          met: compacted / seconds >= 250_000,
        })
      } else notes.push('Segments were cached from an earlier run (compaction rate measured when they are built).')
      const columnar = await store.openQuerySource(tables)
      const hand = await duck.connect()
      const files = async (kqlName: string): Promise<string> => {
        const sqlName = dataset.sqlNames[kqlName]!
        const list = await store.segments(sqlName)
        return `read_parquet([${list.map((s) => `'${join(segmentsDir, sqlName, s.fileName)}'`).join(', ')}])`
      }
      const fromR = await files('Readings')
      const fromS = await files('Sites')
      const reader = new Database(dataset.sqliteFile!, { readonly: true, fileMustExist: true })
      reader.pragma('query_only = ON')
      registerKqlFunctions(reader)
      const rowStore: SqlSource = createSqliteQuerySource(reader)
      const now = T0 + 40n * 86_400n * 10_000_000n
      try {
        for (const q of BENCH_QUERIES) {
          const sql = q.sql.duckdb.replaceAll('{R}', fromR).replaceAll('{S}', fromS)
          const prepared = await hand.prepare(sql)
          const runHand = async () => {
            prepared.bind(q.params as never)
            return (await prepared.runAndReadAll()).getRows()
          }
          const kql = compileQuery(q.kql, dataset.schema, { dialect: 'duckdb' })
          const first = await kql.execute(columnar, { now, rowCap: 10_000_000 })
          const base = await runHand()
          const expectedRows = q.id === 'make-series' ? 2 : base.length
          if (first.rows.length !== expectedRows)
            throw new Error(`${q.id}: KQL on DuckDB returned ${first.rows.length} rows, hand-written ${expectedRows}`)
          const engine: number[] = []
          const handTimes: number[] = []
          // CPU of the whole process (DuckDB's threads included): less noisy than wall time on a shared machine
          const engineCpu = { ms: 0 }
          const handCpu = { ms: 0 }
          const runEngine = async () => engine.push(await time(() => kql.execute(columnar, { now, rowCap: 10_000_000 }), engineCpu))
          const runBaseline = async () => handTimes.push(await time(runHand, handCpu))
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
          // today's path: the KQL engine on the SQLite row store (fewer runs: it is slow)
          const lite = compileQuery(q.kql, dataset.schema, { dialect: 'sqlite' })
          const liteTimes: number[] = []
          for (let i = 0; i < ROW_STORE_RUNS; i++) liteTimes.push(await time(() => lite.execute(rowStore, { now, rowCap: 10_000_000 })))
          const rowStoreMs = liteTimes.length > 0 ? median(liteTimes) : undefined
          const vsRowStore =
            rowStoreMs === undefined ? '' : `; row store (SQLite) ${ms(rowStoreMs)}, ${(rowStoreMs / e).toFixed(0)}× slower`
          // progress: a 10M-row run takes long on a shared machine
          console.log(`  ${q.id}: KQL on DuckDB ${ms(e)}, hand-written ${ms(h)}${vsRowStore}`)
          rows.push({
            measure: `\`${q.id}\`, KQL on DuckDB/Parquet`,
            subject: ms(e),
            baseline: `${ms(h)} hand-written DuckDB SQL${vsRowStore}`,
            ratio: e / h,
            target: '≤ 1.5×',
            met: e / h <= 1.5,
          })
          if (e / h > 1.5) notes.push(`\`${q.id}\` missed 1.5× (${(e / h).toFixed(2)}×): ${kql.executable ? planOutline(kql) : ''}`)
        }
      } finally {
        reader.close()
        hand.closeSync()
        columnar.close()
      }
    } finally {
      await store.close()
      duck.closeSync()
      await db.close()
      await dataset.close()
    }
    // the issue's warm-query target, through the real server with the tier on (compaction is done:
    // its compactor finds nothing to do)
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
    return {
      rows,
      notes: [
        `Load average at the end of the run (1, 5, 15 min): ${load} on 2 cores shared with other jobs; on this machine the figures move by ±2× between runs.`,
        `Dataset: bench/scenarios/kql-dataset.ts (${DATASET_ROWS.toLocaleString('en-US')} readings, ingested through HTTP into SQLite), compacted by the columnar tier's compactor into zstd Parquet segments of up to 1,000,000 rows sorted by timestamp. KQL runs through the duckdb dialect on the view the tier queries (segments + the row-store tail, here empty); the hand-written DuckDB SQL reads the same files with read_parquet. Median of ${RUNS} runs each, alternating (each side first every other run), after a warm-up.`,
        `CPU per run, ms, KQL/hand-written (the whole process, DuckDB's threads included): ${cpuNotes.join('; ')}.`,
        `Warm query over HTTP: \`${BENCH_CONFIG.warmQueries[0]!.query}\` as GET /oi-api/warm-queries/${BENCH_CONFIG.warmQueries[0]!.path} on a server started with PROVENANT_COLUMNAR=on over the same data directory and segments (token check, rights, call recording, plan cache, query worker, DuckDB over the segments), one request at a time.`,
        "`has-count`: the hand-written SQL matches the term with Unicode letters and digits as term characters (Kusto's definition, what the engine answers); the common ASCII-only regular expression, which counts a term glued to a non-ASCII letter, takes about 0.8× of the engine's time on the same files (44 vs 52 ms CPU at 10M rows, measured by hand).",
        'Not yet measured here (see docs/design/columnar.md): 100M rows, three PostgreSQL processes sharing segments. Ingest with compaction running: the ingest-compaction scenario.',
        ...notes,
      ],
    }
  },
}

/**
 * The first slice's compaction path, kept here only as the benchmark's "before": row objects from
 * the row store, each value decoded into a KQL value, then one appender call per value, then the
 * same sorted zstd Parquet COPY (to a scratch file, not recorded).
 */
async function rowByRowReference(
  db: SqlDb,
  duck: DuckDBInstance,
  table: ConnectionTable,
  limit: number,
  scratchDir: string,
): Promise<{ rows: number; seconds: number }> {
  const started = performance.now()
  const list = ['_rowid', '_ingested_at', ...table.columns.map((c) => quoteIdent(c.name))].join(', ')
  const raw = await db.all<Record<string, unknown>>(
    `SELECT ${list} FROM ${quoteIdent(table.sqlName)} WHERE _rowid > 0 ORDER BY _rowid LIMIT ?`,
    [limit],
    { exactIntegers: true },
  )
  const rows = raw.map((r) => ({
    rowId: BigInt(r['_rowid'] as bigint),
    ingestedAt: r['_ingested_at'] === null ? null : BigInt(r['_ingested_at'] as bigint),
    values: table.columns.map((c) => decodeValue(c.type, r[c.name])),
  }))
  const columns = table.columns.map((c) => ({ name: c.name, type: c.type }))
  const connection = await duck.connect()
  const file = join(scratchDir, 'reference.parquet')
  try {
    await connection.run(`CREATE OR REPLACE TEMP TABLE reference (${duckdbColumnDefs(columns)})`)
    await appendRows(connection, 'reference', columns, rows)
    await connection.run(
      `COPY (SELECT * FROM reference ORDER BY "timestamp", "_rowid") TO '${file}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`,
    )
    await connection.run('DROP TABLE reference')
  } finally {
    connection.closeSync()
    rmSync(file, { force: true })
  }
  return { rows: rows.length, seconds: (performance.now() - started) / 1000 }
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
  const runtime = await createRuntime(loadConfig({ data: dataDir, port: 0 }, { PROVENANT_COLUMNAR: 'on' }), {
    logger: pino({ level: 'warn' }),
    scryptCost: { log2N: 10, r: 8, p: 1 },
  })
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
