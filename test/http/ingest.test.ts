/**
 * Push ingest (issue: KQL, item 6): validated, typed, all-or-nothing, workspace-wide row ids,
 * announced after commit; and the error envelope for every malformed body.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { BusEvent } from '../../src/domain/streams/event-bus.js'
import { BACKENDS } from '../support/backends.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

export const SENSOR_CONFIG = {
  connections: [
    {
      lookup: 'sensors',
      kind: 'push',
      table: 'Sensors',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'sensor', type: 'string' },
        { name: 'value', type: 'real' },
        { name: 'count', type: 'long' },
        { name: 'ok', type: 'bool' },
        { name: 'tags', type: 'dynamic' },
        { name: 'duration', type: 'timespan' },
      ],
    },
    {
      lookup: 'meters',
      kind: 'push',
      table: 'Meters',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'kwh', type: 'real' },
      ],
    },
    { lookup: 'pulled', kind: 'postgres', table: 'Pulled', columns: [{ name: 'timestamp', type: 'datetime' }] },
  ],
  surfaces: [{ lookup: 'hall', connections: ['sensors'] }],
}

for (const backend of BACKENDS) {
  describe(`${backend}: push ingest`, () => {
    let server: TestServer
    let editor: string
    const path = (lookup: string) => `/oi-api/ingest/data-connections/${lookup}`
    before(async () => {
      server = await startTestServer(backend)
      await server.services.config.apply(
        server.workspace.id,
        { accountId: server.accounts.admin.id, accountName: 'admin', role: 'admin' },
        SENSOR_CONFIG,
      )
      editor = await server.token('editor')
    })
    after(() => server.stop())

    it('stores a JSON array, typed, with consecutive row ids, and announces it after commit', async () => {
      const events: BusEvent[] = []
      const unsubscribe = server.services.bus.subscribe((e) => {
        if (e.kind === 'rows') events.push(e)
      })
      const response = await server.api('POST', path('sensors'), {
        token: editor,
        body: [
          {
            timestamp: '2026-01-01T00:00:00.1234567Z',
            sensor: 'a',
            value: 1.5,
            count: 3,
            ok: true,
            tags: { x: [1, 2] },
            duration: '01:30:00',
          },
          { timestamp: '2026-01-01T00:01:00+01:00', sensor: 'b', value: null },
        ],
      })
      unsubscribe()
      assert.equal(response.status, 200, response.text)
      assert.equal(response.body.rowCount, 2)
      assert.equal(response.body.lastRowId, response.body.firstRowId + 1)
      const table = (await server.stores.config.connectionTables(server.workspace.id)).find((t) => t.lookup === 'sensors')!
      const stored = await server.stores.data.rowsAfter(table, response.body.firstRowId - 1, 10)
      assert.deepEqual(
        stored.map((r) => r.values),
        [
          [17672256001234567n, 'a', 1.5, 3, true, { x: [1, 2] }, 54_000_000_000n],
          [17672220600000000n, 'b', null, null, null, null, null],
        ],
      )
      assert.equal(events.length, 1)
      assert.deepEqual(
        { ...events[0], rows: undefined, at: undefined },
        {
          kind: 'rows',
          workspaceId: server.workspace.id,
          connection: 'sensors',
          firstRowId: response.body.firstRowId,
          lastRowId: response.body.lastRowId,
          at: undefined,
          rows: undefined,
        },
      )
    })

    it("accepts NDJSON, and row ids increase across the workspace's connections", async () => {
      const first = await server.api('POST', path('meters'), {
        token: editor,
        rawBody: '{"timestamp":"2026-01-02T00:00:00Z","kwh":1}\n\n{"timestamp":"2026-01-02T01:00:00Z","kwh":2}\n',
        headers: { 'content-type': 'application/x-ndjson' },
      })
      assert.equal(first.status, 200, first.text)
      const second = await server.api('POST', path('sensors'), {
        token: editor,
        body: [{ timestamp: '2026-01-02T00:00:00Z', sensor: 'c' }],
      })
      assert.equal(second.body.firstRowId, first.body.lastRowId + 1)
    })

    it('refuses the whole batch when one row does not fit, naming row and column', async () => {
      const table = (await server.stores.config.connectionTables(server.workspace.id)).find((t) => t.lookup === 'sensors')!
      const before = (await server.stores.data.rowsAfter(table, 0, 1000)).length
      const cases: [unknown[], RegExp][] = [
        [
          [
            { timestamp: '2026-01-01T00:00:00Z', value: 1 },
            { timestamp: '2026-01-01T00:00:00Z', value: 'hot' },
          ],
          /row 2: column value: expected a number, got "hot"/,
        ],
        [[{ timestamp: 'yesterday' }], /row 1: column timestamp: expected an ISO 8601 datetime/],
        [[{ sensor: 'x' }], /row 1: column timestamp: the timestamp is required/],
        [[{ timestamp: '2026-01-01T00:00:00Z', colour: 'red' }], /row 1: column "colour" is not declared/],
        [[{ timestamp: '2026-01-01T00:00:00Z', count: 1.5 }], /column count: expected a whole number/],
        // an exact integer beyond 2^53 is stored exactly (test/http/long-64bit.test.ts); 1e30 is a double
        [[{ timestamp: '2026-01-01T00:00:00Z', count: 1e30 }], /beyond the exactly representable range/],
        [[42], /row 1: expected an object of column values/],
        [[], /the batch is empty/],
      ]
      for (const [body, message] of cases) {
        const response = await server.api('POST', path('sensors'), { token: editor, body })
        assert.equal(response.status, 400, JSON.stringify(body))
        assert.match(errorMessage(response), message)
      }
      assert.equal((await server.stores.data.rowsAfter(table, 0, 1000)).length, before, 'nothing stored')
    })

    it('400 in the envelope for malformed, duplicate-key, empty, non-JSON and oversized bodies', async () => {
      const malformed = await server.api('POST', path('sensors'), { token: editor, rawBody: '[{"timestamp": ' })
      assert.equal(malformed.status, 400)
      assert.match(errorMessage(malformed), /not valid JSON.*position/)
      const duplicate = await server.api('POST', path('sensors'), {
        token: editor,
        rawBody: '[{"timestamp":"2026-01-01T00:00:00Z","value":1,"value":2}]',
      })
      assert.equal(duplicate.status, 400)
      assert.match(errorMessage(duplicate), /duplicate key "value"/)
      const empty = await server.api('POST', path('sensors'), { token: editor, rawBody: '' })
      assert.equal(empty.status, 400)
      errorMessage(empty)
      const xml = await server.api('POST', path('sensors'), {
        token: editor,
        rawBody: '<rows/>',
        headers: { 'content-type': 'application/xml' },
      })
      assert.equal(xml.status, 400)
      assert.match(errorMessage(xml), /Content-Type/)
      const object = await server.api('POST', path('sensors'), { token: editor, body: { timestamp: '2026-01-01T00:00:00Z' } })
      assert.equal(object.status, 400)
      assert.match(errorMessage(object), /must be a JSON array/)
      const huge = await server.api('POST', path('sensors'), { token: editor, rawBody: `[${'"x",'.repeat(9_000_000)}"x"]` })
      assert.equal(huge.status, 400)
      assert.match(errorMessage(huge), /larger than this endpoint accepts/)
      const badLine = await server.api('POST', path('sensors'), {
        token: editor,
        rawBody: '{"timestamp":"2026-01-01T00:00:00Z"}\n{oops}\n',
        headers: { 'content-type': 'application/x-ndjson' },
      })
      assert.equal(badLine.status, 400)
      assert.match(errorMessage(badLine), /line 2 is not valid JSON/)
    })

    it("403 without ingest:write or outside the token's connections; 404 unknown; 400 for a pull connection", async () => {
      const analyst = await server.api('POST', path('sensors'), {
        token: await server.token('analyst'),
        body: [{ timestamp: '2026-01-01T00:00:00Z' }],
      })
      assert.equal(analyst.status, 403)
      assert.match(errorMessage(analyst), /lacks the right ingest:write/)
      const scoped = await server.api('POST', path('sensors'), {
        token: await server.token('editor', { scopes: { connections: ['meters'] } }),
        body: [{ timestamp: '2026-01-01T00:00:00Z' }],
      })
      assert.equal(scoped.status, 403)
      assert.match(errorMessage(scoped), /restricted to other connections/)
      const unknown = await server.api('POST', path('nope'), { token: editor, body: [{ timestamp: '2026-01-01T00:00:00Z' }] })
      assert.equal(unknown.status, 404)
      assert.match(errorMessage(unknown), /no data connection "nope"/)
      const pulled = await server.api('POST', path('pulled'), { token: editor, body: [{ timestamp: '2026-01-01T00:00:00Z' }] })
      assert.equal(pulled.status, 400)
      assert.match(errorMessage(pulled), /is a postgres connection; only push connections accept rows/)
    })

    it('503 when push ingest is switched off in the workspace settings', async () => {
      await server.services.config.apply(
        server.workspace.id,
        { accountId: server.accounts.admin.id, accountName: 'admin', role: 'admin' },
        {
          ...SENSOR_CONFIG,
          settings: { capabilities: { connectors: { push: false, postgres: true, mqtt: true } } },
        },
      )
      const response = await server.api('POST', path('sensors'), { token: editor, body: [{ timestamp: '2026-01-01T00:00:00Z' }] })
      assert.equal(response.status, 503)
      assert.match(errorMessage(response), /push ingest is switched off/)
      await server.services.config.apply(
        server.workspace.id,
        { accountId: server.accounts.admin.id, accountName: 'admin', role: 'admin' },
        SENSOR_CONFIG,
      )
    })
  })
}
