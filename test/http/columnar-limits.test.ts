/**
 * The columnar tier's DuckDB limits through the server (issue 16, item 5; docs/deployment.md), per
 * backend: DuckDB spills into a directory of the process's own under the segments directory (not
 * `.tmp` in the working directory), bounded by the spill setting, and left-overs of dead processes
 * are removed at start; a query that runs out of DuckDB's memory limit or its spill space answers
 * 400 in the error envelope naming the setting and what to do, on warm and ad-hoc queries, and the
 * server keeps answering afterwards.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

/** More than any Linux pid_max (2^22): never a live process. */
const DEAD_PID = 4_194_305
const HOST = hostname().replace(/[^A-Za-z0-9.-]/g, '_')
/** A self-join of 2,500 rows counting about 700,000 distinct values per sensor: DuckDB spills it past a 100MB limit. */
const SPILLING =
  'Sensors | join kind=inner (Sensors | project sensor, v2 = value) on sensor | summarize dcount(v2 * 100000 + value) by sensor'

interface Limits {
  readonly memoryLimit: string
  readonly spillLimit: string
}

async function columnarServer(backend: (typeof BACKENDS)[number], dataDir: string, limits: Limits): Promise<TestServer> {
  const server = await startTestServer(backend, {
    dataDir,
    config: { columnar: { dir: join(dataDir, 'segments'), threads: 1, segmentRows: 1000, intervalMs: 3_600_000, ...limits } },
  })
  await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 10_000, timeoutSeconds: 300 } } }))
  return server
}

for (const backend of BACKENDS) {
  describe(`${backend}: DuckDB's spill directory and limits`, () => {
    let server: TestServer
    let analyst: string
    const dataDir = mkdtempSync(join(tmpdir(), 'provenant-test-columnar-limits-'))
    const spill = join(dataDir, 'segments', '.spill')
    const adhoc = (query: string) => server.api('POST', '/oi-api/warm-queries', { token: analyst, body: { Query: query } })

    before(async () => {
      // left by a process of this host that died, and by a process of another host sharing the directory
      mkdirSync(join(spill, `${HOST}-${DEAD_PID}`), { recursive: true })
      mkdirSync(join(spill, `another-host-${DEAD_PID}`), { recursive: true })
      server = await columnarServer(backend, dataDir, { memoryLimit: '100MB', spillLimit: '1MB' })
      await pushRows(server, 'sensors', sensorRows(2500))
      await server.runtime.columnar!.compactAll()
      analyst = await server.token('analyst')
    })
    after(async () => {
      await server.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    it("spills into the process's own 0700 directory under the segments directory, bounded by the setting", async () => {
      const own = join(spill, `${HOST}-${process.pid}`)
      assert.equal(statSync(own).mode & 0o777, 0o700)
      assert.ok(!existsSync(join(spill, `${HOST}-${DEAD_PID}`)), "a dead process's spill directory is removed at start")
      assert.ok(existsSync(join(spill, `another-host-${DEAD_PID}`)), "another host's is left to its own process")
      const source = await server.runtime.columnar!.openSource([])
      try {
        const rows = await source.query(
          "SELECT current_setting('temp_directory') AS c0, current_setting('max_temp_directory_size') AS c1",
          [],
          [
            { name: 'c0', type: 'string' },
            { name: 'c1', type: 'string' },
          ],
        )
        assert.deepEqual(rows, [[own, '976.5 KiB']])
      } finally {
        source.close()
      }
    })

    it('a query that outgrows the spill space answers 400 naming PROVENANT_COLUMNAR_SPILL; the server keeps answering', async () => {
      const refused = await adhoc(SPILLING)
      assert.equal(refused.status, 400, refused.text)
      assert.match(
        errorMessage(refused),
        /^the query needed more than the columnar engine's 1MB of spill space on disk and was stopped; narrow the time range, .*PROVENANT_COLUMNAR_SPILL/,
      )
      const counted = await adhoc('Sensors | count')
      assert.equal(counted.status, 200, counted.text)
      assert.deepEqual(counted.body.results, [{ Count: 2500 }])
      const warm = await server.api('GET', '/oi-api/warm-queries/avg-by-sensor', { token: analyst })
      assert.equal(warm.status, 200, warm.text)
    })
  })

  describe(`${backend}: a query that outgrows DuckDB's memory limit`, () => {
    let server: TestServer
    let analyst: string
    const dataDir = mkdtempSync(join(tmpdir(), 'provenant-test-columnar-oom-'))

    before(async () => {
      // below the 80 MB buffer the tail is read through (a limit the configuration refuses at start;
      // set here directly): reading the uncompacted rows runs out of memory, deterministically
      server = await columnarServer(backend, dataDir, { memoryLimit: '48MB', spillLimit: '4GB' })
      await pushRows(server, 'sensors', sensorRows(50))
      analyst = await server.token('analyst')
    })
    after(async () => {
      await server.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    it('answers 400 naming PROVENANT_COLUMNAR_MEMORY, ad-hoc and warm; the server keeps answering', async () => {
      const responses = [
        await server.api('POST', '/oi-api/warm-queries', { token: analyst, body: { Query: 'Sensors | count' } }),
        await server.api('GET', '/oi-api/warm-queries/avg-by-sensor', { token: analyst }),
      ]
      for (const response of responses) {
        assert.equal(response.status, 400, response.text)
        assert.match(
          errorMessage(response),
          /^the query needed more than the columnar engine's 48MB memory limit and was stopped; narrow the time range, or filter or summarize earlier .*PROVENANT_COLUMNAR_MEMORY/,
        )
      }
      const printed = await server.api('POST', '/oi-api/warm-queries', { token: analyst, body: { Query: 'print x = 1' } })
      assert.equal(printed.status, 200, printed.text)
      assert.equal((await server.api('GET', '/healthz')).status, 200)
    })
  })
}
