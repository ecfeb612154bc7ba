/**
 * Issue 17 items 8 and 9, through the real server on each backend: a row's ingestion time reads
 * back as the instant it was stored (`_ingested_at` is kept in milliseconds and read as ticks), and
 * a real column keeps NaN and ±Infinity (SQLite has no NaN: it is stored as text and decoded).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushConnectionConfig, queryRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const CONFIG = pushConnectionConfig('probes', 'Probes', [
  { name: 'timestamp', type: 'datetime' },
  { name: 'name', type: 'string' },
  { name: 'r', type: 'real' },
])

for (const backend of BACKENDS) {
  describe(`${backend}: ingestion time and non-finite reals read back exactly`, () => {
    let server: TestServer
    let editor: string
    let analyst: string
    let ingestedAt: string
    const query = (q: string) => queryRows(server, analyst, q)
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, CONFIG)
      editor = await server.token('editor')
      analyst = await server.token('analyst')
      const response = await server.api('POST', '/oi-api/ingest/data-connections/probes', {
        token: editor,
        body: [
          { timestamp: '2026-01-01T00:00:00Z', name: 'nan', r: 'NaN' },
          { timestamp: '2026-01-01T00:00:01Z', name: 'inf', r: 'Infinity' },
          { timestamp: '2026-01-01T00:00:02Z', name: 'minf', r: '-Infinity' },
          { timestamp: '2026-01-01T00:00:03Z', name: 'one', r: 1.5 },
          { timestamp: '2026-01-01T00:00:04Z', name: 'null', r: null },
        ],
      })
      assert.equal(response.status, 200, response.text)
      ingestedAt = response.body.ingestedAt as string
    })
    after(() => server.stop())

    it('_ingested_at is the instant the batch was stored, in SQL and in memory', async () => {
      const rows = await query('Probes | where name == "one" | project _ingested_at, t = tostring(_ingested_at)')
      assert.equal(rows.length, 1)
      assert.equal(Date.parse(rows[0]!['_ingested_at'] as string), Date.parse(ingestedAt))
      // filtered in SQL against a datetime parameter, and compared in memory with a string-built datetime
      const recent = await query(
        `Probes | where _ingested_at >= datetime(${ingestedAt}) and _ingested_at < datetime(${ingestedAt}) + 1ms | count`,
      )
      assert.deepEqual(recent, [{ Count: 5 }])
      const inMemory = await query('Probes | where name == "one" | extend k = strlen(name) | summarize max(_ingested_at)')
      assert.equal(Date.parse(inMemory[0]!['max__ingested_at'] as string), Date.parse(ingestedAt))
      // ingestion_time() is the same instant (null where no table records one)
      const viaFunction = await query('Probes | where name == "one" | project t = ingestion_time()')
      assert.equal(Date.parse(viaFunction[0]!['t'] as string), Date.parse(ingestedAt))
      assert.deepEqual(await query('print t = ingestion_time()'), [{ t: null }])
    })

    it('NaN and ±Infinity are stored and returned, distinct from null', async () => {
      const rows = await query('Probes | project name, r, isnan = isnan(r), isnull = isnull(r) | order by name asc')
      assert.deepEqual(rows, [
        { name: 'inf', r: 'Infinity', isnan: false, isnull: false },
        { name: 'minf', r: '-Infinity', isnan: false, isnull: false },
        { name: 'nan', r: 'NaN', isnan: true, isnull: false },
        { name: 'null', r: null, isnan: false, isnull: true },
        { name: 'one', r: 1.5, isnan: false, isnull: false },
      ])
      // pushed-down filters and aggregates answer as the evaluator (SQLite refuses a NaN read and runs in memory)
      assert.deepEqual(await query('Probes | where r > 1 | project name | order by name asc'), [{ name: 'inf' }, { name: 'one' }])
      assert.deepEqual(await query('Probes | summarize c = countif(isnotnull(r)), n = countif(isnan(r))'), [{ c: 4, n: 1 }])
    })

    it('the stored rows the live stream and exports read keep NaN', async () => {
      const table = (await server.stores.config.connectionTables(server.workspace.id)).find((t) => t.lookup === 'probes')!
      const stored = await server.stores.data.rowsAfter(table, 0, 100)
      const r = new Map(stored.map((row) => [row.values[1], row.values[2]]))
      assert.ok(Number.isNaN(r.get('nan')))
      assert.equal(r.get('inf'), Infinity)
      assert.equal(r.get('null'), null)
    })
  })
}
