/**
 * Issue 14 item 7: revocation closes live streams everywhere. Every open stream of a token — the
 * WebSocket live stream and the SSE change stream — closes when the token is revoked, or its
 * account disabled, by ANOTHER process: the real `provenant` command, spawned, writing to the same
 * SQLite file or PostgreSQL database. Nothing is announced to the server's process on SQLite, so
 * the server must notice on its own. Waits are generous bounds, never latency assertions.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { listenChanges } from '../support/change-listener.js'
import { runCli } from '../support/cli.js'
import { applyAsAdmin, sensorConfig } from '../support/fixtures.js'
import { connectLive, type LiveClient } from '../support/live-client.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

/** A bound for "closes", generous for a loaded shared machine; the promise is 2 s. */
const CLOSES_WITHIN_MS = 20_000

function withinBound<T>(promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not happen within ${CLOSES_WITHIN_MS} ms`)), CLOSES_WITHIN_MS).unref(),
    ),
  ])
}

for (const backend of BACKENDS) {
  describe(`${backend}: revocation by another process closes open streams (issue 14 item 7)`, () => {
    let server: TestServer
    const live: LiveClient[] = []
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
    })
    after(async () => {
      for (const client of live) client.close()
      server.runtime.app.server.closeAllConnections()
      await server.stop()
    })

    const cli = (...args: string[]) =>
      runCli([
        ...args,
        '--data',
        server.config.dataDir,
        ...(server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : []),
      ])

    async function streamsOf(token: string) {
      const ws = await connectLive(server.baseUrl, { token })
      live.push(ws)
      const sse = listenChanges(server.baseUrl, token)
      await sse.waitForOpens(1)
      return { ws, sse }
    }

    it('`provenant token revoke` in another process closes the WebSocket (1008) and the SSE stream; other tokens stay open', async () => {
      const created = await server.services.access.createToken({
        workspaceId: server.workspace.id,
        accountId: server.accounts.viewer.id,
        name: 'revoked by the CLI',
        expires: '1h',
        createdBy: { id: server.accounts.viewer.id, name: server.accounts.viewer.name },
      })
      const doomed = await streamsOf(created.token)
      const bystander = await streamsOf(await server.token('analyst'))
      const revoked = await cli('token', 'revoke', created.record.id)
      assert.equal(revoked.code, 0, revoked.stderr)
      assert.deepEqual(await withinBound(doomed.ws.closed, 'the WebSocket closing'), { code: 1008, reason: 'token revoked' })
      await withinBound(doomed.sse.waitForClosed(CLOSES_WITHIN_MS), 'the SSE stream ending')
      assert.ok(doomed.sse.errorCodes.includes(401), `the reconnection is refused: ${doomed.sse.errorCodes}`)
      assert.equal(bystander.ws.ws.readyState, bystander.ws.ws.OPEN, "another token's stream stays open")
      assert.equal(bystander.sse.source.readyState, bystander.sse.source.OPEN)
      bystander.ws.close()
      bystander.sse.close()
    })

    it('`provenant account disable` in another process closes the streams of every token of that account', async () => {
      const name = `streamer-${backend}@acme`
      const account = await server.services.admin.addAccount({ name, role: 'viewer', workspaceId: server.workspace.id })
      const first = await streamsOf(await server.token(account))
      const second = await streamsOf(await server.token(account))
      const disabled = await cli('account', 'disable', name)
      assert.equal(disabled.code, 0, disabled.stderr)
      for (const streams of [first, second]) {
        const closed = await withinBound(streams.ws.closed, 'the WebSocket closing')
        assert.equal(closed.code, 1008)
        assert.match(closed.reason, /disabled/)
        await withinBound(streams.sse.waitForClosed(CLOSES_WITHIN_MS), 'the SSE stream ending')
      }
    })
  })
}
