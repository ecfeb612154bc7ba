/**
 * Issue 14 item 6: the change stream respects token scopes. A token limited to some scope keys,
 * connections or surfaces receives on `/oi-api/eac-changes/stream` — live, and replayed with
 * `Last-Event-ID` or `?lastEventId=` — nothing about other scopes: no correction of another scope
 * key or of another connection's rows (not its id, ScopeKey, entity or author), and no
 * configuration summary naming a connection or surface outside its scopes. Unscoped tokens still
 * receive everything; workspace-level changes (tokens) reach every token.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { TokenScopes } from '../../src/domain/access/caller.js'
import { BACKENDS } from '../support/backends.js'
import { type ChangeListener, listenChanges } from '../support/change-listener.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const AMENDMENTS = '/oi-api/provenance/amendments'

for (const backend of BACKENDS) {
  describe(`${backend}: the change stream respects token scopes (issue 14 item 6)`, () => {
    let server: TestServer
    const listeners: ChangeListener[] = []
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig({ settings: { amendments: { approvalRequired: false, twoPersonApproval: true } } }))
      await pushRows(server, 'sensors', sensorRows(2))
      await server.services.ingest.importRows(server.workspace.id, 'meters', [{ timestamp: '2026-01-01T00:00:00Z', kwh: 1.5 }])
    })
    after(async () => {
      for (const listener of listeners) listener.close()
      server.runtime.app.server.closeAllConnections()
      await server.stop()
    })

    const listen = (token: string, options?: Parameters<typeof listenChanges>[2]) => {
      const listener = listenChanges(server.baseUrl, token, options)
      listeners.push(listener)
      return listener
    }
    const viewerWith = (scopes: TokenScopes) => server.token('viewer', { scopes })
    const rowIdOf = async (table: string) => {
      const response = await server.api('POST', '/oi-api/warm-queries', {
        token: await server.token('editor'),
        body: { Query: `${table} | project _rowid | take 1` },
      })
      assert.equal(response.status, 200, response.text)
      return response.body.results[0]._rowid as number
    }

    it('live and on replay, a scoped token receives only its scopes; the same changes reach an unscoped one', async () => {
      const start = await server.stores.changes.latestSeq(server.workspace.id)
      const tokens = {
        all: await server.token('viewer'),
        batchA: await viewerWith({ scopeKeys: ['batch-a'] }),
        sensors: await viewerWith({ connections: ['sensors'] }),
        hall: await viewerWith({ surfaces: ['hall'] }),
      }
      const live = Object.fromEntries(Object.entries(tokens).map(([name, token]) => [name, listen(token)]))
      for (const listener of Object.values(live)) await listener.waitForOpens(1)

      const editor = await server.token('editor')
      const correct = async (body: Record<string, unknown>) => {
        const response = await server.api('POST', AMENDMENTS, {
          token: editor,
          body: { reasonCategory: 'recalculation', reason: 'scope test', ...body },
        })
        assert.equal(response.status, 200, response.text)
        return response.body.id as string
      }
      const inA = await correct({ ScopeKey: 'batch-a', entityType: 'lab-result', entityId: 'LR-A', before: 1, after: 2 })
      const inB = await correct({ ScopeKey: 'batch-b', entityType: 'lab-result', entityId: 'LR-SECRET', before: 1, after: 2 })
      const sensorsRow = await rowIdOf('Sensors')
      const metersRow = await rowIdOf('Meters')
      const sensorsInA = await correct({
        ScopeKey: 'batch-a',
        entityType: 'row:sensors',
        entityId: String(sensorsRow),
        before: { value: 0 },
        after: { value: 10 },
      })
      const metersInA = await correct({
        ScopeKey: 'batch-a',
        entityType: 'row:meters',
        entityId: String(metersRow),
        before: { kwh: 1.5 },
        after: { kwh: 2.5 },
      })
      const config = sensorConfig({ settings: { amendments: { approvalRequired: false, twoPersonApproval: true } } }) as {
        connections: Record<string, unknown>[]
        surfaces: Record<string, unknown>[]
      }
      config.connections.push({
        lookup: 'secret-plant',
        kind: 'push',
        table: 'SecretPlant',
        columns: [{ name: 'timestamp', type: 'datetime' }],
      })
      config.surfaces.push({ lookup: 'secret-yard', connections: ['secret-plant'] })
      await applyAsAdmin(server, config)
      await server.token('viewer') // a workspace-level change every token receives: the marker
      const marker = await server.stores.changes.latestSeq(server.workspace.id)

      const untilMarker = async (listener: ChangeListener) => {
        const deadline = Date.now() + 15_000
        while (!listener.events.some((e) => Number(e.lastEventId) === marker)) {
          if (Date.now() > deadline) throw new Error(`no marker ${marker}; got ${listener.events.map((e) => e.lastEventId)}`)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        return listener.events
      }
      const correctionIds = (events: ChangeListener['events']) =>
        events.filter((e) => e.data['kind'] === 'correction').map((e) => e.data['entityId'])
      const configSummary = (events: ChangeListener['events']) =>
        events.filter((e) => e.data['kind'] === 'config').map((e) => e.data['summary'] as string)

      const check = async (name: keyof typeof tokens, listener: ChangeListener) => {
        const events = await untilMarker(listener)
        const text = JSON.stringify(events)
        if (name === 'all') {
          assert.deepEqual(correctionIds(events), [inA, inB, sensorsInA, metersInA])
          assert.match(configSummary(events)[0]!, /secret-plant/)
          return
        }
        if (name === 'batchA') {
          assert.ok(!text.includes(inB) && !text.includes('batch-b') && !text.includes('LR-SECRET'), `${name}: nothing of batch-b`)
          assert.deepEqual(correctionIds(events), [inA, sensorsInA, metersInA])
        } else {
          // Limited to sensors (directly, or through the surface hall), not in scope keys: batch-b is
          // theirs, the correction of a meters row is not.
          assert.ok(!text.includes(metersInA) && !text.includes('row:meters'), `${name}: no correction of a meters row`)
          assert.ok(!text.includes('secret-plant') && !text.includes('secret-yard'), `${name}: no connection or surface outside its scopes`)
          assert.deepEqual(correctionIds(events), [inA, inB, sensorsInA])
        }
        assert.equal(configSummary(events).length, 1, `${name}: the commit itself is workspace-level and still announced`)
        assert.ok(events.some((e) => Number(e.lastEventId) === marker && e.data['kind'] === 'token'))
      }
      for (const [name, listener] of Object.entries(live)) await check(name as keyof typeof tokens, listener)

      // Replay: the header, then the query parameter, both from before the first change.
      for (const [name, token] of Object.entries(tokens)) {
        await check(name as keyof typeof tokens, listen(token, { lastEventIdHeader: String(start) }))
        await check(name as keyof typeof tokens, listen(token, { lastEventIdQuery: String(start) }))
      }

      // The rule matches the corrections endpoints: the same token is refused batch-b there.
      const refused = await server.api('GET', `${AMENDMENTS}?scopeKey=batch-b`, { token: tokens.batchA })
      assert.equal(refused.status, 403)
      assert.match(errorMessage(refused), /restricted to other scopes/)
    })

    it("the corrections endpoints hide another connection's row corrections from a connection-limited token, as the stream does", async () => {
      const editor = await server.token('editor')
      // A row of its own: the first test's meters row is bound to batch-a (one chain per row, item 5).
      await server.services.ingest.importRows(server.workspace.id, 'meters', [{ timestamp: '2026-01-02T00:00:00Z', kwh: 4.5 }])
      const metersRow = await rowIdOf('Meters | order by _rowid desc')
      const current = (
        await server.api('POST', '/oi-api/warm-queries', {
          token: editor,
          body: { Query: `Meters | where _rowid == ${metersRow} | project kwh` },
        })
      ).body.results[0].kwh
      const created = await server.api('POST', AMENDMENTS, {
        token: editor,
        body: {
          ScopeKey: 'batch-e',
          entityType: 'row:meters',
          entityId: String(metersRow),
          reasonCategory: 'recalculation',
          reason: 'endpoint test',
          before: { kwh: current },
          after: { kwh: 9.5 },
        },
      })
      assert.equal(created.status, 200, created.text)
      const free = await server.api('POST', AMENDMENTS, {
        token: editor,
        body: {
          ScopeKey: 'batch-e',
          entityType: 'lab-result',
          entityId: 'LR-E',
          reasonCategory: 'recalculation',
          reason: 'x',
          before: 1,
          after: 2,
        },
      })
      assert.equal(free.status, 200, free.text)
      for (const token of [await viewerWith({ connections: ['sensors'] }), await viewerWith({ surfaces: ['hall'] })]) {
        const list = await server.api('GET', `${AMENDMENTS}?scopeKey=batch-e`, { token })
        assert.equal(list.status, 200, list.text)
        assert.deepEqual(
          list.body.results.map((c: { id: string }) => c.id),
          [free.body.id],
        )
        assert.equal(list.body.totalCount, 1)
        const legacy = await server.api('GET', '/oi-api/amendment-logs/batch-e/amendments/query', { token })
        assert.equal(legacy.body.totalCount, 1)
        const chain = await server.api('GET', `${AMENDMENTS}/chain?scopeKey=batch-e&entityId=${metersRow}`, { token })
        assert.deepEqual(chain.body.results, [])
        const typed = await server.api('GET', `${AMENDMENTS}/chain?scopeKey=batch-e&entityId=${metersRow}&entityType=row:meters`, { token })
        assert.equal(typed.status, 403)
        assert.match(errorMessage(typed), /restricted to other connections than "meters"/)
        const byId = await server.api('GET', `${AMENDMENTS}/${created.body.id}?scopeKey=batch-e`, { token })
        assert.equal(byId.status, 404, 'as if it did not exist')
      }
      const all = await server.api('GET', `${AMENDMENTS}?scopeKey=batch-e`, { token: await server.token('viewer') })
      assert.equal(all.body.totalCount, 2)
    })
  })
}
