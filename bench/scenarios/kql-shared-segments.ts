/**
 * @module
 * `kql-shared-segments` (issue 16: "on PostgreSQL with three API processes sharing the segments:
 * every process answers the same queries with the same rows"). The cached PostgreSQL bench dataset
 * (kql-dataset.ts) is copied into a scratch database (the cache stays untouched); three real
 * `provenant serve` processes start on that database with PROVENANT_COLUMNAR=on and one shared
 * segment directory; the one holding the compactor lease compacts every row into segments. Then
 * the benchmark queries (kql-queries.ts) run as ad-hoc KQL over HTTP through each process, and as
 * hand-written DuckDB SQL over the same segment files in this process, alternating. Every answer is
 * compared with the hand-written one and with the other processes' (query-answers.ts): a
 * difference fails the scenario. Last, a batch ingested through one process must be counted at
 * once through all three (the tail), and again once the compactor has made it a segment.
 *
 * Rows: PROVENANT_BENCH_ROWS (default 1,000,000). Runs per query: PROVENANT_BENCH_RUNS (default 7).
 */
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { createPgPool, createPostgresDb } from '../../src/adapters/postgres/postgres-db.js'
import { columnarOf } from '../../src/config/config.js'
import type { ConnectionTable } from '../../src/domain/workspace-config/config-store.js'
import { formatDateTime } from '../../src/kql/index.js'
import { type ChildServer, call, startChildServer } from '../../test/support/child-server.js'
import { issueBenchToken, scratchDatabase } from '../bench-server.js'
import type { BenchRow, Scenario } from '../harness.js'
import { DATASET_ROWS, openDataset, PG_ADMIN_URL, pushOverHttp, readingRow } from './kql-dataset.js'
import { BENCH_QUERIES, type BenchQuery } from './kql-queries.js'
import { openSegmentQueriesOn, type SegmentQueries } from './kql-segment-queries.js'
import { type Answer, answerDifference, canonRows, type Inexact, REAL_TOLERANCE, topDifference, wireAnswer } from './query-answers.js'

const RUNS = Number(process.env.PROVENANT_BENCH_RUNS ?? 7)
const PROCESSES = 3
/** Rows ingested after compaction: the tail every process must count at once. */
const TAIL_ROWS = 5_000
/** The compactor's pause between passes (the server's default); the tail stays a tail for TAIL_AGE_MS. */
const INTERVAL_MS = 1_000
/** A tail under a segment is compacted once its oldest row is this old (the server's default: a minute). */
const TAIL_AGE_MS = 5_000
const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url))
const DUCKDB_SETTINGS = { threads: '2', memory_limit: '1GB' }
/** The compactor needs a few minutes at 10M rows on a loaded 2-core machine. */
const COMPACTION_TIMEOUT_MS = Math.max(300_000, DATASET_ROWS * 0.1)

const ms = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)) + ' ms'
const count = (n: number): string => n.toLocaleString('en-US')

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** CPU time of a process so far (ms; every thread; Linux /proc, 10 ms resolution). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after "pid (comm) "
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

/** Ad-hoc KQL through one process; throws on anything but 200. */
async function adhoc(server: ChildServer, token: string, query: string): Promise<Answer> {
  const r = await call(server.url, 'POST', '/oi-api/warm-queries', token, { Query: query })
  if (r.status !== 200) throw new Error(`${query} through ${server.url}: ${r.status} ${r.text}`)
  return r.body as unknown as Answer
}

interface SharedState {
  readonly watermarks: ReadonlyMap<string, number>
  readonly maxRowIds: ReadonlyMap<string, number>
  readonly segments: number
}

/** The compaction state of every connection table, read from the shared database. */
async function sharedState(db: pg.Client): Promise<SharedState> {
  const tables = (await db.query<{ sql_name: string }>('SELECT sql_name FROM connection_tables')).rows.map((r) => r.sql_name)
  const marks = await db.query<{ sql_name: string; last_rowid: string }>('SELECT sql_name, last_rowid FROM columnar_watermarks')
  const watermarks = new Map(tables.map((t) => [t, Number(marks.rows.find((m) => m.sql_name === t)?.last_rowid ?? 0)]))
  const maxRowIds = new Map<string, number>()
  for (const t of tables) maxRowIds.set(t, Number((await db.query(`SELECT COALESCE(MAX(_rowid), 0) AS m FROM "${t}"`)).rows[0].m))
  const segments = Number((await db.query('SELECT COUNT(*) AS n FROM columnar_segments')).rows[0].n)
  return { watermarks, maxRowIds, segments }
}

