/**
 * When the columnar compactor writes segments (issue 16; docs/design/columnar.md, "Compaction
 * policy"), through a server per backend with rows ingested by the ingest service: a tail is
 * compacted when it holds a full segment's rows (counted by staging, whatever row ids other
 * connections of the workspace took in between) or when its oldest row is older than the tail age;
 * a younger tail stays in the row store, and every row is counted once throughout.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { manualClock } from '../../src/shared/clock.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const SEGMENT_ROWS = 1_000

for (const backend of BACKENDS) {
  describe(`${backend}: the compactor's policy`, () => {
    let server: TestServer
    let analyst: string
    // the clock ingest stamps rows with and the compactor measures their age by
    const clock = manualClock(Date.now())
    const dataDir = mkdtempSync(join(tmpdir(), 'provenant-test-columnar-policy-'))

    before(async () => {
      server = await startTestServer(backend, {
        dataDir,
        clock,
        // the background pass waits an hour: the test runs the passes
        config: {
          columnar: {
            dir: join(dataDir, 'segments'),
            threads: 1,
            memoryLimit: '256MB',
            segmentRows: SEGMENT_ROWS,
            intervalMs: 3_600_000,
            tailAgeMs: 60_000,
          },
        },
      })
      await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 10_000, timeoutSeconds: 300 } } }))
      analyst = await server.token('analyst')
    })
    after(async () => {
      await server.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    const count = async (): Promise<number> => {
      const response = await server.api('POST', '/oi-api/warm-queries', { token: analyst, body: { Query: 'Sensors | count' } })
      assert.equal(response.status, 200, response.text)
      return response.body.results[0].Count
    }
    const sensorsTable = async () =>
      (await server.runtime.stores.config.connectionTables(server.workspace.id)).find((t) => t.lookup === 'sensors')!

    it('compacts a full segment as soon as the tail holds one, and a younger partial tail only once it is old', async () => {
      const columnar = server.runtime.columnar!
      const table = await sensorsTable()
      await pushRows(server, 'sensors', sensorRows(600))
      assert.equal(await columnar.compactDue(), 0, 'a young tail of 600 rows stays in the row store')
      // another connection of the workspace takes row ids in between: the tail is counted, not subtracted
      await pushRows(server, 'meters', [{ timestamp: '2026-01-01T00:00:00Z', kwh: 2.5 }])
      await pushRows(server, 'sensors', sensorRows(500, Date.parse('2026-01-02T00:00:00Z')))
      assert.equal(await columnar.compactDue(), SEGMENT_ROWS, 'one full segment')
      assert.deepEqual(
        (await columnar.store.segments(table.sqlName)).map((s) => s.rowCount),
        [SEGMENT_ROWS],
      )
      assert.equal(await count(), 1100)
      assert.equal(await columnar.compactDue(), 0, 'the 100 rows left are young')

      clock.advance(59_999)
      assert.equal(await columnar.compactDue(), 0, 'not yet a minute old')
      // a minute after their ingest the tails are compacted though not full (with the rows that
      // came since): the sensors' 100 + 5 rows and the meter's row (a tail of at least
      // segmentRows / 1,000 rows)
      clock.advance(1)
      await pushRows(server, 'sensors', sensorRows(5, Date.parse('2026-01-03T00:00:00Z')))
      assert.equal(await columnar.compactDue(), 100 + 5 + 1)
      assert.deepEqual(
        (await columnar.store.segments(table.sqlName)).map((s) => s.rowCount),
        [SEGMENT_ROWS, 105],
      )
      assert.equal(await count(), 1105, 'every row once')
      const progress = await columnar.progress()
      assert.deepEqual(progress.map((p) => [p.lookup, p.compactedRows, p.tailRows]).sort(), [
        ['meters', 1, 0],
        ['sensors', 1105, 0],
      ])
    })
  })
}
