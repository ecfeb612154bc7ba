/**
 * Issue 9 item 7 in a real browser (headless Chromium through playwright-core) on every backend:
 * the connections page shows each connection's kind, table, connector state, last run, rows
 * ingested and last error (without secrets); an admin sets credentials through the write-only form
 * and sees "set" with the key names, who and when — never the value, on the page or in the
 * activity log; clearing them; a non-admin cannot open the page or post the form.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import type { Page } from 'playwright-core'
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/backends.js'
import { eventually } from '../support/eventually.js'
import { applyAsAdmin, sensorConfig, sensorRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'
import { type Browser, chromiumMissing, openBrowser, screenshot, signIn } from './browser.js'
import { signedIn } from './portal-client.js'

const skip = chromiumMissing()
const SECRET = 'Tr0ub4dor&3-never-shown'

for (const [index, backend] of BACKENDS.entries()) {
  const shoot = index === 0 ? screenshot : async () => ''
  describe(`${backend}: the connections page in headless Chromium (issue 9)`, { skip }, () => {
    let server: TestServer
    let source: TestDatabase
    let browser: Browser
    let page: Page
    before(async () => {
      // A source database the postgres connector pulls from (PostgreSQL serves it on both backends).
      source = await createTestDatabase()
      const client = new pg.Client({ connectionString: source.url })
      await client.connect()
      await client.query(
        'CREATE TABLE readings (id serial PRIMARY KEY, updated_at timestamptz NOT NULL, sensor text NOT NULL, value double precision NOT NULL)',
      )
      await client.query(
        "INSERT INTO readings (updated_at, sensor, value) VALUES ('2026-03-01T10:00:00Z', 'a', 1), ('2026-03-01T10:01:00Z', 'b', 2), ('2026-03-01T10:02:00Z', 'a', 3)",
      )
      await client.end()
      server = await startTestServer(backend, { connectors: { backoff: { initialMs: 200, maxMs: 1000 }, leaseRetryMs: 200 } })
      const base = sensorConfig()
      const columns = [
        { name: 'timestamp', type: 'datetime' },
        { name: 'source_id', type: 'long' },
        { name: 'sensor', type: 'string' },
        { name: 'value', type: 'real' },
      ]
      const settings = {
        host: '127.0.0.1',
        port: 5432,
        database: new URL(source.url).pathname.slice(1),
        user: 'postgres',
        query: 'SELECT id AS source_id, updated_at AS "timestamp", sensor, value FROM readings',
        cursorColumn: 'timestamp',
        tiebreakColumn: 'source_id',
        intervalSeconds: 0.2,
      }
      await applyAsAdmin(server, {
        ...base,
        connections: [
          ...(base['connections'] as unknown[]),
          { lookup: 'plant', kind: 'postgres', table: 'Plant', columns, settings },
          { lookup: 'historian', kind: 'postgres', table: 'Historian', columns, settings: { ...settings, port: 1 } },
        ],
      })
      await eventually(
        () => server.services.connectors.status(server.workspace.id),
        (s) => s.find((c) => c.lookup === 'plant')?.rowsIngested === 3 && s.find((c) => c.lookup === 'historian')?.state === 'backoff',
        'one connector running, one backing off',
      )
      browser = await openBrowser()
      page = await browser.newPage()
    })
    after(async () => {
      await browser?.close()
      await server?.stop()
      await source?.drop()
    })

    it('shows each connection\'s status and sets credentials write-only: "set" with key names, never the value', async () => {
      await signIn(page, server, 'admin', '/portal/connections')
      const row = (lookup: string) => page.locator(`tr[data-connection="${lookup}"]`)
      assert.deepEqual(await page.locator('tbody tr th').allInnerTexts(), ['sensors', 'meters', 'plant', 'historian'])
      assert.match(await row('sensors').innerText(), /sensors\s+push\s+Sensors\s+rows pushed through the API/)
      assert.match(await row('plant').innerText(), /plant\s+postgres\s+Plant\s+running/)
      assert.equal(await row('plant').locator('td.num').innerText(), '3')
      assert.match(await row('historian').innerText(), /backoff/)
      assert.match(await row('historian').locator('.error-text').innerText(), /ECONNREFUSED|connect/i)
      assert.equal(await row('plant').locator('.badge').last().innerText(), 'not set')

      // Set a password for plant through the form (the key name is suggested for its kind).
      const form = page.locator('section[data-connection="plant"]')
      assert.equal(await form.getByLabel('Key name 1 of plant').inputValue(), 'password')
      await form.getByLabel('Value 1 of plant').fill(SECRET)
      assert.equal(await form.getByLabel('Value 1 of plant').getAttribute('type'), 'password')
      await form.getByRole('button', { name: 'Save credentials of plant' }).click()
      await page.waitForURL(/\?set=plant$/)
      assert.equal(
        await page.getByRole('status').innerText(),
        'Credentials of plant saved. Their values are not shown again; the connector uses them from its next start.',
      )
      assert.match(
        await row('plant').locator('td').last().innerText(),
        /^set\s+keys: password\s+by admin@acme, \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
      )
      // The value is nowhere: not on the page, not in any form field, not in the activity log.
      assert.ok(!(await page.content()).includes(SECRET))
      assert.deepEqual(
        await page
          .locator('input[type="password"]')
          .evaluateAll((inputs) => inputs.map((i) => (i as unknown as { value: string }).value).filter(Boolean)),
        [],
      )
      const { records } = await server.services.ledger.query(
        { workspaceId: server.workspace.id, containerId: 'platform' },
        { entityType: 'connection-credentials' },
        { limit: 10, offset: 0, order: 'asc' },
      )
      assert.equal(records.length, 1)
      assert.equal(records[0]!.actionType, 'credentials-set')
      assert.deepEqual((records[0]!.details as { keys: string[] }).keys, ['password'])
      assert.equal((records[0]!.details as { actor: { via: string } }).actor.via, 'portal')
      assert.ok(!JSON.stringify(records).includes(SECRET))
      await shoot(page, 'connections')

      // A refused submission keeps the key names, never the values.
      await form.getByLabel('Key name 2 of plant').fill('bad key!')
      await form.getByLabel('Value 2 of plant').fill('another-secret-value')
      await form.getByRole('button', { name: 'Replace credentials of plant' }).click()
      await page.locator('#cred-error-plant').waitFor()
      assert.match(await page.locator('#cred-error-plant').innerText(), /^Credentials of plant were not saved: credential key names are/)
      assert.equal(await form.getByLabel('Key name 2 of plant').inputValue(), 'bad key!')
      assert.equal(await form.getByLabel('Value 2 of plant').inputValue(), '')
      assert.ok(!(await page.content()).includes('another-secret-value'))
      assert.deepEqual((await server.services.credentials.status(server.workspace.id, 'plant')).keys, ['password'])

      // Clearing them.
      await page.getByRole('button', { name: 'Clear credentials of plant' }).click()
      await page.waitForURL(/\?cleared=plant$/)
      assert.equal(await row('plant').locator('.badge').last().innerText(), 'not set')
      assert.equal((await server.services.credentials.status(server.workspace.id, 'plant')).set, false)

      // Credentials of a connection removed from the configuration are listed so they can be cleared.
      const admin = server.accounts.admin
      await server.services.credentials.set({ id: admin.id, name: admin.name, via: 'cli' }, server.workspace.id, 'historian', {
        password: SECRET,
      })
      const current = await server.services.config.current(server.workspace.id)
      await applyAsAdmin(server, { ...current.document, connections: current.document.connections.filter((c) => c.lookup !== 'historian') })
      await page.goto(`${server.baseUrl}/portal/connections`)
      assert.match(await page.locator('tr[data-orphaned="historian"]').innerText(), /historian\s+set\s+keys: password/)
      assert.ok(!(await page.content()).includes(SECRET))
      await page.getByRole('button', { name: 'Clear credentials of historian' }).click()
      await page.waitForURL(/\?cleared=historian$/)
      assert.equal(await page.locator('tr[data-orphaned]').count(), 0)
    })

    it('counts the rows pushed through the API on push connections too (issue 18 item 5)', async () => {
      const token = await server.token('editor')
      const rowsOf = async (lookup: string) => {
        await page.goto(`${server.baseUrl}/portal/connections`)
        return page.locator(`tr[data-connection="${lookup}"] td.num`).innerText()
      }
      await signIn(page, server, 'admin', '/portal/connections')
      const before = Number(await rowsOf('sensors'))
      const meters = await rowsOf('meters')
      const pushed = await server.api('POST', '/oi-api/ingest/data-connections/sensors', { token, body: sensorRows(7) })
      assert.equal(pushed.status, 200, pushed.text)
      const ndjson = sensorRows(3, Date.parse('2026-02-01T00:00:00Z'))
        .map((r) => JSON.stringify(r))
        .join('\n')
      const more = await server.api('POST', '/oi-api/ingest/data-connections/sensors', {
        token,
        rawBody: ndjson,
        headers: { 'content-type': 'application/x-ndjson' },
      })
      assert.equal(more.status, 200, more.text)
      assert.equal(Number(await rowsOf('sensors')), before + 10)
      // A refused batch (a row that does not fit) stores nothing and counts nothing.
      const refused = await server.api('POST', '/oi-api/ingest/data-connections/sensors', {
        token,
        body: [{ timestamp: 'soon', sensor: 's', value: 1 }],
      })
      assert.equal(refused.status, 400)
      assert.equal(Number(await rowsOf('sensors')), before + 10)
      assert.equal(await rowsOf('meters'), meters, 'the other push connection is unchanged')
    })

    it("is an admin's page only: others get 403 for the page and for a forged form", async () => {
      const approver = await signedIn(server, 'approver')
      assert.equal((await approver.get('/portal/connections')).status, 403)
      const forged = await approver.post('/portal/connections/plant/credentials', { key: 'password', value: 'planted' })
      assert.equal(forged.status, 403)
      assert.match(forged.text, /Your role \(approver\) does not include connections:manage/)
      const admin = await signedIn(server, 'admin')
      const noToken = await admin.post('/portal/connections/plant/credentials', { key: 'password', value: 'planted' }, { omitCsrf: true })
      assert.equal(noToken.status, 403)
      assert.equal((await server.services.credentials.status(server.workspace.id, 'plant')).set, false)
      const unknown = await admin.post('/portal/connections/nope/credentials', { key: 'password', value: 'x' })
      assert.equal(unknown.status, 404)
      assert.match(unknown.text, /no connection nope in this workspace/)
    })
  })
}
