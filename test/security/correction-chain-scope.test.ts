/**
 * Issue 14 item 5: one correction chain per data row. The first correction of a row binds the row
 * to its ScopeKey; a correction of the same row under another ScopeKey is a 400 that names no
 * other scope's data (docs/decisions.md). So the first correction's "before" is always the
 * original value, and a token limited to the row's scope sees the whole chain. Both shapes
 * (current and per-log), both backends, and two first corrections racing under two scopes.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const AMENDMENTS = '/oi-api/provenance/amendments'

for (const backend of BACKENDS) {
  describe(`${backend}: one correction chain per data row (issue 14 item 5)`, () => {
    let server: TestServer
    let editor: string
    let rowIds: number[]
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig({ settings: { amendments: { approvalRequired: false, twoPersonApproval: true } } }))
      editor = await server.token('editor')
      await pushRows(server, 'sensors', sensorRows(10))
      const rows = await server.api('POST', '/oi-api/warm-queries', {
        token: editor,
        body: { Query: 'Sensors | project _rowid, value | order by _rowid asc' },
      })
      rowIds = rows.body.results.map((r: { _rowid: number }) => r._rowid)
    })
    after(() => server.stop())

    const rowValue = async (rowId: number) =>
      (
        await server.api('POST', '/oi-api/warm-queries', {
          token: editor,
          body: { Query: `Sensors | where _rowid == ${rowId} | project value` },
        })
      ).body.results[0].value

    const body = (rowId: number, before: number, after: number, extra: Record<string, unknown> = {}) => ({
      entityType: 'row:sensors',
      entityId: String(rowId),
      reasonCategory: 'recalculation',
      reason: `from ${before} to ${after}`,
      before: { value: before },
      after: { value: after },
      ...extra,
    })
    const current = (scope: string, b: Record<string, unknown>, token = editor) =>
      server.api('POST', AMENDMENTS, { token, body: { ...b, ScopeKey: scope } })
    const perLog = (scope: string, b: Record<string, unknown>, token = editor) =>
      server.api('POST', `/oi-api/amendment-logs/${scope}/amendments`, { token, body: b })
    const chainIn = async (scope: string, rowId: number, token = editor) =>
      (await server.api('GET', `${AMENDMENTS}/chain?scopeKey=${scope}&entityId=${rowId}&entityType=row:sensors`, { token })).body
        .results as { before: { value: number }; chainIndex: number; ScopeKey: string }[]

    for (const [shape, first, second] of [
      ['current → current', current, current],
      ['per-log → per-log', perLog, perLog],
      ['current → per-log', current, perLog],
      ['per-log → current', perLog, current],
    ] as const) {
      it(`${shape}: a second scope is refused, naming neither the other scope nor its values; the chain stays whole`, async () => {
        const rowId = rowIds.shift()!
        const original = await rowValue(rowId)
        const a = await first('scope-a', body(rowId, original, 100))
        assert.equal(a.status, 200, a.text)
        const limitedToB = await server.token('editor', { scopes: { scopeKeys: ['scope-b'] } })
        const b = await second('scope-b', body(rowId, 100, 200), limitedToB)
        assert.equal(b.status, 400, b.text)
        const message = errorMessage(b)
        assert.match(message, /already has corrections in another scope/)
        assert.doesNotMatch(message, /scope-a|100/, 'the refusal names no other scope and no corrected value')
        assert.equal(await rowValue(rowId), 100, 'the refused correction changed nothing')
        assert.deepEqual(await chainIn('scope-b', rowId), [], 'no second chain')
        const more = await first('scope-a', body(rowId, 100, 300))
        assert.equal(more.status, 200, more.text)
        const chain = await chainIn('scope-a', rowId)
        assert.deepEqual(
          chain.map((c) => [c.chainIndex, c.before.value]),
          [
            [1, original],
            [2, 100],
          ],
          "the first correction's before is the original value",
        )
      })
    }

    it('a token limited to the scope of the first correction sees the original; one limited to another scope is refused without learning it', async () => {
      const rowId = rowIds.shift()!
      const original = await rowValue(rowId)
      assert.equal((await current('scope-c', body(rowId, original, 7))).status, 200)
      const limitedToC = await server.token('editor', { scopes: { scopeKeys: ['scope-c'] } })
      assert.equal((await chainIn('scope-c', rowId, limitedToC))[0]!.before.value, original)
      const limitedToD = await server.token('editor', { scopes: { scopeKeys: ['scope-d'] } })
      const refused = await current('scope-d', body(rowId, 7, 8), limitedToD)
      assert.equal(refused.status, 400)
      assert.doesNotMatch(errorMessage(refused), /scope-c/)
      // A caller who may see the binding scope is told where to correct the row.
      const told = await current('scope-d', body(rowId, 7, 8))
      assert.match(errorMessage(told), /correct it in scope "scope-c"/)
    })

    it('two first corrections of one row racing under two scopes: one chain, the other refused', async () => {
      const rowId = rowIds.shift()!
      const original = await rowValue(rowId)
      const results = await Promise.all([current('race-1', body(rowId, original, 41)), perLog('race-2', body(rowId, original, 42))])
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 400], results.map((r) => r.text).join('\n'))
      const chains = [...(await chainIn('race-1', rowId)), ...(await chainIn('race-2', rowId))]
      assert.equal(chains.length, 1)
      assert.equal(chains[0]!.before.value, original)
    })

    it('a pending first correction binds the row too (approval required)', async () => {
      await applyAsAdmin(server, sensorConfig({ settings: { amendments: { approvalRequired: true, twoPersonApproval: true } } }))
      try {
        const rowId = rowIds.shift()!
        const original = await rowValue(rowId)
        const pending = await current('pend-a', body(rowId, original, 5))
        assert.equal(pending.body.status, 'pending')
        const other = await perLog('pend-b', body(rowId, original, 6))
        assert.equal(other.status, 400, other.text)
        assert.match(errorMessage(other), /already has corrections in another scope/)
      } finally {
        await applyAsAdmin(server, sensorConfig({ settings: { amendments: { approvalRequired: false, twoPersonApproval: true } } }))
      }
    })
  })
}
