/**
 * Issue 8, item 2: proposals. Filed with `proposals:create`, accepted or rejected only by a
 * different person with review rights, committed with the acceptor as the approver, superseded when
 * the configuration moved underneath them (rebased when it moved elsewhere), on both backends.
 */
import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import type { Caller } from '../../src/domain/access/caller.js'
import type { WorkspaceChange } from '../../src/domain/changes/workspace-change.js'
import { DomainError } from '../../src/domain/errors.js'
import type { Reviewer } from '../../src/domain/proposals/index.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, sensorConfig } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const createQuery = (lookup: string, query: string, extra: object = {}) => ({
  entity: 'warmQuery',
  action: 'create',
  lookup,
  query,
  ...extra,
})

async function rejects(promise: Promise<unknown>, kind: string, message: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof DomainError, String(error))
    assert.equal(error.kind, kind, error.message)
    assert.match(error.message, message)
    return true
  })
}

for (const backend of BACKENDS) {
  describe(`${backend}: proposals (issue 8)`, () => {
    let server: TestServer
    let analyst: Caller
    let approverCaller: Caller
    let approver: Reviewer
    let admin: Reviewer
    const ws = () => server.workspace.id
    const changesSince = async (seq: number): Promise<WorkspaceChange[]> => server.stores.changes.since(ws(), seq, 100)
    const reviewer = (role: 'analyst' | 'editor' | 'approver' | 'admin'): Reviewer => ({
      accountId: server.accounts[role].id,
      accountName: server.accounts[role].name,
      role,
    })

    before(async () => {
      server = await startTestServer(backend)
      analyst = await server.services.access.authenticate(`Bearer ${await server.token('analyst')}`)
      approverCaller = await server.services.access.authenticate(`Bearer ${await server.token('approver')}`)
      approver = reviewer('approver')
      admin = reviewer('admin')
    })
    beforeEach(() => applyAsAdmin(server, sensorConfig()))
    after(() => server.stop())

    it('files an open proposal with its diff and base commit, and announces it', async () => {
      const head = await server.services.config.current(ws())
      const seq = await server.stores.changes.latestSeq(ws())
      const proposal = await server.services.proposals.create(
        analyst,
        {
          rationale: 'Operators ask for the peak per sensor.',
          changes: [createQuery('peak', 'Sensors | summarize peak = max(value) by sensor', { description: 'Peak value per sensor' })],
        },
        'mcp',
      )
      assert.match(proposal.id, /^prop_[a-z2-7]{20}$/)
      assert.equal(proposal.status, 'open')
      assert.deepEqual(proposal.author, { id: server.accounts.analyst.id, name: server.accounts.analyst.name })
      assert.equal(proposal.baseCommitId, head.commitId)
      assert.equal(proposal.via, 'mcp')
      assert.equal(
        proposal.diff.text,
        '+ warm query peak\n+   description: Peak value per sensor\n+   query: Sensors | summarize peak = max(value) by sensor',
      )
      assert.deepEqual(await server.services.proposals.get(ws(), proposal.id), proposal)
      const changes = await changesSince(seq)
      assert.deepEqual(
        changes.map((c) => [c.kind, c.entityType, c.entityId, c.action, c.actorName]),
        [['proposal', 'proposal', proposal.id, 'created', server.accounts.analyst.name]],
      )
      assert.equal((await server.services.config.current(ws())).commitId, head.commitId, 'filing commits nothing to the configuration')
    })

    it("refuses a proposal without the right, with bad KQL, outside the token's scopes, or that changes nothing", async () => {
      const viewer = await server.services.access.authenticate(`Bearer ${await server.token('viewer')}`)
      await rejects(
        server.services.proposals.create(viewer, { rationale: 'x', changes: [createQuery('x', 'print 1')] }, 'mcp'),
        'forbidden',
        /lacks the right proposals:create/,
      )
      await rejects(
        server.services.proposals.create(analyst, { rationale: 'x', changes: [createQuery('x', 'Sensors | where')] }, 'mcp'),
        'invalid-input',
        /^changes\[0\]\.query: KQL error: .*line 1/,
      )
      await rejects(
        server.services.proposals.create(analyst, { rationale: ' ', changes: [] }, 'mcp'),
        'invalid-input',
        /rationale: say why.*changes: a proposal needs at least one change/,
      )
      const metersOnly = await server.services.access.authenticate(
        `Bearer ${await server.token('analyst', { scopes: { connections: ['meters'] } })}`,
      )
      await rejects(
        server.services.proposals.create(metersOnly, { rationale: 'x', changes: [createQuery('x', 'Sensors | count')] }, 'mcp'),
        'invalid-input',
        /changes\[0\]\.query: KQL error: .*Sensors/,
      )
      const current = (await server.services.config.current(ws())).document.warmQueries.find((q) => q.lookup === 'avg-by-sensor')!
      await rejects(
        server.services.proposals.create(
          analyst,
          { rationale: 'x', changes: [{ entity: 'warmQuery', action: 'update', lookup: 'avg-by-sensor', query: current.query }] },
          'mcp',
        ),
        'invalid-input',
        /changes nothing for warmQuery avg-by-sensor/,
      )
      await rejects(
        server.services.proposals.create(
          analyst,
          { rationale: 'x', changes: [createQuery('clash', 'print 1', { path: 'plant/hall/avg' })] },
          'mcp',
        ),
        'invalid-input',
        /with these changes the configuration document is invalid:.*"plant\/hall\/avg" already addresses/s,
      )
    })

    it('accepting commits the change set with the acceptor as approver at that time, in one transaction with the status change', async () => {
      const proposal = await server.services.proposals.create(
        analyst,
        {
          rationale: 'Hourly averages\nfor the dashboard.',
          changes: [
            createQuery('hourly', 'Sensors | summarize avg(value) by bin(timestamp, 1h)', { path: 'plant/hall/hourly' }),
            { entity: 'warmQuery', action: 'delete', lookup: 'no-text' },
          ],
        },
        'mcp',
      )
      const seq = await server.stores.changes.latestSeq(ws())
      const before = Date.now()
      const { proposal: accepted, commit } = await server.services.proposalReview.accept(approver, ws(), proposal.id)
      assert.ok(commit)
      assert.equal(accepted.status, 'accepted')
      assert.equal(accepted.commitId, commit.id)
      assert.deepEqual(accepted.decidedBy, { id: approver.accountId, name: approver.accountName })
      assert.equal(commit.authorName, approver.accountName)
      assert.equal(commit.message, `proposal ${proposal.id} by ${server.accounts.analyst.name}: Hourly averages`)
      const current = await server.services.config.current(ws())
      assert.equal(current.commitId, commit.id)
      assert.deepEqual(
        current.document.warmQueries.map((q) => q.lookup),
        ['avg-by-sensor', 'hourly'],
      )
      const approval = current.approvals['hourly']!
      assert.equal(approval.accountName, approver.accountName)
      assert.ok(approval.at >= before && approval.at <= Date.now())
      assert.equal(
        current.approvals['avg-by-sensor']!.accountName,
        server.accounts.admin.name,
        'untouched warm queries keep their approver',
      )
      const run = await server.services.queries.runWarm(analyst, 'plant/hall/hourly')
      assert.equal(run.approvedBy, approver.accountName)
      assert.equal(run.approvedAt, new Date(approval.at).toISOString())
      const stored = await server.services.proposals.get(ws(), proposal.id)
      assert.equal(stored.status, 'accepted')
      assert.equal(stored.commitId, commit.id)
      assert.deepEqual(
        (await changesSince(seq)).map((c) => [c.kind, c.action, c.commitId, c.actorName]),
        [
          ['config', 'committed', commit.id, approver.accountName],
          ['proposal', 'accepted', commit.id, approver.accountName],
        ],
      )
    })

    it('the author cannot accept; roles without review rights cannot accept or reject; a decided proposal stays decided', async () => {
      const own = await server.services.proposals.create(
        approverCaller,
        { rationale: 'mine', changes: [createQuery('mine', 'print 1')] },
        'mcp',
      )
      await rejects(server.services.proposalReview.accept(approver, ws(), own.id), 'forbidden', /the author of a proposal cannot accept it/)
      for (const role of ['analyst', 'editor'] as const) {
        await rejects(
          server.services.proposalReview.accept(reviewer(role), ws(), own.id),
          'forbidden',
          new RegExp(`the ${role} role cannot review proposals`),
        )
        await rejects(server.services.proposalReview.reject(reviewer(role), ws(), own.id, 'no'), 'forbidden', /cannot review proposals/)
      }
      await rejects(server.services.proposalReview.reject(admin, ws(), own.id, '  '), 'invalid-input', /needs a reason/)
      const rejected = await server.services.proposalReview.reject(admin, ws(), own.id, 'We already have one like it.')
      assert.equal(rejected.status, 'rejected')
      assert.equal(rejected.decisionReason, 'We already have one like it.')
      assert.equal((await server.services.proposals.get(ws(), own.id)).status, 'rejected')
      await rejects(
        server.services.proposalReview.accept(admin, ws(), own.id),
        'invalid-input',
        new RegExp(`proposal ${own.id} is already rejected by ${admin.accountName}`),
      )
      await rejects(server.services.proposalReview.accept(admin, ws(), 'prop_nothere'), 'not-found', /no proposal prop_nothere/)
      assert.equal(
        (await server.services.config.current(ws())).document.warmQueries.some((q) => q.lookup === 'mine'),
        false,
      )
    })

    it('rebases onto a configuration that moved elsewhere; supersedes one that moved underneath it', async () => {
      const elsewhere = await server.services.proposals.create(
        analyst,
        { rationale: 'a', changes: [createQuery('elsewhere', 'Meters | count')] },
        'mcp',
      )
      const underneath = await server.services.proposals.create(
        analyst,
        { rationale: 'b', changes: [{ entity: 'warmQuery', action: 'update', lookup: 'avg-by-sensor', description: 'Mean per sensor' }] },
        'mcp',
      )
      const moved = sensorConfig()
      ;(moved['warmQueries'] as Record<string, unknown>[])[0]!['query'] = 'Sensors | summarize avg(value) by sensor'
      await applyAsAdmin(server, moved)
      const head = (await server.services.config.current(ws())).commitId
      const listed = await server.services.proposals.list(ws(), { status: 'open' })
      assert.ok(listed.some((p) => p.id === elsewhere.id))
      assert.ok(!listed.some((p) => p.id === underneath.id), 'superseded proposals leave the open list')
      const superseded = await server.services.proposals.get(ws(), underneath.id)
      assert.equal(superseded.status, 'superseded')
      assert.deepEqual(superseded.decidedBy, { id: 'system', name: 'system' })
      assert.equal(
        superseded.decisionReason,
        'the configuration moved underneath it: warmQuery avg-by-sensor was changed after the proposal was made',
      )
      const { commit } = await server.services.proposalReview.accept(approver, ws(), elsewhere.id)
      assert.equal(commit?.parentId, head, 'committed on top of the current head')
      assert.ok((await server.services.config.current(ws())).document.warmQueries.some((q) => q.lookup === 'elsewhere'))
    })

    it('accepting a proposal the configuration moved underneath marks it superseded and commits nothing', async () => {
      const proposal = await server.services.proposals.create(
        analyst,
        { rationale: 'c', changes: [{ entity: 'warmQuery', action: 'delete', lookup: 'no-text' }] },
        'mcp',
      )
      const moved = sensorConfig()
      ;(moved['warmQueries'] as Record<string, unknown>[])[1]!['query'] = 'print "now it has text"'
      await applyAsAdmin(server, moved)
      const head = (await server.services.config.current(ws())).commitId
      const seq = await server.stores.changes.latestSeq(ws())
      const outcome = await server.services.proposalReview.accept(approver, ws(), proposal.id)
      assert.equal(outcome.commit, undefined)
      assert.equal(outcome.proposal.status, 'superseded')
      assert.match(outcome.proposal.decisionReason!, /warmQuery no-text was changed/)
      assert.equal((await server.services.config.current(ws())).commitId, head)
      assert.deepEqual(
        (await changesSince(seq)).map((c) => [c.kind, c.action]),
        [['proposal', 'superseded']],
      )
    })

    it('two acceptances of one proposal at once: exactly one commits', async () => {
      const proposal = await server.services.proposals.create(
        analyst,
        { rationale: 'race', changes: [createQuery('race', 'print 1')] },
        'mcp',
      )
      const head = (await server.services.config.current(ws())).document
      const results = await Promise.allSettled([
        server.services.proposalReview.accept(approver, ws(), proposal.id),
        server.services.proposalReview.accept(admin, ws(), proposal.id),
      ])
      const fulfilled = results.filter((r) => r.status === 'fulfilled')
      assert.equal(fulfilled.length, 1, JSON.stringify(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))))
      const failure = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
      assert.match(String(failure.reason), /already accepted|decided by someone else/)
      const history = await server.services.config.history(ws(), 5)
      assert.equal(history.filter((c) => c.message.includes(proposal.id)).length, 1)
      assert.equal(
        head.warmQueries.some((q) => q.lookup === 'race'),
        false,
      )
    })
  })
}
