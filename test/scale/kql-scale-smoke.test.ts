/**
 * The kql-scale bench's code path in short form (issue 16; bench/scenarios/kql-scale.ts, whose
 * 100,000,000-row run is local only): kql-loader loads 1,000,000 readings over HTTP from concurrent
 * clients (batches of 5,000) into a server with the columnar tier on and its compactor running
 * with the server's defaults, then the 11 benchmark queries run as KQL on the view the tier reads
 * and hand-written in DuckDB SQL over the same segment files. Asserts behaviour only: the same
 * rows both ways, and the segments hold every row once and match the manifest. Timings are the
 * bench's (docs/benchmarks.md). SQLite, as the bench.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { buildDataset, T0 } from '../../bench/scenarios/kql-dataset.js'
import type { LoadReport } from '../../bench/scenarios/kql-loader.js'
import { BENCH_QUERIES, type BenchQuery } from '../../bench/scenarios/kql-queries.js'
import { openSegmentQueries, type SegmentQueries } from '../../bench/scenarios/kql-segment-queries.js'
import { sqliteFileOf } from '../../src/adapters/open-stores.js'
import type { ConnectionTable } from '../../src/domain/workspace-config/config-store.js'

const ROWS = 1_000_000
const TICKS_PER_HOUR = 36_000_000_000n

/** A value as both sides can be compared: integers as numbers, reals to 12 significant digits. */
function norm(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value)
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toPrecision(12))
  return value
}
const sortedRows = (rows: readonly (readonly unknown[])[]): string[] => rows.map((r) => JSON.stringify(r.map(norm))).sort()

/**
 * Asserts the KQL rows equal the hand-written ones. `top` queries compare their ordering column in
 * order (ties at the cut may pick other rows: every sensor has the same count); `make-series`
 * compares its series against the hand-written hourly groups (hours without rows hold the default 0).
 */
function assertSameRows(
  q: BenchQuery,
  kql: { columns: readonly { name: string }[]; rows: readonly (readonly unknown[])[] },
  hand: unknown[][],
): void {
  const column = (name: string): number => kql.columns.findIndex((c) => c.name === name)
  if (q.id === 'top-errors' || q.id === 'top-sensors') {
    const [name, handIndex] = q.id === 'top-errors' ? ['value', 3] : ['n', 1]
    assert.deepEqual(
      kql.rows.map((r) => norm(r[column(name)])),
      hand.map((r) => norm(r[handIndex])),
      `${q.id}: the ${name} column in order`,
    )
    return
  }
  if (q.id === 'make-series') {
    const sensor = column('sensor')
    const series = kql.columns.findIndex((c, i) => i !== sensor && c.name !== 'timestamp')
    const expected = new Map<string, number[]>()
    for (const r of kql.rows)
      expected.set(
        String(r[sensor]),
        (r[series] as number[]).map(() => 0),
      )
    for (const [s, h, avg] of hand) expected.get(String(s))![Number((BigInt(h as bigint) - T0) / TICKS_PER_HOUR)] = avg as number
    assert.equal(kql.rows.length, 2, 'one series per sensor')
    for (const r of kql.rows)
      assert.deepEqual((r[series] as number[]).map(norm), expected.get(String(r[sensor]))!.map(norm), `make-series: ${r[sensor]}'s series`)
    return
  }
  assert.deepEqual(sortedRows(kql.rows), sortedRows(hand), `${q.id}: the same rows`)
}

describe('sqlite: kql-scale smoke: 1,000,000 rows through ingest with the compactor running, then the benchmark queries', () => {
  let dir: string
  let load: LoadReport
  let tables: ConnectionTable[]
  let queries: SegmentQueries

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'provenant-kql-scale-smoke-'))
    const built = await buildDataset(join(dir, 'data'), ROWS, { log: (line) => console.log(line.trim()) })
    load = built.load
    tables = built.tables
    console.log(
      `loaded ${ROWS} rows in ${load.loadSeconds.toFixed(1)} s, tail empty at ${load.drainedSeconds.toFixed(1)} s, largest tail ${load.largestTail}, ${load.segments} segments`,
    )
    queries = await openSegmentQueries(sqliteFileOf(join(dir, 'data')), tables)
  })
  after(async () => {
    await queries?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('the segments hold every row once and match the manifest (the tier check)', async () => {
    // files that merges replaced are deleted a minute later by a timer a closing server drops; the
    // next compactor removes them when it takes the lease, as here
    await queries.store.removeOrphans()
    assert.deepEqual(await queries.store.check(), { missing: [], orphans: [], mismatched: [] })
    const readings = tables.find((t) => t.lookup === 'readings')!
    const segments = await queries.store.segments(readings.sqlName)
    assert.equal(
      segments.reduce((n, s) => n + s.rowCount, 0),
      ROWS,
      'the manifest counts every row',
    )
    const duck = await DuckDBInstance.create(':memory:')
    try {
      const files = segments.map((s) => `'${join(queries.settings.dir, readings.sqlName, s.fileName)}'`).join(', ')
      const connection = await duck.connect()
      const [row] = (await connection.runAndReadAll(`SELECT count(*), count(DISTINCT _rowid) FROM read_parquet([${files}])`)).getRows()
      assert.deepEqual(row, [BigInt(ROWS), BigInt(ROWS)], 'the files hold every row, each once')
      connection.closeSync()
    } finally {
      duck.closeSync()
    }
  })

  for (const q of BENCH_QUERIES)
    it(`${q.id}: KQL on the tier's view returns the rows of the hand-written DuckDB SQL over the same files`, async () => {
      const query = await queries.prepare(q)
      const hand = await query.hand()
      assert.ok(hand.length > 0, 'the hand-written query finds rows')
      assertSameRows(q, await query.kql(), hand)
    })
})
