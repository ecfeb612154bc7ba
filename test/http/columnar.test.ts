/**
 * The columnar tier through the server (issue 16; docs/design/columnar.md), per backend, with
 * PROVENANT_COLUMNAR on: queries run as DuckDB SQL over Parquet segments plus the row-store tail
 * and answer exactly as before compaction; rows acknowledged after a compaction are visible at
 * once; an applied row correction changes the answer at once while the original stays in the chain;
 * the portal's Connections page shows the compactor's progress and lag.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { signedIn } from '../portal/portal-client.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const QUERIES = [
  'Sensors | summarize n = count(), total = sum(value), avg_value = avg(value), last = max(timestamp) by sensor | order by sensor asc',
  'Sensors | where value > 20 and sensor has "s1" | project _rowid, timestamp, sensor, value | order by timestamp desc',
  'Sensors | summarize count() by bin(timestamp, 1h) | order by timestamp asc',
  'Sensors | where sensor == "s1" | join kind=inner (Sensors | summarize m = max(value) by sensor) on sensor | union (Meters | project kwh) | count',
]

for (const backend of BACKENDS) {
  describe(`${backend}: the columnar tier answers as the row store`, () => {
    let server: TestServer
    let analyst: string
    let editor: string
    let approver: string
    /** One after another: an account runs one query at a time and the time cap counts waiting too. */
    const runAll = async (queries: readonly string[]) => {
      const out = []
      for (const q of queries) out.push(await run(q))
      return out
    }
    const run = async (query: string, token = analyst) => {
      const response = await server.api('POST', '/oi-api/warm-queries', { token, body: { Query: query } })
      assert.equal(response.status, 200, `${query}: ${response.text}`)
      return { columns: response.body.columns, results: response.body.results, truncated: response.body.truncated }
    }

    const dataDir = mkdtempSync(join(tmpdir(), 'provenant-test-columnar-'))
    before(async () => {
      server = await startTestServer(backend, {
        dataDir,
        // the background pass waits an hour: the test compacts when it wants to
        config: {
          columnar: { dir: join(dataDir, 'segments'), threads: 1, memoryLimit: '256MB', segmentRows: 1000, intervalMs: 3_600_000 },
        },
      })
      // a generous time cap: this test is about answers, and CI machines are shared
      await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 10_000, timeoutSeconds: 300 } } }))
      analyst = await server.token('analyst')
      editor = await server.token('editor')
      approver = await server.token('approver')
    })
    after(async () => {
      await server.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    it('compaction changes no answer; rows acknowledged afterwards show at once', async () => {
      const columnar = server.runtime.columnar
      assert.ok(columnar, 'the tier is on')
      await pushRows(server, 'sensors', sensorRows(2500))
      await pushRows(server, 'meters', [{ timestamp: '2026-01-01T00:00:00Z', kwh: 2.5 }])
      const before = await runAll(QUERIES)
      assert.equal(await columnar.compactAll(), 2501)
      const progress = await columnar.progress()
      assert.deepEqual(progress.map((p) => [p.lookup, p.segments, p.compactedRows, p.tailRows]).sort(), [
        ['meters', 1, 1, 0],
        ['sensors', 3, 2500, 0],
      ])
      assert.deepEqual(await runAll(QUERIES), before)
      await pushRows(server, 'sensors', sensorRows(5, Date.parse('2026-02-01T00:00:00Z')))
      const counted = await run('Sensors | count')
      assert.deepEqual(counted.results, [{ Count: 2505 }], 'the tail is read from the row store')
    })

    it("the portal's Connections page shows the compactor's progress and lag per connection", async () => {
      const admin = await signedIn(server, 'admin')
      const page = await admin.get('/portal/connections')
      assert.equal(page.status, 200)
      const row = (lookup: string): string[] => {
        const match = new RegExp(`<tr data-columnar="${lookup}">([\\s\\S]*?)</tr>`).exec(page.text)
        assert.ok(match, `a columnar row for ${lookup}`)
        return [...match[1]!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim())
      }
      // sensors: 3 segments, 2,500 rows compacted, the 5 rows pushed after compaction are the tail
      const sensors = row('sensors')
      assert.deepEqual(sensors.slice(0, 4), ['sensors', '3', '2500', '5'])
      assert.notEqual(sensors[4], 'not yet', 'the last compaction time is shown')
      assert.deepEqual(row('meters').slice(0, 4), ['meters', '1', '1', '0'])
      const analystPage = await (await signedIn(server, 'analyst')).get('/portal/connections')
      assert.notEqual(analystPage.status, 200, 'only those who manage connections see the page')
    })

    it('an applied row correction changes the columnar answer at once; the original stays in the chain', async () => {
      await server.runtime.columnar!.compactAll()
      const query = 'Sensors | where _rowid == 7 | project _rowid, value'
      const [{ value: original }] = (await run(query)).results
      const created = await server.api('POST', '/oi-api/provenance/amendments', {
        token: editor,
        body: {
          ScopeKey: 'line-1',
          entityType: 'row:sensors',
          entityId: '7',
          reasonCategory: 'instrument-fault',
          reason: 'wrong reading',
          before: { value: original },
          after: { value: 1234.5 },
        },
      })
      assert.equal(created.status, 200, created.text)
      if (created.body.status !== 'applied') {
        const approved = await server.api('POST', `/oi-api/provenance/amendments/${created.body.id}/approve?scopeKey=line-1`, {
          token: approver,
        })
        assert.equal(approved.body.status, 'applied', approved.text)
      }
      assert.deepEqual((await run(query)).results, [{ _rowid: 7, value: 1234.5 }])
      assert.deepEqual((await run('Sensors | count')).results, [{ Count: 2505 }], 'the corrected row is counted once')
    })
  })
}
