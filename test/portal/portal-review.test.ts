/**
 * Issue 9, second part, in a real browser (headless Chromium through playwright-core) on every
 * backend: proposals filed through MCP accepted and rejected in the portal (the acceptor becomes
 * the approver; the author cannot accept their own); corrections approved by a second person with
 * the password re-entered as an electronic signature, a wrong password refused and recorded, the
 * self-approval refused; the activity log browsed, filtered, verified (intact and broken) and
 * downloaded. Screenshots of each page for docs/screenshots/.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { connectMcp, textOf } from '../support/mcp-clients.js'
import { openRawDatabase } from '../support/raw-database.js'
import { startTestServer, type TestServer } from '../support/test-server.js'
import { type Browser, chromiumMissing, openBrowser, screenshot, signIn } from './browser.js'
import { PASSWORD } from './portal-client.js'

const skip = chromiumMissing()

/** Files a proposal through MCP (the v1 SDK client) as `role`; returns its id. */
async function proposeThroughMcp(
  server: TestServer,
  role: 'analyst' | 'approver',
  rationale: string,
  change: Record<string, unknown>,
): Promise<string> {
  const client = await connectMcp('legacy', `${server.baseUrl}/oi-api/mcp`, { authorization: `Bearer ${await server.token(role)}` })
  try {
    const result = await client.callTool({ name: 'propose_change', arguments: { rationale, changes: [change] } })
    assert.equal(result.isError, undefined, textOf(result))
    return result.structuredContent!['proposalId'] as string
  } finally {
    await client.close()
  }
}

/** POSTs a form from the page itself (right origin, the page's CSRF token): what a forged button would send. */
async function postFromPage(page: Page, path: string, fields: Record<string, string>): Promise<{ status: number; text: string }> {
  return page.evaluate(`(async () => {
    const csrf = document.querySelector('input[name="_csrf"]').value
    const response = await fetch(${JSON.stringify(path)}, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrf, ...${JSON.stringify(fields)} }) })
    return { status: response.status, text: await response.text() }
  })()`) as Promise<{ status: number; text: string }>
}

