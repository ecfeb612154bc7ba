/**
 * Spec 2.1–2.3, 4.1 and design §5: warm queries by lookup and API path with approver and approval
 * time, ad-hoc KQL, rights and scopes, the row and time caps, read-only execution. Every case runs
 * on the row store and again on the columnar tier (issue 16: every semantic holds there), with the
 * rows compacted into Parquet segments before the first query.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

for (const backend of BACKENDS)
  for (const tier of ['row store', 'columnar tier'] as const) {
    describe(`${backend}, ${tier}: warm queries and ad-hoc KQL (spec 4.1)`, () => {
      let server: TestServer
      let analyst: string
      const adhoc = (query: string, token = analyst) => server.api('POST', '/oi-api/warm-queries', { token, body: { Query: query } })
      const dataDir = mkdtempSync(join(tmpdir(), 'provenant-test-warm-'))
      before(async () => {
        server = await startTestServer(backend, {
          dataDir,
          // the background pass waits an hour: the rows are compacted below, before any query
          ...(tier === 'columnar tier'
            ? {
                config: {
                  columnar: { dir: join(dataDir, 'segments'), threads: 1, memoryLimit: '256MB', segmentRows: 1000, intervalMs: 3_600_000 },
                },
              }
            : {}),
        })
        await applyAsAdmin(server, sensorConfig())
        await pushRows(server, 'sensors', sensorRows(9))
        await pushRows(server, 'meters', [{ timestamp: '2026-01-01T00:00:00Z', kwh: 2.5 }])
        if (tier === 'columnar tier') assert.equal(await server.runtime.columnar!.compactAll(), 10, 'every row is in a segment')
        analyst = await server.token('analyst')
      })
      after(async () => {
        await server.stop()
        rmSync(dataDir, { recursive: true, force: true })
      })

      it('runs a warm query by lookup and by API path, with approver and approval time', async () => {
        const approval = (await server.services.config.current(server.workspace.id)).approvals['avg-by-sensor']!
        for (const address of ['avg-by-sensor', 'plant/hall/avg']) {
          const response = await server.api('GET', `/oi-api/warm-queries/${address}`, { token: analyst })
          assert.equal(response.status, 200, response.text)
          assert.deepEqual(response.body, {
            lookup: 'avg-by-sensor',
            columns: [
              { name: 'sensor', type: 'string' },
              { name: 'avg_value', type: 'real' },
            ],
            results: [
              { sensor: 's0', avg_value: 3 },
              { sensor: 's1', avg_value: 4 },
              { sensor: 's2', avg_value: 5 },
            ],
            truncated: false,
            rowCount: 3,
            approvedBy: server.accounts.admin.name,
            approvedAt: new Date(approval.at).toISOString(),
          })
        }
      })

      it('404 for an unknown lookup; 400 for a warm query without saved text', async () => {
        const unknown = await server.api('GET', '/oi-api/warm-queries/plant/nowhere', { token: analyst })
        assert.equal(unknown.status, 404)
        assert.match(errorMessage(unknown), /no warm query has the lookup or API path "plant\/nowhere"/)
        const empty = await server.api('GET', '/oi-api/warm-queries/no-text', { token: analyst })
        assert.equal(empty.status, 400)
        assert.match(errorMessage(empty), /warm query "no-text" has no saved query text/)
      })

      it('runs ad-hoc KQL with the caller as approver at run time; property names are case-insensitive', async () => {
        const started = Date.now()
        const response = await server.api('POST', '/oi-api/warm-queries', {
          token: analyst,
          body: { query: 'Sensors | where value >= 7 | project timestamp, value | order by value asc' },
        })
        assert.equal(response.status, 200, response.text)
        assert.deepEqual(response.body.results, [
          { timestamp: '2026-01-01T00:07:00Z', value: 7 },
          { timestamp: '2026-01-01T00:08:00Z', value: 8 },
        ])
        assert.deepEqual(response.body.columns, [
          { name: 'timestamp', type: 'datetime' },
          { name: 'value', type: 'real' },
        ])
        assert.equal(response.body.approvedBy, server.accounts.analyst.name)
        assert.ok(Math.abs(Date.parse(response.body.approvedAt) - started) < 10_000)
        assert.equal(response.body.lookup, undefined)
      })

      it('400 with line and column for bad KQL, an unknown name with a suggestion, and unsupported features by name', async () => {
        const syntax = await adhoc('Sensors\n| where value >')
        assert.equal(syntax.status, 400)
        assert.match(errorMessage(syntax), /line 2, column \d+/)
        const unknown = await adhoc('Sensor | take 1')
        assert.equal(unknown.status, 400)
        assert.match(errorMessage(unknown), /Sensor.*did you mean 'Sensors'/)
        const unsupported = await adhoc('Sensors | evaluate python(typeof(*), "x")')
        assert.equal(unsupported.status, 400)
        assert.match(errorMessage(unsupported), /python/)
      })

      it('400 for a missing, empty, duplicated or non-string Query', async () => {
        for (const [body, message] of [
          [{}, /Query is required/],
          [{ Query: '' }, /Query is empty/],
          [{ Query: 5 }, /body\.Query/],
          [{ Query: 'print 1', query: 'print 2' }, /name the same property/],
        ] as const) {
          const response = await server.api('POST', '/oi-api/warm-queries', { token: analyst, body })
          assert.equal(response.status, 400, JSON.stringify(body))
          assert.match(errorMessage(response), message)
        }
      })

      it('403 without the right: warm-queries:read for GET, queries:run for POST', async () => {
        const readOnly = await server.token('analyst', { rights: ['warm-queries:read'] })
        const runOnly = await server.token('analyst', { rights: ['queries:run'] })
        assert.equal((await server.api('GET', '/oi-api/warm-queries/avg-by-sensor', { token: runOnly })).status, 403)
        assert.equal((await adhoc('print 1', readOnly)).status, 403)
        const viewer = await adhoc('print 1', await server.token('viewer'))
        assert.equal(viewer.status, 403)
        assert.match(errorMessage(viewer), /lacks the right queries:run/)
      })

      it("tables outside the token's scopes do not exist for its ad-hoc KQL; a warm query reading them is a 403", async () => {
        const metersOnly = await server.token('analyst', { scopes: { connections: ['meters'] } })
        const denied = await adhoc('Sensors | count', metersOnly)
        const missing = await adhoc('NoSuchTable | count', metersOnly)
        assert.equal(denied.status, 400)
        assert.equal(missing.status, 400)
        // the same answer as for a table that does not exist: nothing says Sensors is there
        assert.equal(errorMessage(denied).replace('Sensors', 'NoSuchTable'), errorMessage(missing))
        assert.equal((await adhoc('Meters | count', metersOnly)).status, 200)
        const viaSurface = await server.token('analyst', { scopes: { surfaces: ['yard'] } })
        assert.equal((await adhoc('union Sensors, Meters | count', viaSurface)).status, 400)
        const warm = await server.api('GET', '/oi-api/warm-queries/avg-by-sensor', { token: viaSurface })
        assert.equal(warm.status, 403)
        assert.match(errorMessage(warm), /warm query "avg-by-sensor" reads connections this token's scopes do not include/)
        assert.equal((await adhoc('print 1', metersOnly)).status, 200, 'queries over no table are always allowed')
      })

      it('the row cap truncates and says so; a result of exactly the cap is not truncated', async () => {
        await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 5, timeoutSeconds: 30 } } }))
        try {
          const over = await adhoc('range x from 1 to 6 step 1')
          assert.equal(over.body.rowCount, 5)
          assert.equal(over.body.truncated, true)
          const exact = await adhoc('range x from 1 to 5 step 1')
          assert.equal(exact.body.rowCount, 5)
          assert.equal(exact.body.truncated, false)
        } finally {
          await applyAsAdmin(server, sensorConfig())
        }
      })

      it('stops a query at the time cap with a 400 naming the cap, while other requests keep being answered', async () => {
        await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 10_000, timeoutSeconds: 2 } } }))
        try {
          let slowDone = false
          const slow = adhoc('range x from 1 to 4000000 step 1 | extend y = strcat("a", x) | summarize dcount(y)').finally(() => {
            slowDone = true
          })
          await new Promise((resolve) => setTimeout(resolve, 50))
          const quick = await server.api('GET', '/oi-api/provenance/reason-categories', { token: analyst })
          assert.equal(quick.status, 200)
          assert.equal(slowDone, false, 'another request was answered while the slow query ran')
          const response = await slow
          assert.equal(response.status, 400)
          assert.match(errorMessage(response), /longer than the 2 s time cap and was stopped/)
          const after = await adhoc('print answer = 42')
          assert.deepEqual(after.body.results, [{ answer: 42 }], 'the pool recovered')
        } finally {
          await applyAsAdmin(server, sensorConfig())
        }
      })

      it('literals never become SQL text: an injection attempt is just a string', async () => {
        const response = await adhoc(
          `Sensors | where sensor == "x'; DROP TABLE workspaces; --" or sensor == 'y"); DELETE FROM tokens; --' | count`,
        )
        assert.equal(response.status, 200, response.text)
        assert.deepEqual(response.body.results, [{ Count: 0 }])
        assert.equal((await server.services.admin.listWorkspaces()).length >= 1, true)
        assert.equal((await adhoc('Sensors | count')).body.results[0].Count, 9)
      })

      it('returns the render hint as visualization', async () => {
        const response = await adhoc('Sensors | summarize count() by sensor | render columnchart with (title="per sensor")')
        assert.equal(response.status, 200, response.text)
        assert.equal(response.body.visualization.kind, 'columnchart')
      })
    })
  }
