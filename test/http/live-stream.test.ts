/**
 * Spec 4.3, 6 and issue 6, items 3-4: `GET /oi-api/live-stream` with a real `ws` client. Refusals
 * (401/403/400/426/503) come before the upgrade in the error envelope; every ingested row arrives
 * once, in id order, with the documented fields, restricted by the filters and the token's scopes;
 * browsers authenticate with the subprotocol; `since` resumes without gap or duplicate; a client
 * that does not read is closed with 1013; revocation, the capability switch and shutdown close
 * streams; on PostgreSQL rows ingested through one process reach the clients of another.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { typeRows } from '../../src/domain/ingest/row-validation.js'
import { platformContainer } from '../../src/domain/ledger/ledger-service.js'
import { apiServicesOf } from '../../src/domain/services.js'
import { buildApp } from '../../src/http/app.js'
import { liveStreamRoutes } from '../../src/http/routes/live-stream.js'
import { enableWebSocketUpgrades } from '../../src/http/websocket-upgrade.js'
import { manualClock } from '../../src/shared/clock.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { connectLive, type LiveClient, refusedLive } from '../support/live-client.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const meterRows = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ timestamp: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(), kwh: i + 0.5 }))

for (const backend of BACKENDS) {
  describe(`${backend}: live stream (spec 4.3, 6)`, () => {
    let server: TestServer
    let viewer: string
    const clients: LiveClient[] = []
    const connect = async (options: Parameters<typeof connectLive>[1], baseUrl = server.baseUrl): Promise<LiveClient> => {
      const client = await connectLive(baseUrl, options)
      clients.push(client)
      return client
    }
    const latestId = () => server.stores.data.latestRowId(server.workspace.id)

    // A manual clock, so a token's expiry can be reached without waiting.
    const clock = manualClock(Date.now())
    before(async () => {
      server = await startTestServer(backend, { clock })
      await applyAsAdmin(server, sensorConfig())
      viewer = await server.token('viewer')
    })
    after(async () => {
      for (const client of clients) client.ws.terminate()
      await server.stop()
    })

    it('refuses before the upgrade, in the error envelope: 401, 403, 400, 426', async () => {
      const anonymous = await refusedLive(server.baseUrl)
      assert.equal(anonymous.status, 401)
      assert.equal(anonymous.headers['www-authenticate'], 'Bearer realm="oi-api"')
      assert.equal(anonymous.body.HasError, true)
      assert.equal((await refusedLive(server.baseUrl, { token: 'not-a-jwt' })).status, 401)

      const noRight = await refusedLive(server.baseUrl, { token: await server.token('viewer', { rights: ['warm-queries:read'] }) })
      assert.equal(noRight.status, 403)
      assert.match(noRight.body.Messages.Error, /lacks the right streams:live/)

      const unknownConnection = await refusedLive(server.baseUrl, { token: viewer, query: 'connection=sensors,nowhere' })
      assert.equal(unknownConnection.status, 400)
      assert.match(unknownConnection.body.Messages.Error, /unknown connection "nowhere"/)
      const unknownSurface = await refusedLive(server.baseUrl, { token: viewer, query: 'surface=attic' })
      assert.equal(unknownSurface.status, 400)
      assert.match(unknownSurface.body.Messages.Error, /unknown surface "attic"/)

      const scoped = await server.token('viewer', { scopes: { connections: ['sensors'] } })
      const outside = await refusedLive(server.baseUrl, { token: scoped, query: 'connection=meters' })
      assert.equal(outside.status, 403)
      assert.match(outside.body.Messages.Error, /restricted to other connections than "meters"/)
      const surfaceScoped = await server.token('viewer', { scopes: { surfaces: ['hall'] } })
      assert.equal((await refusedLive(server.baseUrl, { token: surfaceScoped, query: 'surface=yard' })).status, 403)

      const malformed = await refusedLive(server.baseUrl, { token: viewer, query: 'since=abc' })
      assert.equal(malformed.status, 400)
      assert.match(malformed.body.Messages.Error, /since must be the id of a live event/)
      const future = await refusedLive(server.baseUrl, { token: viewer, query: `since=${(await latestId()) + 10}` })
      assert.equal(future.status, 400)
      assert.match(future.body.Messages.Error, /beyond the latest event/)

      const plain = await server.api('GET', '/oi-api/live-stream', { token: viewer })
      assert.equal(plain.status, 426)
      assert.equal(plain.headers.get('upgrade'), 'websocket')
      assert.match(errorMessage(plain), /this endpoint is a WebSocket/)
    })

    it('records the call: an accepted stream as status 101, a refused one with its status', async () => {
      const callsTo = async () => {
        const { records } = await server.services.ledger.query(
          platformContainer(server.workspace.id),
          { entityType: 'api-call' },
          { limit: 10_000, offset: 0, order: 'asc' },
        )
        return records.map((r) => r.details as Record<string, unknown>).filter((d) => d['route'] === '/oi-api/live-stream')
      }
      const before = (await callsTo()).length
      const client = await connect({ token: viewer })
      await refusedLive(server.baseUrl, { token: viewer, query: 'surface=attic' })
      const calls = (await callsTo()).slice(before)
      assert.deepEqual(
        calls.map((c) => [c['method'], c['status']]),
        [
          ['GET', 101],
          ['GET', 400],
        ],
      )
      client.close()
    })

    it('is listed in the OpenAPI description only for tokens with streams:live', async () => {
      const listed = await server.api('GET', '/oi-api/openapi', { token: viewer })
      assert.ok(listed.body.paths['/oi-api/live-stream']?.get)
      const without = await server.api('GET', '/oi-api/openapi', { token: await server.token('viewer', { rights: ['warm-queries:read'] }) })
      assert.equal(without.body.paths['/oi-api/live-stream'], undefined)
    })

    it('streams every ingested row once, in id order, with the documented fields and query-shaped values', async () => {
      const client = await connect({ token: viewer })
      const start = await latestId()
      await pushRows(server, 'sensors', sensorRows(3))
      await pushRows(server, 'meters', meterRows(2))
      await pushRows(server, 'sensors', sensorRows(1, Date.parse('2026-02-01T00:00:00Z')))
      const events = await client.waitFor(6)
      assert.deepEqual(
        events.map((e) => e.id),
        [1, 2, 3, 4, 5, 6].map((i) => start + i),
      )
      assert.deepEqual(
        events.map((e) => e.connection),
        ['sensors', 'sensors', 'sensors', 'meters', 'meters', 'sensors'],
      )
      const first = events[0]!
      assert.deepEqual(Object.keys(first), ['type', 'id', 'connection', 'surfaces', 'timestamp', 'data'])
      assert.equal(first.type, 'event')
      assert.deepEqual(first.surfaces, ['hall'])
      assert.deepEqual(events[3]!.surfaces, ['yard'])
      assert.ok(!Number.isNaN(Date.parse(first.timestamp)) && first.timestamp.endsWith('Z'))
      // The same JSON form as a query returns.
      const queried = await server.api('POST', '/oi-api/warm-queries', {
        token: await server.token('analyst'),
        body: { Query: 'Sensors | order by value asc | take 1' },
      })
      assert.equal(queried.status, 200)
      assert.deepEqual(first.data, queried.body.results[0])
      assert.deepEqual(events[3]!.data, { timestamp: '2026-01-01T00:00:00Z', kwh: 0.5 })
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(client.events.length, 6, 'nothing is sent twice')
      client.close()
    })

    it('filters by connection and by surface', async () => {
      const meters = await connect({ token: viewer, query: 'connection=meters' })
      const hall = await connect({ token: viewer, query: 'surface=hall' })
      const both = await connect({ token: viewer, query: 'connection=sensors,meters' })
      const start = await latestId()
      await pushRows(server, 'sensors', sensorRows(2))
      await pushRows(server, 'meters', meterRows(1))
      await both.waitFor(3)
      await meters.waitFor(1)
      await hall.waitFor(2)
      assert.deepEqual(
        meters.events.map((e) => [e.id, e.connection]),
        [[start + 3, 'meters']],
      )
      assert.deepEqual(
        hall.events.map((e) => [e.id, e.connection]),
        [
          [start + 1, 'sensors'],
          [start + 2, 'sensors'],
        ],
      )
      assert.deepEqual(
        both.events.map((e) => e.id),
        [start + 1, start + 2, start + 3],
      )
      for (const client of [meters, hall, both]) client.close()
    })

    it("sends only what the token's scopes allow", async () => {
      const sensorsOnly = await connect({ token: await server.token('viewer', { scopes: { connections: ['sensors'] } }) })
      const yardOnly = await connect({ token: await server.token('viewer', { scopes: { surfaces: ['yard'] } }) })
      const start = await latestId()
      await pushRows(server, 'meters', meterRows(1))
      await pushRows(server, 'sensors', sensorRows(1))
      await pushRows(server, 'meters', meterRows(1))
      await sensorsOnly.waitFor(1)
      await yardOnly.waitFor(2)
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.deepEqual(
        sensorsOnly.events.map((e) => e.id),
        [start + 2],
      )
      assert.deepEqual(
        yardOnly.events.map((e) => [e.id, e.connection, e.surfaces]),
        [
          [start + 1, 'meters', ['yard']],
          [start + 3, 'meters', ['yard']],
        ],
      )
      sensorsOnly.close()
      yardOnly.close()
    })

    it('authenticates browsers with the subprotocol bearer.<token> and answers provenant.v1', async () => {
      let upgradeHeaders: Record<string, unknown> = {}
      const client = await connectLive(server.baseUrl, {
        protocols: ['provenant.v1', `bearer.${viewer}`],
        onUpgrade: (headers) => {
          upgradeHeaders = headers
        },
      })
      clients.push(client)
      assert.equal(client.ws.protocol, 'provenant.v1')
      assert.ok(upgradeHeaders['x-request-id'], 'the 101 answer names the request id')
      assert.ok(!JSON.stringify(upgradeHeaders).includes(viewer), 'the token is never echoed')
      const start = await latestId()
      await pushRows(server, 'sensors', sensorRows(1))
      assert.equal((await client.waitFor(1))[0]!.id, start + 1)
      client.close()
      const withoutOurs = await refusedLive(server.baseUrl, { protocols: [`bearer.${viewer}`] })
      assert.equal(withoutOurs.status, 400)
      assert.match(withoutOurs.body.Messages.Error, /offer the subprotocol "provenant.v1"/)
      assert.equal((await refusedLive(server.baseUrl, { protocols: ['provenant.v1', 'bearer.forged'] })).status, 401)
      assert.ok(
        !server.logLines.some((line) => line.includes(viewer) || line.includes('bearer.forged')),
        'a token sent as a subprotocol never reaches the log',
      )
    })

    it('resumes with since: replays from storage, then live, without gap or duplicate while rows keep arriving', async () => {
      await pushRows(server, 'sensors', sensorRows(5))
      const since = (await latestId()) - 3
      // Ingest in both connections while the client joins, so the replay and live rows overlap in time.
      const ingesting = (async () => {
        for (let i = 0; i < 15; i++) await pushRows(server, i % 2 ? 'meters' : 'sensors', i % 2 ? meterRows(4) : sensorRows(4))
      })()
      const client = await connect({ token: viewer, query: `since=${since}` })
      await ingesting
      const last = await latestId()
      const events = await client.waitForId(last)
      assert.deepEqual(
        events.map((e) => e.id),
        Array.from({ length: last - since }, (_, i) => since + 1 + i),
      )
      client.close()
      // A connection filter with since replays only that connection's rows.
      const meters = await connect({ token: viewer, query: `since=${since}&connection=meters` })
      const replayed = await meters.waitFor(28)
      assert.ok(replayed.every((e) => e.connection === 'meters' && e.id > since))
      meters.close()
    })

    it('rows committed without an announcement are read from storage, in order, when a later announcement shows the gap', async () => {
      const client = await connect({ token: viewer })
      const start = await latestId()
      const table = (await server.stores.config.connectionTables(server.workspace.id)).find((t) => t.lookup === 'meters')!
      const { rows } = typeRows(table.columns, meterRows(3))
      // Committed like an ingest whose process stopped before announcing it.
      await server.stores.transaction((tx) => tx.data.insertRows(table, rows, Date.now()))
      await pushRows(server, 'sensors', sensorRows(2))
      const events = await client.waitFor(5)
      assert.deepEqual(
        events.map((e) => [e.id, e.connection]),
        [
          [start + 1, 'meters'],
          [start + 2, 'meters'],
          [start + 3, 'meters'],
          [start + 4, 'sensors'],
          [start + 5, 'sensors'],
        ],
      )
      assert.deepEqual(events[2]!.data, { timestamp: '2026-01-01T00:02:00Z', kwh: 2.5 })
      client.close()
    })

    it('closes the stream of a revoked token with 1008 "token revoked"', async () => {
      const created = await server.services.access.createToken({
        workspaceId: server.workspace.id,
        accountId: server.accounts.viewer.id,
        name: 'to revoke',
        expires: '1h',
        createdBy: { id: server.accounts.viewer.id, name: server.accounts.viewer.name },
      })
      const client = await connect({ token: created.token })
      const other = await connect({ token: viewer })
      await server.services.access.revokeToken(server.workspace.id, created.record.id, {
        id: server.accounts.viewer.id,
        name: server.accounts.viewer.name,
        canRevokeOthers: false,
      })
      assert.deepEqual(await client.closed, { code: 1008, reason: 'token revoked' })
      assert.equal(other.ws.readyState, other.ws.OPEN, "other tokens' streams stay open")
      other.close()
    })

    it('the capability switch refuses new streams with 503 and closes open ones', async () => {
      const client = await connect({ token: viewer })
      try {
        await applyAsAdmin(server, sensorConfig({ settings: { capabilities: { liveStream: false } } }))
        const { code, reason } = await client.closed
        assert.equal(code, 1008)
        assert.match(reason, /switched off/)
        const refused = await refusedLive(server.baseUrl, { token: viewer })
        assert.equal(refused.status, 503)
      } finally {
        await applyAsAdmin(server, sensorConfig())
      }
    })

    describe('with small limits', () => {
      let app: FastifyInstance
      let baseUrl: string
      before(async () => {
        app = await buildApp({
          services: apiServicesOf(server.services),
          routes: liveStreamRoutes(apiServicesOf(server.services), { maxBufferedBytes: 256 * 1024, maxBufferedMessages: 1_000_000 }),
          version: 'test',
          publicUrl: 'http://127.0.0.1',
          logger: false,
        })
        enableWebSocketUpgrades(app)
        baseUrl = await app.listen({ port: 0, host: '127.0.0.1' })
      })
      after(async () => {
        await app.close()
      })

      it('closes a client that does not read with 1013 and a reason naming the limit', async () => {
        const client = await connect({ token: viewer, query: 'connection=sensors' }, baseUrl)
        const socket = (client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket
        socket.pause()
        // ~16 MB of events: more than the kernel's socket buffers plus the 256 KiB limit.
        const wide = 'x'.repeat(2000)
        let sent = 0
        for (let batch = 0; batch < 8; batch++) {
          await pushRows(
            server,
            'sensors',
            sensorRows(1000).map((r) => ({ ...r, sensor: wide })),
          )
          sent += 1000
        }
        socket.resume()
        const { code, reason } = await client.closed
        assert.equal(code, 1013)
        assert.match(reason, /slow consumer: more than 262144 bytes waiting to be sent/)
        assert.ok(client.events.length < sent, `the slow client got ${client.events.length} of ${sent} events before the close`)
      })

      it('pings every client and drops one that does not answer, closes a stream when its token expires (1008), and closes open streams with 1001 when the server shuts down', async () => {
        const other = await buildApp({
          services: apiServicesOf(server.services),
          routes: liveStreamRoutes(apiServicesOf(server.services), { pingMs: 100 }),
          version: 'test',
          publicUrl: 'http://127.0.0.1',
          logger: false,
        })
        enableWebSocketUpgrades(other)
        const url = await other.listen({ port: 0, host: '127.0.0.1' })
        const client = await connect({ token: viewer }, url)
        await new Promise((resolve) => client.ws.once('ping', resolve))
        await new Promise((resolve) => client.ws.once('ping', resolve))
        assert.equal(client.ws.readyState, client.ws.OPEN, 'a client that answers pings stays connected')
        const silent = await connect({ token: viewer, autoPong: false }, url)
        assert.deepEqual(await silent.closed, { code: 1001, reason: 'no answer to ping' }, 'a client that does not answer pings is dropped')
        const shortLived = await connect({ token: await server.token('viewer', { expires: '15m' }) }, url)
        clock.advance(15 * 60_000 + 1000)
        assert.deepEqual(await shortLived.closed, { code: 1008, reason: 'token expired' })
        await other.close()
        const { code, reason } = await client.closed
        assert.equal(code, 1001)
        assert.match(reason, /shutting down/)
      })
    })

    if (backend === 'postgres') {
      it('rows ingested through one process reach the clients of another, and resume there', async () => {
        const second = await startTestServer('postgres', { databaseUrl: server.config.databaseUrl! })
        try {
          const client = await connect({ token: viewer }, second.baseUrl)
          const start = await latestId()
          await pushRows(server, 'sensors', sensorRows(3))
          await pushRows(server, 'meters', meterRows(2))
          const events = await client.waitFor(5)
          assert.deepEqual(
            events.map((e) => [e.id, e.connection]),
            [
              [start + 1, 'sensors'],
              [start + 2, 'sensors'],
              [start + 3, 'sensors'],
              [start + 4, 'meters'],
              [start + 5, 'meters'],
            ],
          )
          assert.deepEqual(events[0]!.data, { timestamp: '2026-01-01T00:00:00Z', sensor: 's0', value: 0 })
          client.close()
          const resumed = await connect({ token: viewer, query: `since=${start + 2}` }, second.baseUrl)
          assert.deepEqual(
            (await resumed.waitFor(3)).map((e) => e.id),
            [start + 3, start + 4, start + 5],
          )
          resumed.close()
        } finally {
          await second.stop()
        }
      })
    }

    // Last: the workspace keeps the added connection (removing a connection with rows is refused).
    it('a stream without filters includes a connection added while it is open, from its first row', async () => {
      const client = await connect({ token: viewer })
      const start = await latestId()
      const config = sensorConfig()
      await applyAsAdmin(server, {
        ...config,
        connections: [
          ...(config['connections'] as object[]),
          {
            lookup: 'valves',
            kind: 'push',
            table: 'Valves',
            columns: [
              { name: 'timestamp', type: 'datetime' },
              { name: 'valve', type: 'string' },
              { name: 'open', type: 'bool' },
            ],
          },
        ],
      })
      await pushRows(server, 'valves', [{ timestamp: '2026-01-01T00:00:00Z', valve: 'v1', open: true }])
      const [event] = await client.waitFor(1)
      assert.deepEqual(
        [event!.id, event!.connection, event!.surfaces, event!.data],
        [start + 1, 'valves', [], { timestamp: '2026-01-01T00:00:00Z', valve: 'v1', open: true }],
      )
      client.close()
    })
  })
}