const tailRows = (s: SharedState): number => [...s.maxRowIds].reduce((n, [t, max]) => n + max - (s.watermarks.get(t) ?? 0), 0)

/** Until the tail is empty (of `only`, a table's sqlName, when given). */
async function waitForCompaction(db: pg.Client, timeoutMs: number, only?: string): Promise<SharedState> {
  const deadline = Date.now() + timeoutMs
  let shown = Date.now()
  const left = (state: SharedState): number =>
    only === undefined ? tailRows(state) : (state.maxRowIds.get(only) ?? 0) - (state.watermarks.get(only) ?? 0)
  for (;;) {
    const state = await sharedState(db)
    if (left(state) === 0 && state.segments > 0) return state
    if (Date.now() > deadline) throw new Error(`compaction did not finish within ${timeoutMs / 1000} s: ${tailRows(state)} rows left`)
    if (Date.now() - shown > 30_000) {
      shown = Date.now()
      console.log(`    compacting: ${count(tailRows(state))} rows left, ${state.segments} segments`)
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

/** `Readings | ... | top 10 by value desc` → { k: 10, column: 'value' }. */
function topOf(q: BenchQuery): { k: number; column: string } | undefined {
  const m = /\|\s*top\s+(\d+)\s+by\s+(\w+)/.exec(q.kql)
  return m ? { k: Number(m[1]), column: m[2]! } : undefined
}

/** Every row a `top` query chooses from, in its order: the hand-written SQL without its LIMIT. */
async function allCandidates(segmentQueries: SegmentQueries, q: BenchQuery, columns: Answer['columns']): Promise<Answer> {
  const unlimited = q.sql.duckdb.replace(/\s+LIMIT\s+\d+\s*$/i, '')
  if (unlimited === q.sql.duckdb) throw new Error(`${q.id}: the hand-written SQL of a top query should end in LIMIT`)
  const prepared = await segmentQueries.prepare({ ...q, sql: { ...q.sql, duckdb: unlimited } })
  return wireAnswer(columns, await prepared.hand())
}

/**
 * The hand-written SQL's rows as the engine's answer would hold them. make-series: the baseline
 * returns the (sensor, hour, avg) groups; the series are those groups laid on the query's hourly
 * axis with 0 for an empty hour (`default=0`).
 */
function expectedAnswer(q: BenchQuery, columns: Answer['columns'], rows: readonly (readonly unknown[])[]): Answer {
  if (q.id !== 'make-series') return wireAnswer(columns, rows)
  const [step, , , , from, to] = q.params as [bigint, bigint, string, string, bigint, bigint]
  const axis: bigint[] = []
  for (let t = from; t < to; t += step) axis.push(t)
  const sensors = [...new Set(rows.map((r) => r[0] as string))]
  const results = sensors.map((sensor) => {
    const byHour = new Map(rows.filter((r) => r[0] === sensor).map((r) => [r[1] as bigint, r[2] as number]))
    const series = { sensor, avg_value: axis.map((t) => byHour.get(t) ?? 0), timestamp: axis.map(formatDateTime) }
    return Object.fromEntries(columns.map((c) => [c.name, series[c.name as keyof typeof series]]))
  })
  return { columns, results }
}

interface QueryOutcome {
  readonly id: string
  readonly medians: readonly number[]
  readonly hand: number
  readonly cpu: readonly number[]
  readonly handCpu: number
  /** For `top` with ties at the cut: whether every process returned the very same tied rows in every run. */
  readonly sameTies?: boolean
  /** For `top`: how many different answers each process gave over its runs. */
  readonly tieChoices?: readonly number[]
}

export const kqlSharedSegments: Scenario = {
  id: 'kql-shared-segments',
  title: `Columnar tier on PostgreSQL: three provenant serve processes sharing the segments answer the same rows (${count(DATASET_ROWS)} rows)`,
  async run() {
    const loadAtStart = loadavg()
    const dataset = await openDataset('postgres')
    const source = new URL(dataset.databaseUrl!).pathname.slice(1)
    const sourceDataDir = dataset.runtime.config.dataDir
    const analystToken = dataset.analystToken
    let ingestToken: string
    let tables: ConnectionTable[]
    try {
      tables = await dataset.runtime.stores.config.connectionTables(dataset.workspaceId)
      const admin = await dataset.runtime.stores.access.accountByName('bench-admin@bench')
      if (!admin) throw new Error('the cached dataset has no bench-admin@bench account')
      ingestToken = await issueBenchToken(dataset.services, dataset.workspaceId, admin, { name: 'bench shared segments', expires: '24h' })
    } finally {
      await dataset.close()
    }
    const work = mkdtempSync(join(tmpdir(), 'provenant-bench-shared-'))
    const servers: ChildServer[] = []
    let scratch: Awaited<ReturnType<typeof scratchDatabase>> | undefined
    let db: pg.Client | undefined
    let segmentQueries: SegmentQueries | undefined
    let failed = false
    try {
      // the keys the tokens were signed with (the database holds the rest; the cache's own segments stay out)
      const dataDir = join(work, 'data')
      cpSync(sourceDataDir, dataDir, { recursive: true, filter: (path) => path !== join(sourceDataDir, 'segments') })
      const segmentsDir = join(work, 'segments')
      scratch = await scratchDatabase(PG_ADMIN_URL, `provenant_bench_shared_${process.pid}`, { template: source })
      db = new pg.Client({ connectionString: scratch.url })
      await db.connect()
      // The dataset was loaded with the tier on: its manifest names the cache's segment files. Segments
      // are a derived copy of the row store (docs/design/columnar.md), so the copy forgets them and
      // the three processes compact every row again, into their shared directory.
      await db.query('DELETE FROM columnar_segments')
      await db.query('DELETE FROM columnar_watermarks')
      const env = {
        PROVENANT_COLUMNAR: 'on',
        PROVENANT_COLUMNAR_DIR: segmentsDir,
        PROVENANT_COLUMNAR_INTERVAL_MS: String(INTERVAL_MS),
        // the batch ingested after compaction (5,000 rows, under a segment) is compacted once it is
        // this old (the server's default is a minute)
        PROVENANT_COLUMNAR_TAIL_AGE_MS: String(TAIL_AGE_MS),
        PROVENANT_COLUMNAR_THREADS: DUCKDB_SETTINGS.threads,
        PROVENANT_COLUMNAR_MEMORY: DUCKDB_SETTINGS.memory_limit,
        // info: the compactor logs each segment it writes, which tells which process compacted
        PROVENANT_LOG_LEVEL: 'info',
      }
      const deployment = { dataDir, databaseUrl: scratch.url }
      console.log(`  starting ${PROCESSES} provenant serve processes (PROVENANT_COLUMNAR=on, segments in ${segmentsDir})`)
      const started = performance.now()
      // one after another: each start loads DuckDB
      for (let i = 0; i < PROCESSES; i++) servers.push(await startChildServer(deployment, { env }))
      const readingsTable = tables.find((t) => t.lookup === 'readings')!.sqlName
      await waitForCompaction(db, COMPACTION_TIMEOUT_MS, readingsTable)
      const compactSeconds = (performance.now() - started) / 1000
      // The policy leaves a tail under a thousandth of a segment (the 8-row Sites table) in the row
      // store; the hand-written SQL reads every table from Parquet, so the operator's command
      // compacts it, beside the running servers, as `provenant columnar compact` does in production.
      const byOperator = operatorCompact(dataDir, scratch.url, env)
      const state = await waitForCompaction(db, 60_000)
      const written = servers.map((s) => segmentsWritten(s.output()))
      const compactor = written.findIndex((w) => w.length > 0)
      if (written.filter((w) => w.length > 0).length !== 1)
        throw new Error(
          `exactly one process should compact (the lease); segments written per process: ${written.map((w) => w.length).join(', ')}`,
        )
      const compactedRows = written[compactor]!.reduce((n, w) => n + w.rows, 0)
      const compactorSeconds = written[compactor]!.reduce((n, w) => n + w.ms, 0) / 1000
      const inManifest = Number((await db.query('SELECT COALESCE(SUM(row_count), 0) AS n FROM columnar_segments')).rows[0].n)
      if (inManifest !== compactedRows + byOperator)
        throw new Error(
          `the compactor logged ${compactedRows} rows and the operator's command ${byOperator}, the manifest holds ${inManifest}`,
        )
      console.log(
        `  compacted ${count(compactedRows)} rows into ${state.segments} segments, done ${compactSeconds.toFixed(1)} s after the first start`,
      )

      // the same files (those the manifest lists), read by hand-written SQL in this process with the processes' DuckDB settings
      segmentQueries = await openSegmentQueriesOn(
        createPostgresDb(createPgPool(scratch.url, 2)),
        columnarOf({ ...process.env, ...env }, dataDir)!,
        tables,
      )
      const outcomes: QueryOutcome[] = []
      const inexact: Inexact = { count: 0, maxRelative: 0 }
      let compared = 0
      for (const q of BENCH_QUERIES) {
        const runHand = (await segmentQueries.prepare(q)).hand
        // the reference answer: hand-written SQL, in the engine's column names and types
        const first = await adhoc(servers[0]!, analystToken, q.kql)
        const top = topOf(q)
        const reference = expectedAnswer(q, first.columns, await runHand())
        // top k with ties at the cut: an answer is checked against every candidate row (the SQL without its LIMIT)
        const candidates = top ? await allCandidates(segmentQueries, q, first.columns) : undefined
        const check = (answer: Answer, who: string): void => {
          compared++
          const difference =
            top && candidates ? topDifference(candidates, answer, top.k, top.column) : answerDifference(reference, answer, false, inexact)
          if (difference) throw new Error(`${q.id}: ${who} answered other rows than the hand-written SQL: ${difference}`)
          const fromFirst = top ? undefined : answerDifference(first, answer, false, inexact)
          if (fromFirst) throw new Error(`${q.id}: ${who} answered other rows than process 1: ${fromFirst}`)
        }
        if (candidates && top) {
          const own = topDifference(candidates, reference, top.k, top.column)
          if (own) throw new Error(`${q.id}: the hand-written SQL's own answer is not a valid top ${top.k}: ${own}`)
        }
        check(first, 'process 1')
        const times: number[][] = servers.map(() => [])
        const cpu: number[] = servers.map(() => 0)
        const handTimes: number[] = []
        let handCpu = 0
        // top with ties: the distinct answers each process gave over its runs
        const tieChoices = servers.map(() => new Set<string>())
        // each of the four goes first in turn: the first statement after a pause pays for waking DuckDB's threads
        for (let run = 0; run < RUNS; run++) {
          for (let slot = 0; slot <= PROCESSES; slot++) {
            const who = (run + slot) % (PROCESSES + 1)
            if (who === PROCESSES) {
              const c0 = process.cpuUsage()
              const t0 = performance.now()
              await runHand()
              handTimes.push(performance.now() - t0)
              const c = process.cpuUsage(c0)
              handCpu += (c.user + c.system) / 1000
              continue
            }
            const server = servers[who]!
            const c0 = processCpuMs(server.pid)
            const t0 = performance.now()
            const answer = await adhoc(server, analystToken, q.kql)
            times[who]!.push(performance.now() - t0)
            cpu[who]! += processCpuMs(server.pid) - c0
            check(answer, `process ${who + 1}`)
            if (top) tieChoices[who]!.add(JSON.stringify(canonRows(answer)))
          }
        }
        const medians = times.map(median)
        const outcome: QueryOutcome = {
          id: q.id,
          medians,
          hand: median(handTimes),
          cpu: cpu.map((c) => c / RUNS),
          handCpu: handCpu / RUNS,
          ...(top ? { tieChoices: tieChoices.map((c) => c.size), sameTies: new Set(tieChoices.flatMap((c) => [...c])).size === 1 } : {}),
        }
        outcomes.push(outcome)
        console.log(`  ${q.id}: processes ${medians.map(ms).join(' / ')}, hand-written ${ms(outcome.hand)}; rows identical`)
      }

      // the tail: a batch acknowledged through a process that does not compact, counted at once through all three
      const readings = tables.find((t) => t.lookup === 'readings')!.sqlName
      const via = servers.findIndex((_, i) => i !== compactor)
      const before = await sharedState(db)
      await pushOverHttp(servers[via]!.url, ingestToken, 'readings', TAIL_ROWS, (k) => readingRow(DATASET_ROWS + k), {
        batch: TAIL_ROWS,
        concurrency: 1,
      })
      const expected = expectedTail()
      const atOnce = await Promise.all(servers.map((s) => tailAnswer(s, analystToken)))
      const stillTail = (await sharedState(db)).watermarks.get(readings) === before.watermarks.get(readings)
      for (const [i, answer] of atOnce.entries())
        if (answer !== expected) throw new Error(`process ${i + 1} right after the ingest: ${answer}, expected ${expected}`)
      // then the compactor makes the batch a segment of its own, which every process must read instead of the tail
      const segmentsBefore = before.segments
      const later = await waitForCompaction(db, 120_000)
      const afterSegment = await Promise.all(servers.map((s) => tailAnswer(s, analystToken)))
      for (const [i, answer] of afterSegment.entries())
        if (answer !== expected) throw new Error(`process ${i + 1} after the batch was compacted: ${answer}, expected ${expected}`)

      const rows: BenchRow[] = [
        {
          measure: `compaction by the lease holder (process ${compactor + 1}; the other two wrote no segment)`,
          subject: `${count(Math.round(compactedRows / compactorSeconds))} rows/s (the compactor's logged segment times)`,
          baseline: `${count(compactedRows)} rows into ${state.segments} segments, all compacted ${compactSeconds.toFixed(1)} s after the first process started (first pass after ${INTERVAL_MS / 1000} s)`,
          target: 'one compactor',
          met: true,
        },
        {
          measure: 'every process answers the 11 benchmark queries with the same rows',
          subject: `${count(compared)} answers (${BENCH_QUERIES.length} queries × ${PROCESSES} processes × ${RUNS} runs, + 1 each through process 1): same rows`,
          baseline: 'hand-written DuckDB SQL over the same segment files, and process 1',
          target: 'same rows in every process',
          met: true,
        },
        ...outcomes.map(
          (o): BenchRow => ({
            measure: `\`${o.id}\`, ad-hoc KQL over HTTP through process 1 / 2 / 3 (same rows: asserted)`,
            subject: o.medians.map(ms).join(' / '),
            baseline: `${ms(o.hand)} hand-written DuckDB SQL in the bench process`,
            ratio: Math.max(...o.medians) / o.hand,
            target: '–',
            met: undefined,
          }),
        ),
        {
          measure: `tail: ${count(TAIL_ROWS)} rows acknowledged through process ${via + 1}, queried at once through all three`,
          subject: `${atOnce[0]} in every process`,
          baseline: stillTail
            ? 'rows read from the row store (watermark unchanged during the queries)'
            : 'the compactor took the batch before the queries ended',
          target: 'same rows in every process',
          met: true,
        },
        {
          measure: 'the same batch once the compactor made it a segment',
          subject: `${afterSegment[0]} in every process`,
          baseline: `${later.segments - segmentsBefore} new segment(s), tail empty`,
          target: 'same rows in every process',
          met: true,
        },
      ]
      const ties = outcomes.filter((o) => o.sameTies !== undefined)
      const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(', ')
      return {
        rows,
        notes: [
          `Load average (1, 5, 15 min) at the start ${load(loadAtStart)}, at the end ${load(loadavg())}, on 2 cores shared with other jobs: wall times move by ±2× between runs.`,
          `Set-up: the cached PostgreSQL bench dataset (bench/scenarios/kql-dataset.ts, ${count(DATASET_ROWS)} readings, loaded with the tier on) copied into a scratch database whose segment manifest and watermarks are emptied, so the processes compact every row again; three \`provenant serve\` child processes on it with PROVENANT_COLUMNAR=on, one PROVENANT_COLUMNAR_DIR, DuckDB threads ${DUCKDB_SETTINGS.threads} and memory_limit ${DUCKDB_SETTINGS.memory_limit} each, compactor interval ${INTERVAL_MS / 1000} s. Which process compacted is read from their logs (\`columnar: segment written\`).`,
          `Method: each query ${RUNS} times through each process (POST /oi-api/warm-queries, the analyst's token, one request at a time) and ${RUNS} times as hand-written DuckDB SQL over the same Parquet files (read_parquet of the files the manifest lists, bench/scenarios/kql-segment-queries.ts, same DuckDB settings) in the bench process, each of the four first in turn; medians of wall time, HTTP included on the processes' side; ratio: the slowest process's median over the hand-written one.`,
          `Rows: ${count(compared)} answers compared with the hand-written SQL's rows (every run of every process), all the same: longs, strings and datetimes exactly; reals within ${REAL_TOLERANCE} relative (${inexact.count === 0 ? 'none differed in any bit' : `${count(inexact.count)} values differed in the last bits, at most ${inexact.maxRelative.toExponential(1)} relative: DuckDB's parallel aggregation adds in no fixed order`}); rows sorted canonically where the query has no order.`,
          ...(ties.length
            ? [
                `\`top\` with ties at the cut (${ties.map((o) => `\`${o.id}\``).join(', ')}): which of the tied rows come back is left open by Kusto and SQL, so each answer is checked against every candidate row (the hand-written SQL without its LIMIT): the same sort values in order, and only candidate rows. ${ties.map((o) => `\`${o.id}\`: ${o.sameTies ? 'the very same rows in every run of every process' : `other tied rows or another order of them from run to run, within one process too (distinct answers per process over ${RUNS} runs: ${o.tieChoices!.join(' / ')})`}`).join('; ')}.`,
              ]
            : []),
          `CPU per run, ms, process 1 / 2 / 3 (the whole serve process: HTTP, query worker, DuckDB's threads; /proc, 10 ms ticks) and hand-written: ${outcomes.map((o) => `${o.id} ${o.cpu.map((c) => c.toFixed(0)).join('/')} vs ${o.handCpu.toFixed(0)}`).join('; ')}.`,
        ],
      }
    } catch (error) {
      failed = true
      throw error
    } finally {
      const exits = await Promise.all(servers.map((s) => stop(s)))
      await db?.end().catch(() => {})
      await segmentQueries?.close().catch(() => {})
      try {
        await scratch?.drop()
      } finally {
        rmSync(work, { recursive: true, force: true })
      }
      const unclean = exits.map((e, i) => [e, i] as const).filter(([e]) => e.code !== 0)
      if (!failed && unclean.length > 0)
        // biome-ignore lint/correctness/noUnsafeFinally: a process that did not stop cleanly fails a run that otherwise passed
        throw new Error(
          `process ${unclean[0]![1] + 1} exited with ${JSON.stringify(unclean[0]![0])}: ${servers[unclean[0]![1]]!.output().slice(-2000)}`,
        )
    }
  },
}

/** The segments a process's log says it wrote (`columnar: segment written`, pino JSON lines). */
/** `provenant columnar compact` on the shared deployment, in a process of its own; the rows it compacted. */
function operatorCompact(dataDir: string, databaseUrl: string, env: NodeJS.ProcessEnv): number {
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', CLI, 'columnar', 'compact', '--data', dataDir, '--database-url', databaseUrl],
    { env: { ...process.env, ...env }, encoding: 'utf8' },
  )
  const match = /compacted (\d+) rows/.exec(out)
  if (!match) throw new Error(`provenant columnar compact said: ${out}`)
  return Number(match[1])
}

function segmentsWritten(output: string): { rows: number; ms: number }[] {
  const out: { rows: number; ms: number }[] = []
  for (const line of output.split('\n')) {
    if (!line.includes('columnar: segment written')) continue
    const entry = JSON.parse(line) as { rows: number; ms: number }
    out.push({ rows: entry.rows, ms: entry.ms })
  }
  return out
}

/** What the tail queries should answer for the batch ingested after compaction (rows DATASET_ROWS.. of the generator). */
function expectedTail(): string {
  let statuses = 0
  const stamps: bigint[] = []
  for (let k = 0; k < TAIL_ROWS; k++) {
    const row = readingRow(DATASET_ROWS + k)
    statuses += row['status'] as number
    stamps.push(BigInt(Date.parse(row['timestamp'] as string)) * 10_000n)
  }
  return tailText(DATASET_ROWS + TAIL_ROWS, TAIL_ROWS, statuses, formatDateTime(stamps[0]!), formatDateTime(stamps.at(-1)!))
}

const tailText = (total: number, n: number, statuses: number, first: string, last: string): string =>
  `${count(total)} rows in all; batch: ${count(n)} rows, status sum ${count(statuses)}, ${first} .. ${last}`

/** The whole table's count and the batch's rows (everything from 2026-01-31, where the dataset ends), through one process. */
async function tailAnswer(server: ChildServer, token: string): Promise<string> {
  const [total, batch] = await Promise.all([
    adhoc(server, token, 'Readings | count'),
    adhoc(
      server,
      token,
      'Readings | where timestamp >= datetime(2026-01-31) | summarize n = count(), statuses = sum(status), first = min(timestamp), last = max(timestamp)',
    ),
  ])
  const b = batch.results[0]!
  return tailText(Number(total.results[0]!['Count']), Number(b['n']), Number(b['statuses']), String(b['first']), String(b['last']))
}

/** SIGTERM, and SIGKILL if the process has not exited 30 s later. */
async function stop(server: ChildServer): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 30_000)
  try {
    return await server.kill('SIGTERM')
  } finally {
    clearTimeout(timer)
  }
}
