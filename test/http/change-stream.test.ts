/**
 * Spec 4.3, 6 and issue 8, item 1: `GET /oi-api/eac-changes/stream` with a real EventSource client:
 * one message per committed change, in order, never for a rolled-back one; resume with
 * Last-Event-ID (query, header, and the client's own reconnection after a dropped connection)
 * without loss or duplicates; heartbeat; the stream ends on revocation or when switched off; and on
 * PostgreSQL a change committed through one process reaches the clients of another.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { apiServicesOf } from '../../src/domain/services.js'
import { buildApp } from '../../src/http/app.js'
import { changeStreamRoutes } from '../../src/http/routes/change-stream.js'
import { BACKENDS } from '../support/backends.js'
import { type ChangeListener, listenChanges } from '../support/change-listener.js'
import { applyAsAdmin, pushRows, sensorConfig } from '../support/fixtures.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

for (const backend of BACKENDS) {
  describe(`${backend}: change stream (spec 4.3, 6)`, () => {
    let server: TestServer
    let viewer: string
    const listeners: ChangeListener[] = []
    const listen = (token: string, options?: Parameters<typeof listenChanges>[2], baseUrl = server.baseUrl): ChangeListener => {
      const listener = listenChanges(baseUrl, token, options)
      listeners.push(listener)
      return listener
    }
    const latest = () => server.stores.changes.latestSeq(server.workspace.id)
    const adminActor = () => ({ id: server.accounts.admin.id, name: server.accounts.admin.name })
    /** A committed change that is not a configuration commit (token creation writes one). */
    const makeChange = () => server.token('viewer')

    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      viewer = await server.token('viewer')
    })
    after(async () => {
      for (const listener of listeners) listener.close()
      server.runtime.app.server.closeAllConnections()
      await server.stop()
    })

    it('401 without a token, 403 without streams:changes, 400 for a malformed or unknown Last-Event-ID', async () => {
      const anonymous = await server.api('GET', '/oi-api/eac-changes/stream')
      assert.equal(anonymous.status, 401)
      assert.equal(anonymous.headers.get('www-authenticate'), 'Bearer realm="oi-api"')
      const noRight = await server.api('GET', '/oi-api/eac-changes/stream', {
        token: await server.token('viewer', { rights: ['warm-queries:read'] }),
      })
      assert.equal(noRight.status, 403)
      assert.match(errorMessage(noRight), /lacks the right streams:changes/)
      const badHeader = await server.api('GET', '/oi-api/eac-changes/stream', { token: viewer, headers: { 'last-event-id': 'abc' } })
      assert.equal(badHeader.status, 400)
      assert.match(errorMessage(badHeader), /Last-Event-ID must be the id of a change event/)
      const beyond = await server.api('GET', `/oi-api/eac-changes/stream?lastEventId=${(await latest()) + 5}`, { token: viewer })
      assert.equal(beyond.status, 400)
      assert.match(errorMessage(beyond), /is beyond the latest change of this workspace/)
    })

    it('answers an event stream with retry advice and headers that stop proxies from buffering', async () => {
      const controller = new AbortController()
      const response = await fetch(`${server.baseUrl}/oi-api/eac-changes/stream`, {
        headers: { authorization: `Bearer ${viewer}` },
        signal: controller.signal,
      })
      try {
        assert.equal(response.status, 200)
        assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8')
        assert.equal(response.headers.get('x-accel-buffering'), 'no')
        assert.equal(response.headers.get('cache-control'), 'no-store')
        assert.ok(response.headers.get('x-request-id'))
        const reader = response.body!.getReader()
        const first = new TextDecoder().decode((await reader.read()).value)
        assert.match(first, /^retry: 3000\n: connected; changes after \d+ follow\n\n/)
      } finally {
        controller.abort()
      }
    })

    it('delivers every committed change once, in commit order, with the documented fields; nothing from other workspaces', async () => {
      const analystCaller = await server.services.access.authenticate(`Bearer ${await server.token('analyst')}`)
      const start = await latest()
      const listener = listen(viewer)
      await listener.waitForOpens(1)
      const other = await server.services.admin.createWorkspace(`other-${backend}`)
      await server.services.admin.addAccount({
        name: `someone@other-${backend}`,
        role: 'viewer',
        workspaceId: other.id,
        password: 'a-long-password-123',
      })
      const revoked = await server.services.access.createToken({
        workspaceId: server.workspace.id,
        accountId: server.accounts.admin.id,
        name: 'short-lived',
        expires: '1h',
        createdBy: adminActor(),
      })
      await server.services.access.revokeToken(server.workspace.id, revoked.record.id, { ...adminActor(), canRevokeOthers: true })
      const proposal = await server.services.proposals.create(
        analystCaller,
        {
          rationale: 'peak',
          changes: [{ entity: 'warmQuery', action: 'create', lookup: 'peak', query: 'Sensors | summarize max(value)' }],
        },
        'mcp',
      )
      const { commit } = await server.services.proposalReview.accept(
        { accountId: server.accounts.approver.id, accountName: server.accounts.approver.name, role: 'approver' },
        server.workspace.id,
        proposal.id,
      )
      await applyAsAdmin(server, sensorConfig())
      const events = await listener.waitFor(6)
      assert.deepEqual(
        events.map((e) => e.lastEventId),
        [1, 2, 3, 4, 5, 6].map((i) => String(start + i)),
      )
      assert.deepEqual(
        events.map((e) => `${e.data['kind']} ${e.data['action']}`),
        ['token created', 'token revoked', 'proposal created', 'config committed', 'proposal accepted', 'config committed'],
      )
      assert.deepEqual(events[3]!.data, {
        id: start + 4,
        kind: 'config',
        entityType: 'config',
        entityId: commit!.id,
        action: 'committed',
        actor: { id: server.accounts.approver.id, name: server.accounts.approver.name },
        at: new Date(commit!.createdAt).toISOString(),
        commitId: commit!.id,
        summary: '1 change: + warmQuery peak',
      })
      assert.deepEqual(Object.keys(events[1]!.data), [
        'id',
        'kind',
        'entityType',
        'entityId',
        'action',
        'actor',
        'at',
        'commitId',
        'summary',
      ])
      assert.equal(events[1]!.data['entityId'], revoked.record.id)
      assert.equal(events[1]!.data['commitId'], null)
      assert.equal(events[4]!.data['entityId'], proposal.id)
      assert.ok(!JSON.stringify(events).includes(revoked.token), 'a token never appears in the stream')
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(listener.events.length, 6, 'no duplicates and nothing from the other workspace')
      listener.close()
    })

    it('sends nothing for a change that rolled back; the next committed change follows without a gap', async () => {
      const start = await latest()
      const listener = listen(viewer)
      await listener.waitForOpens(1)
      await assert.rejects(
        server.stores.transaction(async (tx) => {
          await tx.changes.append({
            workspaceId: server.workspace.id,
            kind: 'config',
            entityType: 'config',
            entityId: 'rolled-back',
            action: 'committed',
            actorId: 'x',
            actorName: 'x',
            at: Date.now(),
            commitId: 'rolled-back',
            summary: 'never committed',
          })
          throw new Error('fails after writing its change row')
        }),
        /fails after writing/,
      )
      const refused = sensorConfig()
      ;(refused['connections'] as Record<string, unknown>[])[1]!['columns'] = [{ name: 'timestamp', type: 'datetime' }]
      await pushRows(server, 'meters', [{ timestamp: '2026-01-01T00:00:00Z', kwh: 1.5 }])
      await assert.rejects(applyAsAdmin(server, refused), /refusing to remove column kwh/)
      await makeChange()
      const [event] = await listener.waitFor(1)
      assert.equal(event!.lastEventId, String(start + 1))
      assert.equal(event!.data['kind'], 'token')
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(listener.events.length, 1)
      listener.close()
    })

    it('an announcement repeated, or ahead of what is committed, neither duplicates nor invents a message', async () => {
      const start = await latest()
      const listener = listen(viewer)
      await listener.waitForOpens(1)
      await makeChange()
      const [first] = await listener.waitFor(1)
      const committed = (await server.stores.changes.since(server.workspace.id, start, 10))[0]!
      server.services.bus.publish({ kind: 'change', change: committed })
      server.services.bus.publish({ kind: 'change', change: { ...committed, seq: committed.seq + 3, summary: 'not committed' } })
      await makeChange()
      const events = await listener.waitFor(2)
      assert.deepEqual(
        events.map((e) => e.lastEventId),
        [first!.lastEventId, String(start + 2)],
      )
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(listener.events.length, 2)
      listener.close()
    })

    it('replays every change after Last-Event-ID (query parameter or header) in order, then goes live', async () => {
      const start = await latest()
      await makeChange()
      await makeChange()
      await makeChange()
      for (const options of [{ lastEventIdQuery: String(start) }, { lastEventIdHeader: String(start) }]) {
        const listener = listen(viewer, options)
        const replayed = await listener.waitFor(3)
        assert.deepEqual(
          replayed.map((e) => e.lastEventId),
          [start + 1, start + 2, start + 3].map(String),
          JSON.stringify(options),
        )
        listener.close()
      }
      const live = listen(viewer, { lastEventIdQuery: String(start + 1) })
      await live.waitFor(2)
      await makeChange()
      const all = await live.waitFor(3)
      assert.deepEqual(
        all.map((e) => e.lastEventId),
        [start + 2, start + 3, start + 4].map(String),
      )
      live.close()
    })

    describe('with a short heartbeat and retry (same services, its own listener)', () => {
      let app: FastifyInstance
      let baseUrl: string
      before(async () => {
        app = await buildApp({
          services: apiServicesOf(server.services),
          routes: changeStreamRoutes(apiServicesOf(server.services), { heartbeatMs: 100, retryMs: 200 }),
          version: 'test',
          publicUrl: 'http://127.0.0.1',
          logger: false,
        })
        baseUrl = await app.listen({ port: 0, host: '127.0.0.1' })
      })
      after(async () => {
        // fetch may leave a spare connection that never carries a request; Node's server.close()
        // does not count it as idle and would wait for its header timeout.
        app.server.closeAllConnections()
        await app.close()
      })

      it('the stream ends when its token is revoked, and the client is then refused with 401', async () => {
        const created = await server.services.access.createToken({
          workspaceId: server.workspace.id,
          accountId: server.accounts.viewer.id,
          name: 'stream',
          expires: '1h',
          createdBy: { id: server.accounts.viewer.id, name: server.accounts.viewer.name },
        })
        const listener = listen(created.token, undefined, baseUrl)
        await listener.waitForOpens(1)
        await server.services.access.revokeToken(server.workspace.id, created.record.id, {
          id: server.accounts.viewer.id,
          name: server.accounts.viewer.name,
          canRevokeOthers: false,
        })
        const [event] = await listener.waitFor(1)
        assert.equal(event!.data['action'], 'revoked')
        await listener.waitForClosed()
        assert.ok(listener.errorCodes.includes(401), JSON.stringify(listener.errorCodes))
      })

      it('503 when the change stream is switched off; an open stream ends with the switch', async () => {
        const listener = listen(viewer, undefined, baseUrl)
        await listener.waitForOpens(1)
        await applyAsAdmin(server, sensorConfig({ settings: { capabilities: { changeStream: false } } }))
        try {
          const [event] = await listener.waitFor(1)
          assert.equal(event!.data['kind'], 'config')
          await listener.waitForClosed()
          assert.ok(listener.errorCodes.includes(503), JSON.stringify(listener.errorCodes))
          const off = await server.api('GET', '/oi-api/eac-changes/stream', { token: viewer })
          assert.equal(off.status, 503)
          assert.match(errorMessage(off), /switched off/)
        } finally {
          await applyAsAdmin(server, sensorConfig())
        }
      })

      it('sends a heartbeat comment at the interval', async () => {
        const controller = new AbortController()
        const response = await fetch(`${baseUrl}/oi-api/eac-changes/stream`, {
          headers: { authorization: `Bearer ${viewer}` },
          signal: controller.signal,
        })
        const reader = response.body!.getReader()
        let text = ''
        const started = Date.now()
        while (!text.includes(': heartbeat\n\n') && Date.now() - started < 5000)
          text += new TextDecoder().decode((await reader.read()).value)
        controller.abort()
        assert.match(text, /^retry: 200\n/)
        assert.ok(text.includes(': heartbeat\n\n'))
      })

      it('a client whose connection dropped reconnects with Last-Event-ID and loses nothing, with no duplicates', async () => {
        const start = await latest()
        const listener = listen(viewer, undefined, baseUrl)
        await listener.waitForOpens(1)
        await makeChange()
        await listener.waitFor(1)
        app.server.closeAllConnections()
        await makeChange()
        await makeChange()
        await listener.waitForOpens(2)
        await makeChange()
        const events = await listener.waitFor(4)
        assert.deepEqual(
          events.map((e) => e.lastEventId),
          [1, 2, 3, 4].map((i) => String(start + i)),
        )
        await new Promise((resolve) => setTimeout(resolve, 100))
        assert.equal(listener.events.length, 4)
        listener.close()
      })

      it('ends open streams when the server closes, so shutdown is not held up', async () => {
        const other = await buildApp({
          services: apiServicesOf(server.services),
          routes: changeStreamRoutes(apiServicesOf(server.services)),
          version: 'test',
          publicUrl: 'http://127.0.0.1',
          logger: false,
        })
        const url = await other.listen({ port: 0, host: '127.0.0.1' })
        const listener = listen(viewer, undefined, url)
        await listener.waitForOpens(1)
        const started = Date.now()
        await other.close()
        assert.ok(Date.now() - started < 3000, `closing took ${Date.now() - started} ms`)
        listener.close()
      })
    })

    if (backend === 'postgres') {
      it('a change committed through one process reaches the clients of another, and resumes there', async () => {
        const second = await startTestServer('postgres', { databaseUrl: server.config.databaseUrl! })
        try {
          const start = await latest()
          const listener = listen(viewer, undefined, second.baseUrl)
          await listener.waitForOpens(1)
          await makeChange()
          await applyAsAdmin(
            server,
            sensorConfig({
              surfaces: [
                { lookup: 'hall', connections: ['sensors', 'meters'] },
                { lookup: 'yard', connections: ['meters'] },
              ],
            }),
          )
          const events = await listener.waitFor(2)
          assert.deepEqual(
            events.map((e) => `${e.lastEventId} ${e.data['kind']}`),
            [`${start + 1} token`, `${start + 2} config`],
          )
          listener.close()
          await makeChange()
          const resumed = listen(viewer, { lastEventIdQuery: String(start + 1) }, second.baseUrl)
          assert.deepEqual(
            (await resumed.waitFor(2)).map((e) => e.lastEventId),
            [start + 2, start + 3].map(String),
          )
          resumed.close()
        } finally {
          await applyAsAdmin(server, sensorConfig())
          second.runtime.app.server.closeAllConnections()
          await second.stop()
        }
      })
    }
  })
}
