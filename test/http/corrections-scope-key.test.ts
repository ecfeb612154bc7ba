/**
 * Issue 18, item 5 (spec 4.6): approve and reject take `scopeKey` on the query string, and a caller
 * who leaves it off (or sends it in the body, as the create call does) is told exactly that.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { applyAsAdmin, sensorConfig } from '../support/fixtures.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const AMENDMENTS = '/oi-api/provenance/amendments'
const ON_THE_QUERY_STRING = /scopeKey is required on the query string \(…\?scopeKey=…\)/

describe('corrections: scopeKey goes on the query string (spec 4.6)', () => {
  let server: TestServer
  let approver: string
  let id: string
  before(async () => {
    server = await startTestServer('sqlite')
    await applyAsAdmin(server, sensorConfig({ settings: { amendments: { approvalRequired: true, twoPersonApproval: true } } }))
    approver = await server.token('approver')
    const created = await server.api('POST', AMENDMENTS, {
      token: await server.token('editor'),
      body: {
        ScopeKey: 'batch-7',
        entityType: 'lab-result',
        entityId: 'LR-1',
        reasonCategory: 'data-entry-error',
        reason: 'typo in the value',
        before: { ph: 7.9 },
        after: { ph: 7.1 },
      },
    })
    assert.equal(created.status, 200, created.text)
    id = created.body.id
  })
  after(() => server.stop())

  for (const action of ['approve', 'reject'] as const) {
    const body = action === 'reject' ? { reason: 'not a typo' } : { comment: 'checked' }

    it(`${action} without scopeKey: a 400 that says where it goes`, async () => {
      const response = await server.api('POST', `${AMENDMENTS}/${id}/${action}`, { token: approver, body })
      assert.equal(response.status, 400, response.text)
      assert.match(errorMessage(response), ON_THE_QUERY_STRING)
    })

    it(`${action} with ScopeKey in the body instead: the same 400, naming the query string`, async () => {
      const response = await server.api('POST', `${AMENDMENTS}/${id}/${action}`, {
        token: approver,
        body: { ...body, ScopeKey: 'batch-7' },
      })
      assert.equal(response.status, 400, response.text)
      assert.match(errorMessage(response), ON_THE_QUERY_STRING)
    })

    it(`${action} with an empty scopeKey: the same 400`, async () => {
      const response = await server.api('POST', `${AMENDMENTS}/${id}/${action}?scopeKey=`, { token: approver, body })
      assert.equal(response.status, 400, response.text)
      assert.match(errorMessage(response), ON_THE_QUERY_STRING)
    })
  }

  it('the reads say the same (list, chain, one correction)', async () => {
    const reader = await server.token('analyst')
    for (const path of [AMENDMENTS, `${AMENDMENTS}/chain?entityId=LR-1`, `${AMENDMENTS}/${id}`]) {
      const response = await server.api('GET', path, { token: reader })
      assert.equal(response.status, 400, path)
      assert.match(errorMessage(response), ON_THE_QUERY_STRING)
    }
  })

  it('with scopeKey on the query string the approval goes through', async () => {
    const response = await server.api('POST', `${AMENDMENTS}/${id}/approve?scopeKey=batch-7`, {
      token: approver,
      body: { comment: 'checked' },
    })
    assert.equal(response.status, 200, response.text)
    assert.equal(response.body.status, 'applied')
  })
})
