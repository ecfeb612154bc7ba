/**
 * The columnar tier across processes (issue 16: "on PostgreSQL with three API processes sharing the
 * segments: every process answers the same queries with the same rows"): three real `provenant
 * serve` processes on one database and one data directory, PROVENANT_COLUMNAR=on. One of them
 * holds the compactor lease and writes the segments into the shared directory; rows are ingested
 * through the others; once compacted, every process answers the benchmark-shaped queries with the
 * same rows, and rows acknowledged after compaction (the tail) are visible through each at once.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { BACKENDS } from '../support/backends.js'
import { type ChildServer, call, type Deployment, seedDeployment, startChildServer } from '../support/child-server.js'
import { sensorConfig, sensorRows } from '../support/fixtures.js'

const PROCESSES = 3
const ROWS = 3300
const COLUMNAR_ENV = {
  PROVENANT_COLUMNAR: 'on',
  PROVENANT_COLUMNAR_THREADS: '1',
  PROVENANT_COLUMNAR_MEMORY: '256MB',
  PROVENANT_COLUMNAR_SEGMENT_ROWS: '1000',
  PROVENANT_COLUMNAR_INTERVAL_MS: '200',
  // the last partial tail is compacted a second after its rows came (the default waits a minute)
  PROVENANT_COLUMNAR_TAIL_AGE_MS: '1000',
}
const QUERIES = [
  'Sensors | count',
  'Sensors | summarize n = count(), total = sum(value), last = max(timestamp) by sensor | order by sensor asc',
  'Sensors | where value >= 100 and sensor has "s1" | project _rowid, timestamp, sensor, value | order by _rowid asc',
  'Sensors | summarize count() by bin(timestamp, 1h) | order by timestamp asc',
]

describe('postgres: three provenant serve processes share the columnar segments', {
  skip: !BACKENDS.includes('postgres') && 'PostgreSQL not reachable',
}, () => {
  let deployment: Deployment
  const servers: ChildServer[] = []

  before(async () => {
    deployment = await seedDeployment('postgres', sensorConfig({ settings: { queries: { rowCap: 10_000, timeoutSeconds: 300 } } }))
    // one after another: each start loads DuckDB, and on a shared machine three at once can pass the start timeout
    for (let i = 0; i < PROCESSES; i++) servers.push(await startChildServer(deployment, { env: COLUMNAR_ENV }))
  })
  after(async () => {
    const exits = await Promise.all(servers.map((s) => s.kill('SIGTERM')))
    await deployment.cleanup()
    for (const [i, exit] of exits.entries()) assert.deepEqual(exit, { code: 0, signal: null }, servers[i]!.output())
  })

  /** Segments and the watermark, read from the shared database. */
  async function compacted(): Promise<{ segments: number; watermark: number }> {
    const client = new pg.Client({ connectionString: deployment.databaseUrl })
    await client.connect()
    try {
      const s = await client.query('SELECT COUNT(*)::int AS n FROM columnar_segments')
      const w = await client.query('SELECT COALESCE(MAX(last_rowid), 0)::int AS w FROM columnar_watermarks')
      return { segments: s.rows[0].n, watermark: w.rows[0].w }
    } finally {
      await client.end()
    }
  }

  async function answers(server: ChildServer): Promise<unknown[]> {
    const out: unknown[] = []
    for (const query of QUERIES) {
      const r = await call(server.url, 'POST', '/oi-api/warm-queries', deployment.tokens.analyst, { Query: query })
      assert.equal(r.status, 200, `${query}: ${r.text}`)
      out.push(r.body['results'])
    }
    return out
  }

  it('every process answers the same rows from the shared segments and tail', async () => {
    const rows = sensorRows(ROWS)
    for (let start = 0; start < ROWS; start += 300) {
      const via = servers[(start / 300) % PROCESSES]!
      const r = await call(
        via.url,
        'POST',
        '/oi-api/ingest/data-connections/sensors',
        deployment.tokens.editor,
        rows.slice(start, start + 300),
      )
      assert.equal(r.status, 200, r.text)
    }
    const deadline = Date.now() + 120_000
    while ((await compacted()).watermark < ROWS) {
      assert.ok(Date.now() < deadline, `compaction did not reach ${ROWS} rows: ${JSON.stringify(await compacted())}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.ok((await compacted()).segments >= 3, 'segments of at most 1,000 rows')
    const first = await answers(servers[0]!)
    assert.deepEqual((first[0] as { Count: number }[])[0], { Count: ROWS })
    for (const server of servers.slice(1)) assert.deepEqual(await answers(server), first)

    // rows acknowledged after compaction: the tail, read from the row store by every process
    const more = sensorRows(7, Date.parse('2026-03-01T00:00:00Z'))
    const r = await call(servers[2]!.url, 'POST', '/oi-api/ingest/data-connections/sensors', deployment.tokens.editor, more)
    assert.equal(r.status, 200, r.text)
    const counts = await Promise.all(
      servers.map(
        async (s) => (await call(s.url, 'POST', '/oi-api/warm-queries', deployment.tokens.analyst, { Query: 'Sensors | count' })).body,
      ),
    )
    for (const c of counts) assert.ok([ROWS + 7].includes((c['results'] as { Count: number }[])[0]!.Count), JSON.stringify(c))
  })
})
