/**
 * Issue 9, second part, over real HTTP (no browser), on every backend: the review pages enforce
 * rights exactly as the API does (a viewer or an editor forging an approver's POST gets 403), a
 * POST without the session's CSRF token changes nothing, the signature's password re-entry counts
 * toward the sign-in throttle (and then refuses even the right password), bad filter input is a 400
 * page rather than a 500, and the activity-log download is the API's export, streamed.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, sensorConfig } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'
import { PASSWORD, PortalClient, signedIn } from './portal-client.js'

for (const backend of BACKENDS) {
  describe(`${backend}: portal review pages over HTTP (issue 9)`, () => {
    let server: TestServer
    let proposalId: string
    let correctionId: string
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      const analyst = server.services.sessions.callerOf({
        account: server.accounts.analyst,
        workspace: server.workspace,
        role: 'analyst',
        publicId: 'x',
        csrfToken: 'x',
        createdAt: 0,
        expiresAt: Date.now() + 3_600_000,
      })
      proposalId = (
        await server.services.proposals.create(
          analyst,
          {
            rationale: 'Peak per sensor.',
            changes: [{ entity: 'warmQuery', action: 'create', lookup: 'peak', query: 'Sensors | summarize peak = max(value) by sensor' }],
          },
          'mcp',
        )
      ).id
      const created = await server.api('POST', '/oi-api/provenance/amendments', {
        token: await server.token('editor'),
        body: {
          ScopeKey: 'lab',
          entityType: 'sample',
          entityId: 'S-7',
          reasonCategory: 'recalculation',
          reason: 'Dilution factor applied twice.',
          before: { result: 4.2 },
          after: { result: 2.1 },
        },
      })
      assert.equal(created.status, 200, created.text)
      correctionId = created.body.id
    })
    after(() => server.stop())

    const stillOpen = async () => {
      assert.equal((await server.services.proposals.get(server.workspace.id, proposalId)).status, 'open')
      assert.equal((await server.stores.corrections.byId(server.workspace.id, correctionId))?.status, 'pending')
    }

    it('refuses forged POSTs without the right with 403, exactly as the API does, and changes nothing', async () => {
      const cases: [string, PortalClient, string, Record<string, string>, RegExp][] = []
      const viewer = await signedIn(server, 'viewer')
      const editor = await signedIn(server, 'editor')
      cases.push(
        ['viewer accepts', viewer, `/portal/proposals/${proposalId}/accept`, {}, /Your role \(viewer\) does not include proposals:review/],
        ['editor accepts', editor, `/portal/proposals/${proposalId}/accept`, {}, /Your role \(editor\) does not include proposals:review/],
        [
          'editor rejects',
          editor,
          `/portal/proposals/${proposalId}/reject`,
          { reason: 'no' },
          /Your role \(editor\) does not include proposals:review/,
        ],
        [
          'viewer approves',
          viewer,
          `/portal/corrections/${correctionId}/approve`,
          { scopeKey: 'lab', password: PASSWORD('viewer') },
          /Your role \(viewer\) does not include amendments:approve/,
        ],
        [
          'editor rejects correction',
          editor,
          `/portal/corrections/${correctionId}/reject`,
          { scopeKey: 'lab', reason: 'no', password: PASSWORD('editor') },
          /Your role \(editor\) does not include amendments:approve/,
        ],
        ['viewer verifies', viewer, '/portal/activity/verify', {}, /Your role \(viewer\) does not include provenance:verify/],
      )
      for (const [name, client, path, form, message] of cases) {
        const response = await client.post(path, form)
        assert.equal(response.status, 403, name)
        assert.match(response.text, message, name)
      }
      // The pages they may open show no buttons they cannot use.
      const page = await viewer.get('/portal/corrections')
      assert.equal(page.status, 200)
      assert.match(page.text, /data-correction-id="amd_/)
      assert.doesNotMatch(page.text, /Approve and sign|Reject and sign|name="password"/)
      assert.equal((await viewer.get('/portal/proposals')).status, 403, 'a viewer cannot file proposals, so the page is not theirs')
      const editorPage = await editor.get('/portal/proposals')
      assert.match(editorPage.text, /data-proposal-id="prop_/)
      assert.doesNotMatch(editorPage.text, /Accept and commit|name="reason"/)
      await stillOpen()
    })

    it("refuses a POST without the session's CSRF token (or from another origin) with 403, even from an approver with the right password", async () => {
      const approver = await signedIn(server, 'approver')
      const posts: [string, Record<string, string>][] = [
        [`/portal/proposals/${proposalId}/accept`, {}],
        [`/portal/proposals/${proposalId}/reject`, { reason: 'forged' }],
        [`/portal/corrections/${correctionId}/approve`, { scopeKey: 'lab', password: PASSWORD('approver') }],
        [`/portal/corrections/${correctionId}/reject`, { scopeKey: 'lab', reason: 'forged', password: PASSWORD('approver') }],
        ['/portal/activity/verify', {}],
      ]
      for (const [path, form] of posts) {
        const missing = await approver.post(path, form, { omitCsrf: true })
        assert.equal(missing.status, 403, path)
        assert.match(missing.text, /did not come from a portal page, so nothing was changed/)
        const wrong = await approver.post(path, { ...form, _csrf: 'not-the-token' })
        assert.equal(wrong.status, 403, path)
        const crossSite = await approver.post(path, form, { headers: { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' } })
        assert.equal(crossSite.status, 403, path)
      }
      await stillOpen()
    })

    it('answers bad input with a 400 page: a malformed RecordID, impossible dates, an unknown or decided item', async () => {
      const analyst = await signedIn(server, 'analyst')
      const verify = await analyst.post('/portal/activity/verify', { scope: '', RecordID: '42' })
      assert.equal(verify.status, 400)
      assert.match(verify.text, /Nothing was verified: RecordID must be/)
      const beyond = await analyst.post('/portal/activity/verify', { scope: 'lab', RecordID: '000000009999' })
      assert.equal(beyond.status, 404)
      assert.match(beyond.text, /Verify could not answer/)
      const dates = await analyst.get('/portal/activity?from=2026-02-31')
      assert.equal(dates.status, 400)
      assert.match(dates.text, /the from date must be a day like 2026-01-31/)
      const reversed = await analyst.get('/portal/activity?from=2026-03-02&to=2026-03-01')
      assert.equal(reversed.status, 400)
      const approver = await signedIn(server, 'approver')
      const unknown = await approver.post('/portal/proposals/prop_nope/accept', {})
      assert.equal(unknown.status, 404)
      assert.match(unknown.text, /The proposal was not accepted: no proposal prop_nope in this workspace/)
      const wrongScope = await approver.post(`/portal/corrections/${correctionId}/approve`, {
        scopeKey: 'elsewhere',
        password: PASSWORD('approver'),
      })
      assert.equal(wrongScope.status, 404)
      assert.match(wrongScope.text, /no correction amd_\w+ in scope &quot;elsewhere&quot;/)
      await stillOpen()
    })

    it('downloads the activity log as the API exports it, and records the download', async () => {
      const analyst = await signedIn(server, 'analyst')
      const csv = await analyst.get('/portal/activity/export?format=csv&scope=lab')
      assert.equal(csv.status, 200)
      assert.match(csv.headers.get('content-type')!, /^text\/csv/)
      assert.match(csv.headers.get('content-disposition')!, /^attachment; filename="activity-log-lab-\d{4}-\d\d-\d\d\.csv"$/)
      assert.match(csv.text, /correction-created/)
      const json = await analyst.get('/portal/activity/export?format=json')
      assert.match(json.headers.get('content-type')!, /^application\/json/)
      assert.match(json.headers.get('content-disposition')!, /filename="activity-log-platform-config-/)
      const { records } = await server.services.ledger.query(
        { workspaceId: server.workspace.id, containerId: 'platform' },
        { entityType: 'activity-log', actionType: 'exported' },
        { limit: 10, offset: 0, order: 'asc' },
      )
      assert.deepEqual(
        records.map((r) => [r.entityId, (r.details as { format: string }).format, (r.details as { actor: { name: string } }).actor.name]),
        [
          ['scope:lab', 'csv', 'analyst@acme'],
          ['platform-config', 'json', 'analyst@acme'],
        ],
      )
    })

    it('pages a log 50 records at a time, newest first, and filters by user and day', async () => {
      const token = await server.token('editor')
      for (let i = 1; i <= 60; i++) {
        const appended = await server.api('POST', '/oi-api/provenance/events', {
          token,
          body: { ScopeKey: 'paging', entityType: 'batch', entityId: `B-${i}`, actionType: 'released' },
        })
        assert.equal(appended.status, 200, appended.text)
      }
      const viewer = await signedIn(server, 'viewer')
      const rowIds = (text: string) => [...text.matchAll(/<th scope="row" class="mono record-id">(\d{12})<\/th>/g)].map((m) => m[1])
      const first = await viewer.get('/portal/activity?scope=paging')
      assert.equal(first.status, 200)
      assert.deepEqual(
        rowIds(first.text),
        Array.from({ length: 50 }, (_, i) => String(60 - i).padStart(12, '0')),
      )
      assert.match(first.text, /Records 1–50 of 60, newest first/)
      assert.match(first.text, /<a href="\/portal\/activity\?scope=paging&amp;page=2">Older →<\/a>/)
      const second = await viewer.get('/portal/activity?scope=paging&page=2')
      assert.deepEqual(
        rowIds(second.text),
        Array.from({ length: 10 }, (_, i) => String(10 - i).padStart(12, '0')),
      )
      const byEditor = await viewer.get(
        `/portal/activity?scope=paging&userId=${server.accounts.editor.id}&entityType=batch&actionType=released`,
      )
      assert.match(byEditor.text, /Records 1–50 of 60/)
      const byOther = await viewer.get(`/portal/activity?scope=paging&userId=${server.accounts.admin.id}`)
      assert.match(byOther.text, /No records match these filters\./)
      const today = new Date().toISOString().slice(0, 10)
      assert.match((await viewer.get(`/portal/activity?scope=paging&from=${today}&to=${today}`)).text, /Records 1–50 of 60/)
      assert.match((await viewer.get('/portal/activity?scope=paging&to=2020-01-01')).text, /No records match these filters\./)
    })

    it('counts wrong signature passwords toward the sign-in throttle: then even the right one signs nothing', async () => {
      const admin = await signedIn(server, 'admin')
      for (let i = 0; i < 5; i++) {
        const wrong = await admin.post(`/portal/corrections/${correctionId}/approve`, { scopeKey: 'lab', password: `guess-${i}` })
        assert.equal(wrong.status, 401)
        assert.match(wrong.text, /The password is not right, so correction amd_\w+ was not approved and nothing was signed\./)
      }
      const throttled = await admin.post(`/portal/corrections/${correctionId}/approve`, { scopeKey: 'lab', password: PASSWORD('admin') })
      assert.equal(throttled.status, 429)
      assert.ok(Number(throttled.headers.get('retry-after')) > 0)
      assert.match(throttled.text, /Too many wrong passwords: signing is paused for \d+ minutes?\. Nothing was signed\./)
      await stillOpen()
      // The same throttle guards the sign-in form.
      const signIn = await new PortalClient(server.baseUrl).signIn('admin@acme', PASSWORD('admin'))
      assert.equal(signIn.status, 429)
      const { records } = await server.services.ledger.query(
        { workspaceId: server.workspace.id, containerId: 'scope:lab' },
        { actionType: 'signature-refused' },
        { limit: 10, offset: 0, order: 'asc' },
      )
      assert.deepEqual(
        records.map((r) => (r.details as { reason: string }).reason),
        [...Array(5).fill('wrong password'), 'too many failed password entries'],
      )
    })
  })
}