for (const [index, backend] of BACKENDS.entries()) {
  const shoot = index === 0 ? screenshot : async () => ''
  describe(`${backend}: proposals, corrections and the activity log in headless Chromium (issue 9)`, { skip }, () => {
    let server: TestServer
    let browser: Browser
    let page: Page
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(12))
      browser = await openBrowser()
      page = await browser.newPage()
    })
    after(async () => {
      await browser?.close()
      await server?.stop()
    })

    it('accepts a proposal made through MCP (the acceptor becomes the approver) and rejects another with a reason', async () => {
      const peak = await proposeThroughMcp(server, 'analyst', 'Operators want the peak per sensor on the hall dashboard.', {
        entity: 'warmQuery',
        action: 'create',
        lookup: 'peak-by-sensor',
        query: 'Sensors | summarize peak = max(value) by sensor | order by sensor asc',
        description: 'Peak per sensor',
      })
      const change = await proposeThroughMcp(server, 'analyst', 'Order the averages by value instead.', {
        entity: 'warmQuery',
        action: 'update',
        lookup: 'avg-by-sensor',
        query: 'Sensors | summarize avg_value = avg(value) by sensor | order by avg_value desc',
      })
      const own = await proposeThroughMcp(server, 'approver', 'A count per sensor for the shift report.', {
        entity: 'warmQuery',
        action: 'create',
        lookup: 'count-by-sensor',
        query: 'Sensors | summarize n = count() by sensor',
      })

      await signIn(page, server, 'approver', '/portal/proposals')
      assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Proposals')
      const card = (id: string) => page.locator(`article[data-proposal-id="${id}"]`)
      assert.equal(await page.locator('article.proposal').count(), 3)
      assert.match(await card(peak).getByRole('heading', { level: 3 }).innerText(), /^Proposal by analyst@acme/)
      assert.match(await card(peak).innerText(), /through an AI client \(MCP\)/)
      assert.equal(await card(peak).locator('.rationale').innerText(), 'Operators want the peak per sensor on the hall dashboard.')
      assert.deepEqual(await card(peak).locator('pre.diff span').allInnerTexts(), [
        '+ warm query peak-by-sensor',
        '+   description: Peak per sensor',
        '+   query: Sensors | summarize peak = max(value) by sensor | order by sensor asc',
      ])
      assert.deepEqual(await card(change).locator('pre.diff .diff-del').allInnerTexts(), [
        '-   query: Sensors | summarize avg_value = avg(value) by sensor | order by sensor asc',
      ])
      assert.deepEqual(await card(change).locator('pre.diff .diff-add').allInnerTexts(), [
        '+   query: Sensors | summarize avg_value = avg(value) by sensor | order by avg_value desc',
      ])
      // The author's own proposal: no accept button, and the reason in words.
      assert.equal(
        await card(own)
          .getByRole('button', { name: `Accept proposal ${own}` })
          .count(),
        0,
      )
      assert.match(
        await card(own).locator('.explain').innerText(),
        /You filed this proposal, so you cannot accept it\. Another person with review rights must/,
      )
      await shoot(page, 'proposals')

      // A forged accept of the own proposal (right origin, right token): the service refuses it.
      const forged = await postFromPage(page, `/portal/proposals/${own}/accept`, {})
      assert.equal(forged.status, 403)
      assert.match(forged.text, /the author of a proposal cannot accept it; another person with review rights must/)
      assert.equal((await server.services.proposals.get(server.workspace.id, own)).status, 'open')

      await card(peak)
        .getByRole('button', { name: `Accept proposal ${peak}` })
        .click()
      await page.waitForURL(/\/portal\/proposals\?accepted=prop_/)
      assert.match(
        await page.getByRole('status').innerText(),
        new RegExp(`^Proposal ${peak} by analyst@acme was accepted and committed as `),
      )
      const run = await server.api('GET', '/oi-api/warm-queries/peak-by-sensor', { token: await server.token('viewer') })
      assert.equal(run.status, 200)
      assert.equal(run.body.approvedBy, 'approver@acme')
      assert.deepEqual(
        run.body.results.map((r: { peak: number }) => r.peak),
        [9, 10, 11],
      )

      await card(change)
        .getByLabel(/^Reason for rejecting/)
        .fill('The dashboard sorts by sensor name; keep the order.')
      await card(change)
        .getByRole('button', { name: `Reject proposal ${change}` })
        .click()
      await page.waitForURL(/\/portal\/proposals\?rejected=prop_/)
      assert.equal(await page.locator('article.proposal').count(), 1, 'only the own proposal is still open')
      const decided = page.locator('table tbody tr')
      assert.match(
        await decided.filter({ hasText: change }).innerText(),
        /analyst@acme[\s\S]*Order the averages by value instead\.\s+rejected\s+approver@acme[\s\S]*The dashboard sorts by sensor name; keep the order\./,
      )
      assert.match(await decided.filter({ hasText: peak }).innerText(), /accepted\s+approver@acme[\s\S]*commit /)
      await shoot(page, 'proposals-decided')

      // A rejection without a reason changes nothing.
      const noReason = await postFromPage(page, `/portal/proposals/${own}/reject`, { reason: '  ' })
      assert.equal(noReason.status, 400)
      assert.match(noReason.text, /a rejection needs a reason/)

      // Both decisions are in the activity log, made in the portal by the approver.
      const records = await server.services.ledger.query(
        { workspaceId: server.workspace.id, containerId: 'platform' },
        { entityType: 'proposal' },
        { limit: 10, offset: 0, order: 'asc' },
      )
      const decisions = records.records.map(
        (r) => `${r.entityId} ${r.actionType} ${(r.details as { actor: { name: string; via: string } }).actor.via}`,
      )
      assert.ok(decisions.includes(`${peak} accepted portal`) && decisions.includes(`${change} rejected portal`), decisions.join('; '))
    })

    it('the MCP reviewUrl opens that proposal, through the sign-in page, and still shows it once decided (issue 18)', async () => {
      const client = await connectMcp('legacy', `${server.baseUrl}/oi-api/mcp`, {
        authorization: `Bearer ${await server.token('analyst')}`,
      })
      let reviewUrl: string
      let id: string
      try {
        const result = await client.callTool({
          name: 'propose_change',
          arguments: {
            rationale: 'A daily minimum per sensor.',
            changes: [
              { entity: 'warmQuery', action: 'create', lookup: 'min-by-sensor', query: 'Sensors | summarize low = min(value) by sensor' },
            ],
          },
        })
        reviewUrl = result.structuredContent!['reviewUrl'] as string
        id = result.structuredContent!['proposalId'] as string
      } finally {
        await client.close()
      }
      assert.ok(reviewUrl.endsWith(`/portal/proposals?proposal=${id}#${id}`), reviewUrl)
      const path = reviewUrl.slice(reviewUrl.indexOf('/portal/'))
      // A signed-out reviewer follows the link: after signing in, the page opens at that proposal.
      await page.context().clearCookies()
      await page.goto(`${server.baseUrl}${path}`)
      await page.waitForURL(/\/portal\/sign-in\?next=/)
      await page.getByLabel('Account name').fill('approver@acme')
      await page.getByLabel('Password').fill(PASSWORD('approver'))
      await page.getByLabel('Password').press('Enter')
      await page.waitForURL((url) => url.pathname === '/portal/proposals')
      assert.equal(new URL(page.url()).searchParams.get('proposal'), id)
      const focused = page.locator('article.proposal.focused')
      assert.equal(await focused.getAttribute('id'), id)
      assert.equal(await page.locator(`[id="${id}"]`).count(), 1, 'shown once, not again in the list')
      assert.equal(await page.locator('article.proposal').first().getAttribute('id'), id, 'shown first')
      assert.ok(await focused.getByRole('button', { name: `Accept proposal ${id}` }).isVisible())
      // Once decided, the same link still shows it, with the decision.
      await focused.getByLabel(/^Reason for rejecting/).fill('Not needed for now.')
      await focused.getByRole('button', { name: `Reject proposal ${id}` }).click()
      await page.waitForURL(/\/portal\/proposals\?rejected=prop_/)
      await page.goto(`${server.baseUrl}${path}`)
      assert.match(
        await page.locator('article.proposal.focused .decision').innerText(),
        /^rejected by approver@acme, .*Reason: Not needed for now\.$/,
      )
      assert.equal(await page.locator('article.proposal.focused form').count(), 0, 'no review forms on a decided proposal')
      // A link to a proposal that does not exist says so.
      const missing = await page.goto(`${server.baseUrl}/portal/proposals?proposal=prop_nope`)
      assert.equal(missing!.status(), 404)
      assert.match(await page.getByRole('alert').innerText(), /There is no proposal "prop_nope" in this workspace/)
    })

    it('approves a correction as a second person with the password re-entered; a wrong password and the self-approval are refused', async () => {
      const create = async (role: 'editor' | 'approver', entityId: string, before: number, after: number) => {
        const response = await server.api('POST', '/oi-api/provenance/amendments', {
          token: await server.token(role),
          body: {
            ScopeKey: 'plant-1',
            entityType: 'batch',
            entityId,
            reasonCategory: 'transcription-error',
            reason: `Reading of ${entityId} was copied wrongly from the paper log.`,
            before: { temperature: before },
            after: { temperature: after },
          },
        })
        assert.equal(response.status, 200, response.text)
        assert.equal(response.body.status, 'pending')
        return response.body.id as string
      }
      const byEditor = await create('editor', 'B-1001', 21.4, 24.1)
      const byApprover = await create('approver', 'B-1002', 19.9, 18.9)

      await signIn(page, server, 'approver', '/portal/corrections')
      const card = (id: string) => page.locator(`article[data-correction-id="${id}"]`)
      /** Fills the card's comment (when given) and password, then presses Approve or Reject "and sign". */
      const sign = async (id: string, action: 'Approve' | 'Reject', password: string, comment?: string) => {
        if (comment !== undefined)
          await card(id)
            .getByLabel(/^Comment or reason/)
            .fill(comment)
        await card(id)
          .getByLabel(/^Your password/)
          .fill(password)
        await card(id)
          .getByRole('button', { name: `${action} correction ${id} and sign` })
          .click()
      }
      assert.equal(await page.locator('article.correction').count(), 2)
      assert.deepEqual(await card(byEditor).locator('table.before-after tbody td').allInnerTexts(), ['21.4', '24.1'])
      assert.match(await card(byEditor).innerText(), /Reason category\s+transcription-error/)
      // Two-person rule: the own correction has no approve button, and says why.
      assert.equal(
        await card(byApprover)
          .getByRole('button', { name: /^Approve/ })
          .count(),
        0,
      )
      assert.match(
        await card(byApprover).locator('.explain').innerText(),
        /You wrote this correction, so you cannot approve it\. Two-person approval is on/,
      )
      await shoot(page, 'corrections')

      // 1. A wrong password signs nothing, counts toward the sign-in throttle, and is recorded.
      await sign(byEditor, 'Approve', 'not-my-password')
      await page.getByRole('alert').waitFor()
      assert.equal(
        await page.getByRole('alert').innerText(),
        `The password is not right, so correction ${byEditor} was not approved and nothing was signed. The attempt is recorded.`,
      )
      assert.equal((await server.stores.corrections.byId(server.workspace.id, byEditor))?.status, 'pending')
      const failures = await server.stores.sessions.loginFailures(['account:approver@acme'], 0)
      assert.equal(failures.get('account:approver@acme')?.count, 1)

      // 2. The right password: approved, applied and signed.
      await sign(byEditor, 'Approve', PASSWORD('approver'), 'Checked against the paper log.')
      await page.waitForURL(/decided=amd_/)
      assert.match(
        await page.getByRole('status').innerText(),
        new RegExp(
          `^Correction ${byEditor} was approved and applied\\. Signed by approver@acme at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC, meaning: approved\\.$`,
        ),
      )
      assert.match(
        await card(byEditor).locator('.signature').innerText(),
        /^Signed electronically by approver@acme at .* UTC; meaning: approved\.$/,
      )
      // The approver's comment is shown with the decision (issue 18 item 5), and the API returns it.
      assert.equal(await card(byEditor).locator('dd.approval-comment').innerText(), 'Checked against the paper log.')
      assert.match(await card(byEditor).innerText(), /Approver's comment\s+Checked against the paper log\./)
      const overApi = await server.api('GET', `/oi-api/provenance/amendments/${byEditor}?scopeKey=plant-1`, {
        token: await server.token('viewer'),
      })
      assert.equal(overApi.body?.approvalComment, 'Checked against the paper log.', overApi.text)
      await shoot(page, 'corrections-signed')

      // 3. The own correction, forged with the right password: refused by the two-person rule.
      await page.goto(`${server.baseUrl}/portal/corrections`)
      const self = await postFromPage(page, `/portal/corrections/${byApprover}/approve`, {
        scopeKey: 'plant-1',
        password: PASSWORD('approver'),
      })
      assert.equal(self.status, 403)
      assert.match(
        self.text,
        /two-person approval is on: approver@acme wrote correction amd_\w+ and cannot also approve it; another approver must/,
      )

      // 4. Another approver rejects it; a reason is required.
      await signIn(page, server, 'admin', '/portal/corrections')
      await sign(byApprover, 'Reject', PASSWORD('admin'))
      await page.getByRole('alert').waitFor()
      assert.match(await page.getByRole('alert').innerText(), /a rejection needs a reason/)
      await sign(byApprover, 'Reject', PASSWORD('admin'), 'The paper log agrees with the entry.')
      await page.waitForURL(/decided=amd_/)
      assert.match(
        await card(byApprover).locator('.signature').innerText(),
        /^Signed electronically by admin@acme at .*; meaning: rejected\.$/,
      )
      assert.match(await card(byApprover).innerText(), /Rejection reason\s+The paper log agrees with the entry\./)

      // The scope's log holds the refusal and both signatures (name, time, meaning).
      const { records } = await server.services.ledger.query(
        { workspaceId: server.workspace.id, containerId: 'scope:plant-1' },
        {},
        { limit: 50, offset: 0, order: 'asc' },
      )
      const actions = records.map((r) => r.actionType)
      assert.deepEqual(actions, [
        'correction-created',
        'correction-created',
        'signature-refused',
        'correction-approved',
        'correction-rejected',
      ])
      const approved = records[3]!.details as { signature: { signer: string; signedAt: string; meaning: string }; comment: string }
      assert.equal(approved.signature.signer, 'approver@acme')
      assert.equal(approved.signature.meaning, 'approved')
      assert.match(approved.signature.signedAt, /^\d{4}-\d\d-\d\dT/)
      assert.equal(approved.comment, 'Checked against the paper log.')
      assert.equal((records[4]!.details as { signature: { meaning: string } }).signature.meaning, 'rejected')
      assert.deepEqual(records[2]!.details, {
        correctionId: byEditor,
        meaning: 'approved',
        reason: 'wrong password',
        clientAddress: '127.0.0.1',
        actor: { name: 'approver@acme', via: 'portal' },
      })
    })

    it('browses and filters the activity log, verifies the chain in words, downloads it, and shows where a tampered chain breaks', async () => {
      await signIn(page, server, 'analyst', '/portal/activity')
      assert.equal(await page.getByRole('heading', { level: 2, name: /^Platform-Config \(workspace\)/ }).count(), 1)
      assert.ok((await page.locator('tbody tr').count()) > 5)
      // Filter: the proposal decisions only.
      await page.getByLabel('Entity type').fill('proposal')
      await page.getByLabel('Action').fill('accepted')
      await page.getByRole('button', { name: 'Show' }).click()
      await page.waitForURL(/entityType=proposal/)
      assert.equal(await page.locator('tbody tr').count(), 1)
      assert.match(await page.locator('tbody tr').innerText(), /proposal\s+prop_\w+\s+accepted\s+approver@acme/)

      // The scope's log, verified.
      await page.goto(`${server.baseUrl}/portal/activity`)
      await page.getByLabel('Log', { exact: true }).selectOption('plant-1')
      await page.getByRole('button', { name: 'Show' }).click()
      await page.waitForURL(/scope=plant-1/)
      assert.deepEqual(await page.locator('tbody tr th').allInnerTexts(), [
        '000000000005',
        '000000000004',
        '000000000003',
        '000000000002',
        '000000000001',
      ])
      await page.getByRole('button', { name: 'Verify chain' }).click()
      await page.locator('#verdict').waitFor()
      assert.equal(await page.locator('#verdict h2').innerText(), 'The chain is intact')
      assert.match(
        await page.locator('#verdict').innerText(),
        /ChainValid true\s+Yes: every digest and link from the first record to the last \(5 records\) recomputes/,
      )
      assert.match(await page.locator('#verdict').innerText(), /Valid null\s+Not asked/)
      assert.match(await page.locator('#verdict').innerText(), /Reason: OK/)
      await shoot(page, 'activity-log-verified')

      // Download the scope's log as the API exports it.
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'JSON' }).click()])
      assert.match(download.suggestedFilename(), /^activity-log-plant-1-\d{4}-\d\d-\d\d\.json$/)
      const exported = readFileSync((await download.path())!, 'utf8')
      for (const seq of ['000000000001', '000000000005'])
        assert.ok(exported.includes(`"RecordID":"${seq}"`) || exported.includes(`"RecordID": "${seq}"`), `record ${seq} in the export`)
      const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'CSV' }).click()])
      assert.match(csv.suggestedFilename(), /\.csv$/)

      // Someone edits record 3 in the database: verify says where the chain breaks.
      const raw = await openRawDatabase(server)
      try {
        const changed = await raw.run(
          `UPDATE ledger_records SET body = replace(body, 'wrong password', 'typo') WHERE container_id = ? AND seq = 3`,
          ['scope:plant-1'],
        )
        assert.equal(changed, 1)
      } finally {
        await raw.close()
      }
      await page.getByRole('button', { name: 'Verify chain' }).click()
      await page.locator('#verdict').waitFor()
      assert.equal(await page.locator('#verdict h2').innerText(), 'The chain is broken at record 000000000003')
      assert.match(await page.locator('#verdict').innerText(), /BrokenAt 000000000003\s+The first bad link is record 000000000003/)
      assert.match(await page.locator('#verdict').innerText(), /ChainValid false/)
      assert.equal(await page.locator('tr.broken th').innerText(), '000000000003', 'the record where it breaks is marked')
      await shoot(page, 'activity-log-broken')

      // Verifying is itself recorded.
      const { records } = await server.services.ledger.query(
        { workspaceId: server.workspace.id, containerId: 'platform' },
        { entityType: 'activity-log' },
        { limit: 10, offset: 0, order: 'asc' },
      )
      assert.deepEqual(
        records.map((r) => r.actionType),
        ['verified', 'exported', 'exported', 'verified'],
      )
      assert.equal((records[3]!.details as { BrokenAt: string }).BrokenAt, '000000000003')

      // A viewer may read the log but has no verify button, and a forged verify is refused.
      await signIn(page, server, 'viewer', '/portal/activity')
      assert.equal(await page.getByRole('button', { name: 'Verify chain' }).count(), 0)
      const forged = await postFromPage(page, '/portal/activity/verify', { scope: '' })
      assert.equal(forged.status, 403)
      assert.match(forged.text, /Your role \(viewer\) does not include provenance:verify/)
      // Nor does it see the approve forms of corrections.
      await page.goto(`${server.baseUrl}/portal/corrections?status=all`)
      assert.equal(await page.locator('article.correction').count(), 2)
      assert.equal(await page.locator('form.sign-form').count(), 0)
    })
  })
}
