/**
 * Spec 2.8–2.10, 3, 4.6, 4.7 (corrections): the state table, two-person approval, chains in both
 * shapes with timestamps that disagree with link order, corrections that change what queries
 * return while the original stays in the chain, concurrency, filters and bad parameters.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { manualClock } from '../../src/shared/clock.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const AMENDMENTS = '/oi-api/provenance/amendments'

function settings(amendments: Record<string, unknown>) {
  return sensorConfig({ settings: { amendments } })
}

function correction(overrides: Record<string, unknown> = {}) {
  return {
    ScopeKey: 'batch-7',
    entityType: 'lab-result',
    entityId: 'LR-1',
    reasonCategory: 'data-entry-error',
    reason: 'typo in the value',
    before: { ph: 7.9 },
    after: { ph: 7.1 },
    ...overrides,
  }
}

for (const backend of BACKENDS) {
  describe(`${backend}: corrections (spec 4.6, 3)`, () => {
    let server: TestServer
    let editor: string
    let approver: string
    let approverAsAuthor: string
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, settings({ approvalRequired: true, twoPersonApproval: true }))
      editor = await server.token('editor')
      approver = await server.token('approver')
      approverAsAuthor = approver
    })
    after(() => server.stop())

    const create = (body: Record<string, unknown>, token = editor) => server.api('POST', AMENDMENTS, { token, body })
    const approve = (id: string, token = approver, scopeKey = 'batch-7') =>
      server.api('POST', `${AMENDMENTS}/${id}/approve?scopeKey=${scopeKey}`, { token })
    const reject = (id: string, body: unknown, token = approver, scopeKey = 'batch-7') =>
      server.api('POST', `${AMENDMENTS}/${id}/reject?scopeKey=${scopeKey}`, { token, body })

    it('creates a pending correction when approval is required; server sets author, status and dates', async () => {
      const sent = Date.now()
      const response = await create(correction())
      const answered = Date.now()
      assert.equal(response.status, 200, response.text)
      const c = response.body
      assert.match(c.id, /^amd_/)
      assert.equal(c.status, 'pending')
      assert.equal(c.approvalRequired, true)
      assert.equal(c.amendedBy, server.accounts.editor.name)
      assert.equal(c.ScopeKey, 'batch-7')
      assert.deepEqual([c.before, c.after], [{ ph: 7.9 }, { ph: 7.1 }])
      assert.equal(c.chainIndex, 1)
      // set by the server while the request was in flight (never a bound on how long that took)
      const created = Date.parse(c.createdAt)
      assert.ok(created >= sent - 1 && created <= answered + 1, `createdAt ${c.createdAt} is not within the request`)
    })

    it('approve by a second person applies it; approving again is a 400; approving a rejected one is a 400', async () => {
      const id = (await create(correction({ entityId: 'LR-2' }))).body.id
      const approved = await approve(id)
      assert.equal(approved.status, 200, approved.text)
      assert.equal(approved.body.status, 'applied')
      assert.equal(approved.body.approvedBy, server.accounts.approver.name)
      assert.ok(approved.body.decidedAt)
      const again = await approve(id)
      assert.equal(again.status, 400)
      assert.match(errorMessage(again), /is applied, not pending/)
      const rejectedId = (await create(correction({ entityId: 'LR-3' }))).body.id
      assert.equal((await reject(rejectedId, { reason: 'not a typo' })).status, 200)
      assert.match(errorMessage(await approve(rejectedId)), /is rejected, not pending/)
    })

    it('reject needs a reason and keeps it', async () => {
      const id = (await create(correction({ entityId: 'LR-4' }))).body.id
      for (const body of [undefined, {}, { reason: '   ' }]) {
        const response = await reject(id, body)
        assert.equal(response.status, 400, JSON.stringify(body))
        assert.match(errorMessage(response), /reason is required/)
      }
      const rejected = await reject(id, { reason: 'the original value was right' })
      assert.equal(rejected.body.status, 'rejected')
      assert.equal(rejected.body.rejectedBy, server.accounts.approver.name)
      assert.equal(rejected.body.rejectionReason, 'the original value was right')
    })

    it('two-person approval refuses self-approval with 403; with it off, the author may approve', async () => {
      const own = (await create(correction({ entityId: 'LR-5' }), approverAsAuthor)).body.id
      const refused = await approve(own, approverAsAuthor)
      assert.equal(refused.status, 403)
      assert.match(errorMessage(refused), /two-person approval is on/)
      await applyAsAdmin(server, settings({ approvalRequired: true, twoPersonApproval: false }))
      try {
        assert.equal((await approve(own, approverAsAuthor)).body.status, 'applied')
      } finally {
        await applyAsAdmin(server, settings({ approvalRequired: true, twoPersonApproval: true }))
      }
    })

    it('applies at once when approval is not required, or not required for this category', async () => {
      await applyAsAdmin(server, settings({ approvalRequired: false, twoPersonApproval: true }))
      assert.equal((await create(correction({ entityId: 'LR-6' }))).body.status, 'applied')
      await applyAsAdmin(
        server,
        settings({ approvalRequired: true, twoPersonApproval: true, approvalRequiredFor: { reasonCategories: ['recalculation'] } }),
      )
      assert.equal((await create(correction({ entityId: 'LR-7' }))).body.status, 'applied')
      assert.equal((await create(correction({ entityId: 'LR-7', reasonCategory: 'recalculation' }))).body.status, 'pending')
      await applyAsAdmin(server, settings({ approvalRequired: true, twoPersonApproval: true }))
    })

    it('400 for an unknown reason category (listing the valid ones), missing fields, server-set fields', async () => {
      const category = await create(correction({ reasonCategory: 'whim' }))
      assert.equal(category.status, 400)
      assert.match(
        errorMessage(category),
        /"whim" is not in this workspace's list; use one of data-entry-error, transcription-error, recalculation, delayed-entry, instrument-fault, other/,
      )
      const { ScopeKey: _s, ...noScope } = correction()
      assert.match(errorMessage(await create(noScope)), /ScopeKey is required/)
      const { before: _b, ...noBefore } = correction()
      assert.match(errorMessage(await create(noBefore)), /before is required/)
      assert.match(errorMessage(await create(correction({ reason: '' }))), /reason is required/)
      assert.match(errorMessage(await create(correction({ status: 'applied' }))), /status is set by the server/)
      assert.match(errorMessage(await create(correction({ amendedBy: 'someone' }))), /amendedBy is set by the server/)
      assert.match(errorMessage(await create(correction({ effectiveAt: 'last week' }))), /effectiveAt must be an ISO 8601 time/)
    })

    it('scopeKey is required everywhere but reason-categories; ids of another scope or workspace are 404', async () => {
      const reader = await server.token('analyst')
      for (const path of [AMENDMENTS, `${AMENDMENTS}/chain?entityId=LR-1`]) {
        const response = await server.api('GET', path, { token: reader })
        assert.equal(response.status, 400, path)
        assert.match(errorMessage(response), /scopeKey is required/)
      }
      const id = (await create(correction({ entityId: 'LR-8' }))).body.id
      assert.match(errorMessage(await server.api('POST', `${AMENDMENTS}/${id}/approve`, { token: approver })), /scopeKey is required/)
      const elsewhere = await approve(id, approver, 'batch-8')
      assert.equal(elsewhere.status, 404)
      assert.match(errorMessage(elsewhere), /no correction .* in scope "batch-8"/)
      const other = await server.services.admin.createWorkspace(`iso-${backend}`)
      const owner = await server.services.admin.addAccount({ name: `iso-owner-${backend}`, role: 'admin', workspaceId: other.id })
      const foreign = await approve(id, await server.token(owner, { workspaceId: other.id }))
      assert.equal(foreign.status, 404)
      assert.equal((await server.api('GET', '/oi-api/provenance/reason-categories', { token: reader })).status, 200)
    })

    it('403 for a role without the right, and for a token limited to other scopes', async () => {
      assert.match(errorMessage(await create(correction(), await server.token('analyst'))), /lacks the right amendments:create/)
      const id = (await create(correction({ entityId: 'LR-9' }))).body.id
      assert.match(errorMessage(await approve(id, editor)), /lacks the right amendments:approve/)
      const scoped = await server.token('editor', { scopes: { scopeKeys: ['batch-1'] } })
      const response = await create(correction(), scoped)
      assert.equal(response.status, 403)
      assert.match(errorMessage(response), /restricted to other scopes than "batch-7"/)
    })

    it('filters, limit/offset, total, and bad parameter values', async () => {
      const reader = await server.token('analyst')
      const list = (query: string) => server.api('GET', `${AMENDMENTS}?scopeKey=batch-7&${query}`, { token: reader })
      const all = await list('limit=1000')
      assert.ok(all.body.totalCount >= 9)
      assert.deepEqual(
        all.body.results.map((c: { createdAt: string }) => c.createdAt),
        [...all.body.results.map((c: { createdAt: string }) => c.createdAt)].sort().reverse(),
        'newest first',
      )
      const pending = await list('status=pending')
      assert.ok(pending.body.results.every((c: { status: string }) => c.status === 'pending'))
      assert.equal(pending.body.totalCount, pending.body.results.length)
      const byEntity = await list('entityId=LR-7')
      assert.deepEqual(byEntity.body.results.map((c: { reasonCategory: string }) => c.reasonCategory).sort(), [
        'data-entry-error',
        'recalculation',
      ])
      assert.equal((await list('reasonCategory=recalculation')).body.totalCount, 1)
      assert.equal((await list(`amendedBy=${encodeURIComponent(server.accounts.approver.name)}`)).body.totalCount, 1)
      assert.equal((await list(`amendedBy=${server.accounts.approver.id}`)).body.totalCount, 1)
      assert.equal((await list('entityType=nothing')).body.totalCount, 0)
      const page = await list('limit=2&offset=1')
      assert.deepEqual(
        page.body.results.map((c: { id: string }) => c.id),
        all.body.results.slice(1, 3).map((c: { id: string }) => c.id),
      )
      assert.equal(page.body.totalCount, all.body.totalCount)
      assert.equal((await list(`startDate=${new Date(Date.now() + 60_000).toISOString()}`)).body.totalCount, 0)
      assert.equal((await list(`endDate=${new Date(Date.now() + 60_000).toISOString()}`)).body.totalCount, all.body.totalCount)
      for (const [query, message] of [
        ['limit=0', /limit must be at least 1/],
        ['limit=1001', /limit may be at most 1000/],
        ['limit=abc', /limit/],
        ['offset=-1', /offset may not be negative/],
        ['status=done', /status/],
        ['startDate=yesterday', /startDate must be an ISO 8601 time/],
      ] as const) {
        const response = await list(query)
        assert.equal(response.status, 400, query)
        assert.match(errorMessage(response), message)
      }
    })

    it('a row correction changes what a warm query returns, and the original stays in the chain', async () => {
      await pushRows(server, 'sensors', sensorRows(3))
      const query = () =>
        server.api('POST', '/oi-api/warm-queries', {
          token: editor,
          body: { Query: 'Sensors | where sensor == "s1" | project _rowid, value' },
        })
      const [{ _rowid: rowId, value: original }] = (await query()).body.results
      const created = await create({
        ScopeKey: 'line-1',
        entityType: 'row:sensors',
        entityId: String(rowId),
        reasonCategory: 'instrument-fault',
        reason: 'sensor s1 read 1 instead of 11',
        before: { value: original },
        after: { value: 11 },
      })
      assert.equal(created.status, 200, created.text)
      assert.equal((await query()).body.results[0].value, original, 'pending corrections change nothing')
      assert.equal((await approve(created.body.id, approver, 'line-1')).body.status, 'applied')
      assert.equal((await query()).body.results[0].value, 11, 'the query sees the corrected value')
      const chain = await server.api('GET', `${AMENDMENTS}/chain?scopeKey=line-1&entityId=${rowId}&entityType=row:sensors`, {
        token: editor,
      })
      assert.deepEqual(
        chain.body.results.map((c: { before: unknown; after: unknown }) => [c.before, c.after]),
        [[{ value: original }, { value: 11 }]],
      )
    })

    it('a stale before is refused: concurrent corrections of one row, one wins', async () => {
      await applyAsAdmin(server, settings({ approvalRequired: false, twoPersonApproval: true }))
      try {
        const rows = (
          await server.api('POST', '/oi-api/warm-queries', {
            token: editor,
            body: { Query: 'Sensors | where sensor == "s2" | project _rowid, value | take 1' },
          })
        ).body.results
        const { _rowid: rowId, value } = rows[0]
        const body = (to: number) => ({
          ScopeKey: 'line-1',
          entityType: 'row:sensors',
          entityId: String(rowId),
          reasonCategory: 'recalculation',
          reason: `recalculated to ${to}`,
          before: { value },
          after: { value: to },
        })
        const results = await Promise.all([create(body(100)), create(body(200))])
        assert.deepEqual(results.map((r) => r.status).sort(), [200, 400])
        const loser = results.find((r) => r.status === 400)!
        assert.match(errorMessage(loser), /no longer holds the "before" value of value/)
        const stale = await create({ ...body(300), before: { value: -1 } })
        assert.equal(stale.status, 400)
        const unknownColumn = await create({ ...body(300), before: { colour: 1 }, after: { colour: 2 } })
        assert.match(errorMessage(unknownColumn), /sensors has no column "colour"/)
        const noRow = await create({ ...body(300), entityId: '999999' })
        assert.equal(noRow.status, 404)
        assert.match(errorMessage(await create({ ...body(300), entityId: 'abc' })), /entityId must be the row id/)
      } finally {
        await applyAsAdmin(server, settings({ approvalRequired: true, twoPersonApproval: true }))
      }
    })

    it("every create, approve and reject is a record of the scope's activity log, and the chain verifies", async () => {
      const id = (await create(correction({ entityId: 'LR-LOG' }))).body.id
      await approve(id)
      const rejected = (await create(correction({ entityId: 'LR-LOG' }))).body.id
      await reject(rejected, { reason: 'duplicate' })
      const reader = await server.token('analyst')
      const log = await server.api('GET', '/oi-api/provenance/events/query?scopeKey=batch-7&entityType=lab-result&order=asc&limit=1000', {
        token: reader,
      })
      assert.equal(log.status, 200, log.text)
      const mine = log.body.results.filter((r: { entityId: string }) => r.entityId === 'LR-LOG')
      assert.deepEqual(
        mine.map((r: { actionType: string; details: { correctionId: string } }) => [r.actionType, r.details.correctionId]),
        [
          ['correction-created', id],
          ['correction-approved', id],
          ['correction-created', rejected],
          ['correction-rejected', rejected],
        ],
      )
      assert.deepEqual(
        mine.map((r: { userId: string }) => r.userId),
        [server.accounts.editor.id, server.accounts.approver.id, server.accounts.editor.id, server.accounts.approver.id],
      )
      assert.deepEqual(mine[0].details.before, { ph: 7.9 }, 'the original value is in the log')
      const verdict = await server.api('POST', '/oi-api/provenance/events/verify', { token: reader, body: { ScopeKey: 'batch-7' } })
      assert.equal(verdict.status, 200, verdict.text)
      assert.deepEqual([verdict.body.Valid, verdict.body.ChainValid, verdict.body.Empty], [null, true, false])
    })

    it('the earlier per-log shape is a second view of the same corrections (deprecated)', async () => {
      const legacy = '/oi-api/amendment-logs/batch-7'
      const created = await server.api('POST', `${legacy}/amendments`, {
        token: editor,
        body: {
          entityType: 'lab-result',
          entityId: 'LR-1',
          reasonCategory: 'transcription-error',
          reason: 'second look',
          before: { ph: 7.1 },
          after: { ph: 7.2 },
        },
      })
      assert.equal(created.status, 200, created.text)
      assert.equal(created.body.ScopeKey, 'batch-7')
      assert.equal(created.body.chainIndex, 2)
      const current = await server.api('GET', `${AMENDMENTS}/chain?scopeKey=batch-7&entityId=LR-1`, { token: editor })
      const old = await server.api('GET', `${legacy}/chain?entityId=LR-1`, { token: editor })
      assert.deepEqual(
        current.body.results.map((c: { chainIndex: number }) => c.chainIndex),
        [1, 2],
      )
      assert.deepEqual(
        old.body.results.map((c: { chainIndex: number }) => c.chainIndex),
        [2, 1],
        'the earlier shape lists newest first',
      )
      assert.equal((await server.api('GET', `${legacy}/amendments/query?entityId=LR-1`, { token: editor })).body.totalCount, 2)
      assert.equal((await server.api('GET', `${legacy}/reason-categories`, { token: editor })).body.reasonCategories.length, 6)
      assert.equal(
        (await server.api('POST', `${legacy}/amendments/${created.body.id}/reject`, { token: approver, body: { reason: 'no' } })).body
          .status,
        'rejected',
      )
      assert.equal(
        (
          await server.api('POST', '/oi-api/amendment-logs/batch-8/amendments', {
            token: editor,
            body: { ...correction(), ScopeKey: 'batch-7' },
          })
        ).status,
        400,
      )
      const doc = (await server.api('GET', '/oi-api/openapi', { token: await server.token('admin') })).body
      assert.equal(doc.paths['/oi-api/amendment-logs/{lookup}/chain'].get.deprecated, true)
      assert.equal(doc.paths['/oi-api/provenance/amendments/chain'].get.deprecated, undefined)
    })
  })

  describe(`${backend}: correction chains follow links, not timestamps`, () => {
    it('orders by chain link even when creation times and effective times run backwards', async () => {
      const clock = manualClock(Date.parse('2026-03-10T12:00:00Z'))
      const server = await startTestServer(backend, { clock })
      try {
        await applyAsAdmin(server, settings({ approvalRequired: false, twoPersonApproval: true }))
        const token = await server.token('editor')
        const ids: string[] = []
        for (const [i, effective] of ['2026-03-09T00:00:00Z', '2026-03-01T00:00:00Z', '2026-02-01T00:00:00Z'].entries()) {
          const response = await server.api('POST', AMENDMENTS, {
            token,
            body: correction({ entityId: 'E', reasonCategory: 'delayed-entry', before: i, after: i + 1, effectiveAt: effective }),
          })
          assert.equal(response.status, 200, response.text)
          ids.push(response.body.id)
          clock.advance(-3_600_000) // the clock steps back an hour between corrections
        }
        const chain = (await server.api('GET', `${AMENDMENTS}/chain?scopeKey=batch-7&entityId=E`, { token })).body.results
        assert.deepEqual(
          chain.map((c: { id: string }) => c.id),
          ids,
        )
        assert.deepEqual(
          chain.map((c: { previousId?: string }) => c.previousId),
          [undefined, ids[0], ids[1]],
        )
        assert.ok(Date.parse(chain[0].createdAt) > Date.parse(chain[2].createdAt), 'timestamps disagree with link order')
        const legacy = (await server.api('GET', '/oi-api/amendment-logs/batch-7/chain?entityId=E', { token })).body.results
        assert.deepEqual(
          legacy.map((c: { id: string }) => c.id),
          [...ids].reverse(),
        )
      } finally {
        await server.stop()
      }
    })
  })
}
