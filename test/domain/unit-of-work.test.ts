/**
 * The commit protocol cannot be forgotten (issue 19 item 4): a decision recorded inside
 * `stores.transaction(...)` without its `tx` joins that transaction. Before, on SQLite the call
 * waited for the group commit, which waited for the writer the transaction held: it never returned.
 * On both backends the record now commits with the transaction and disappears with its rollback.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { scopeContainer } from '../../src/domain/ledger/ledger-service.js'
import { BACKENDS } from '../support/backends.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

for (const backend of BACKENDS) {
  describe(`${backend}: a decision recorded inside a transaction joins it`, { timeout: 60_000 }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(backend)
    })
    after(() => server?.stop())

    const decision = (scopeKey: string, entityId: string) => ({
      workspaceId: server.workspace.id,
      scopeKey,
      entityType: 'test',
      entityId,
      actionType: 'decided',
      actor: { id: server.accounts.admin.id, name: server.accounts.admin.name, via: 'cli' as const },
      details: {},
    })
    const entityIds = (scopeKey: string) =>
      server.stores.ledger.readSnapshot(async (snap) => {
        const ids: string[] = []
        for await (const r of snap.records(scopeContainer(server.workspace.id, scopeKey))) ids.push(JSON.parse(r.canonical).entityId)
        return ids
      })

    it('commits with the transaction when tx is not passed', async () => {
      await server.stores.transaction(async () => {
        await server.services.activity.recordDecision(decision('uow-commit', 'in-tx'))
      })
      assert.deepEqual(await entityIds('uow-commit'), ['in-tx'])
    })

    it('is rolled back with the transaction', async () => {
      await assert.rejects(
        server.stores.transaction(async () => {
          await server.services.activity.recordDecision(decision('uow-rollback', 'rolled-back'))
          throw new Error('the change fails after its record')
        }),
        /the change fails after its record/,
      )
      assert.deepEqual(await entityIds('uow-rollback'), [])
    })

    it('a timer started inside a transaction records on its own after the commit', async () => {
      let later: Promise<void> | undefined
      await server.stores.transaction(async () => {
        later = new Promise<void>((resolve, reject) =>
          setTimeout(() => server.services.activity.recordDecision(decision('uow-later', 'after-commit')).then(resolve, reject), 50),
        )
      })
      await later
      assert.deepEqual(await entityIds('uow-later'), ['after-commit'])
    })
  })
}
