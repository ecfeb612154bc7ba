/**
 * The event bus across processes (design §2): on PostgreSQL, rows ingested and changes committed
 * through one process reach subscribers of another; in one process, after commit only.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { BusEvent } from '../../src/domain/streams/event-bus.js'
import { BACKENDS, createTestDatabase } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { startTestServer } from '../support/test-server.js'

function waitFor(events: BusEvent[], predicate: (e: BusEvent) => boolean, ms = 5000): Promise<BusEvent> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const poll = () => {
      const found = events.find(predicate)
      if (found) return resolve(found)
      if (Date.now() - started > ms)
        return reject(new Error(`no matching event within ${ms} ms; saw ${JSON.stringify(events.map((e) => e.kind))}`))
      setTimeout(poll, 10)
    }
    poll()
  })
}

for (const backend of BACKENDS) {
  describe(`${backend}: event bus`, () => {
    it('announces committed changes after commit and never a rolled-back one', async () => {
      const server = await startTestServer(backend)
      try {
        const events: BusEvent[] = []
        server.services.bus.subscribe((e) => events.push(e))
        await applyAsAdmin(server, sensorConfig())
        const change = await waitFor(events, (e) => e.kind === 'change' && e.change.kind === 'config')
        assert.equal(change.kind === 'change' && change.change.action, 'committed')
        const before = events.length
        await assert.rejects(
          server.stores.transaction(async (tx) => {
            await tx.changes.append({
              workspaceId: server.workspace.id,
              kind: 'config',
              entityType: 'x',
              entityId: 'x',
              action: 'rolled-back',
              actorId: 'a',
              actorName: 'a',
              at: 1,
              commitId: undefined,
              summary: 'never',
            })
            throw new Error('roll back')
          }),
          /roll back/,
        )
        await new Promise((resolve) => setTimeout(resolve, 100))
        assert.equal(events.length, before)
        assert.equal(await server.stores.changes.latestSeq(server.workspace.id), (change as { change: { seq: number } }).change.seq)
      } finally {
        await server.stop()
      }
    })
  })
}

if (BACKENDS.includes('postgres')) {
  describe('postgres: event bus across two processes (LISTEN/NOTIFY)', () => {
    it('rows ingested and changes committed in A reach subscribers in B', async () => {
      const database = await createTestDatabase()
      const a = await startTestServer('postgres', { databaseUrl: database.url })
      const b = await startTestServer('postgres', { databaseUrl: database.url })
      try {
        const seenByB: BusEvent[] = []
        b.services.bus.subscribe((e) => seenByB.push(e))
        await applyAsAdmin(a, sensorConfig())
        await pushRows(a, 'sensors', sensorRows(3))
        const rows = await waitFor(seenByB, (e) => e.kind === 'rows')
        assert.equal(rows.kind === 'rows' && rows.lastRowId - rows.firstRowId, 2)
        assert.equal(rows.kind === 'rows' && rows.rows, undefined, 'rows are read from storage by id in other processes')
        await waitFor(seenByB, (e) => e.kind === 'change' && e.change.kind === 'config')
        const seenByA: BusEvent[] = []
        a.services.bus.subscribe((e) => seenByA.push(e))
        await pushRows(a, 'sensors', sensorRows(1))
        await new Promise((resolve) => setTimeout(resolve, 200))
        assert.equal(seenByA.filter((e) => e.kind === 'rows').length, 1, 'a process hears its own event once, not its echo')
      } finally {
        await a.stop()
        await b.stop()
        await database.drop()
      }
    })
  })
}
