/**
 * Issue 14 item 10: the per-log append (spec 4.7) speaks the per-log names. `action` (spec 2.6: "the
 * older per-log shape uses `actor` and `action`") is accepted as well as `actionType`; both sent and
 * different is a 400 in the envelope, and nothing is appended.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const APPEND = '/oi-api/audit-logs/line-10/events'

for (const backend of BACKENDS) {
  describe(`${backend}: per-log append accepts action (issue 14 item 10)`, () => {
    let server: TestServer
    let editor: string
    before(async () => {
      server = await startTestServer(backend)
      editor = await server.token('editor')
    })
    after(() => server.stop())

    const count = async () =>
      (await server.api('GET', '/oi-api/provenance/events/query?scopeKey=line-10&limit=1000', { token: editor })).body.totalCount

    it('stores action as the actionType, shown as action in the per-log shape and actionType in the current one', async () => {
      const r = await server.api('POST', APPEND, { token: editor, body: { entityType: 'batch', entityId: 'B-1', action: 'release' } })
      assert.equal(r.status, 200, r.text)
      assert.equal(r.body.action, 'release')
      const current = await server.api('GET', '/oi-api/provenance/events/query?scopeKey=line-10&actionType=release', { token: editor })
      assert.equal(current.body.totalCount, 1)
      const legacy = await server.api('GET', '/oi-api/audit-logs/line-10/events/query?action=release', { token: editor })
      assert.equal(legacy.body.results[0].action, 'release')
    })

    it('both names with the same value are one action; actionType alone still works', async () => {
      const same = await server.api('POST', APPEND, { token: editor, body: { action: 'hold', actionType: 'hold' } })
      assert.equal(same.status, 200, same.text)
      assert.equal(same.body.action, 'hold')
      const current = await server.api('POST', APPEND, { token: editor, body: { actionType: 'ship' } })
      assert.equal(current.body.action, 'ship')
    })

    it('both names with different values are a 400 naming both, and nothing is appended', async () => {
      const before = await count()
      const r = await server.api('POST', APPEND, { token: editor, body: { action: 'release', actionType: 'recall' } })
      assert.equal(r.status, 400, r.text)
      assert.match(errorMessage(r), /action "release" and actionType "recall" differ/)
      const wrongType = await server.api('POST', APPEND, { token: editor, body: { action: 7 } })
      assert.equal(wrongType.status, 400)
      assert.match(errorMessage(wrongType), /action must be a string/)
      assert.equal(await count(), before)
    })

    it('the current shape does not take action (its name is actionType)', async () => {
      const r = await server.api('POST', '/oi-api/provenance/events', { token: editor, body: { ScopeKey: 'line-10', action: 'x' } })
      assert.equal(r.status, 400)
      assert.match(errorMessage(r), /unknown field "action"/)
    })
  })
}
