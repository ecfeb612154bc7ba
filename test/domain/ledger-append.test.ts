/**
 * The ledger's append command owns the append rules (issue 19 items 1 and 4), whatever the edge:
 * it refuses caller-sent server fields (spec 2.6) before queueing anything, takes the actor from
 * the caller, and queues the call's pending record right after the event, in the same turn, so
 * both share one group commit. Real stores on both backends; the pending call record is the edge's.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Caller } from '../../src/domain/access/caller.js'
import { InvalidInputError } from '../../src/domain/errors.js'
import type { PendingCallRecord } from '../../src/domain/ledger/index.js'
import { BACKENDS } from '../support/backends.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

for (const backend of BACKENDS) {
  describe(`${backend}: the ledger's append command`, { timeout: 60_000 }, () => {
    let server: TestServer
    let caller: Caller
    before(async () => {
      server = await startTestServer(backend)
      const admin = server.accounts.admin
      caller = {
        accountId: admin.id,
        accountName: admin.name,
        workspaceId: server.workspace.id,
        role: 'admin',
        tokenId: undefined,
        rights: new Set(['provenance:append']),
        scopes: {},
        expiresAt: undefined,
      }
    })
    after(() => server?.stop())

    /** A pending call record that notes when it was queued, relative to the event. */
    function pendingCall(events: string[]): PendingCallRecord {
      return { queue: () => events.push('call queued') }
    }

    it('refuses a server-set or unknown field synchronously, before the event or the call record is queued', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ userId: 'acc_x' }, /^"userId" cannot be sent: userId is set by the server from the token/],
        [{ Actor: 'mallory' }, /^"Actor" cannot be sent: the actor is set by the server/],
        [{ timestamp: '2026-01-01T00:00:00Z' }, /^"timestamp" cannot be sent: the timestamp is set by the server's clock/],
        [{ RecordID: '000000000009' }, /^"RecordID" cannot be sent: the RecordID is assigned by the server/],
        [{ digest: 'ab', colour: 'red' }, /^"digest" cannot be sent: digests are computed by the server/],
        [{ colour: 'red' }, /^unknown field "colour"; an event has ScopeKey, entityType, entityId, actionType, details$/],
      ]
      for (const [extra, message] of cases) {
        const events: string[] = []
        assert.throws(
          () => server.services.ledgerCommands.append(caller, { scopeKey: 'append-rules', actionType: 'x', ...extra }, pendingCall(events)),
          (error: unknown) => error instanceof InvalidInputError && message.test(error.message),
        )
        assert.deepEqual(events, [], `nothing is queued for ${JSON.stringify(extra)}`)
      }
      const { total } = await server.services.ledgerCommands.query(caller, {
        scopeKey: 'append-rules',
        filter: {},
        page: { limit: 10, offset: 0, order: 'desc' },
      })
      assert.equal(total, 0)
    })

    it('queues the call record in the same turn as the event; the actor is the caller', async () => {
      const events: string[] = []
      const appended = server.services.ledgerCommands.append(
        caller,
        { scopeKey: 'append-rules', actionType: 'release' },
        pendingCall(events),
      )
      assert.deepEqual(events, ['call queued'], 'queued before append returns, so it shares the group commit')
      const record = await appended
      assert.equal(record.record.userId, server.accounts.admin.id)
      assert.equal(record.actionType, 'release')
    })
  })
}
