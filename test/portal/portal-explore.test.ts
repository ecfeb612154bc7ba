/**
 * Issue 18, item 1: the Explore page end to end in headless Chromium, on every backend, with one
 * server and one browser per backend. Completion offers the columns of visible tables and never
 * one outside the scopes the page is narrowed to; a query runs and its grid and chart render; a
 * KQL error is underlined where the server says; a long query is cancelled and stops on the server
 * (PostgreSQL: its statement leaves pg_stat_activity; both: the account's only query slot is free
 * again at once); the CSV download equals the grid; "Propose as warm query" files a proposal that
 * appears for review. The page runs under the portal's strict Content-Security-Policy: no
 * violation is reported while it works. Screenshots of each state for docs/screenshots/.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { parse } from 'csv-parse/sync'
import pg from 'pg'
import type { Page } from 'playwright-core'
import { DEMO_CONFIG } from '../../src/demo/demo-config.js'
import { syntheticReadings } from '../../src/demo/seed-demo.js'
import { BACKENDS, type Backend } from '../support/backends.js'
import { applyAsAdmin, pushRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'
import { type Browser, chromiumMissing, openBrowser, screenshot, signIn } from './browser.js'

const skip = chromiumMissing()

/** The demo configuration on the test workspace, plus a second connection the scope tests hide. */
function exploreConfig(): Record<string, unknown> {
  const { workspace: _ignored, ...demo } = DEMO_CONFIG
  return {
    ...demo,
    connections: [
      ...demo.connections,
      {
        lookup: 'energy-meters',
        kind: 'push',
        table: 'EnergyMeters',
        columns: [
          { name: 'timestamp', type: 'datetime' },
          { name: 'kwh', type: 'real' },
          { name: 'k', type: 'long' },
        ],
      },
    ],
    // a minute: only the Cancel button can end the long query sooner
    settings: { queries: { rowCap: 10_000, timeoutSeconds: 60 } },
  }
}

/**
 * A query that runs for minutes. On PostgreSQL three copies of 3,000 rows joined on one key, so the
 * statement can be watched leaving pg_stat_activity. On SQLite a query the engine evaluates itself:
 * a statement inside SQLite cannot be interrupted (better-sqlite3 has no sqlite3_interrupt; docs/
 * decisions.md), so a stopped worker would stay alive, and keep this test's process alive, until the
 * joined statement returned, minutes later.
 */
const LONG_QUERY: Record<Backend, string> = {
  postgres: 'EnergyMeters | join kind=inner (EnergyMeters) on k | join kind=inner (EnergyMeters) on k | count',
  sqlite: 'print x = array_length(series_fir(range(1, 1000000, 1), range(1, 10000, 1)))',
}

async function eventually<T>(probe: () => Promise<T>, ok: (value: T) => boolean, what: string, ms: number): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (ok(value)) return value
    if (Date.now() > until) throw new Error(`${what}: still ${JSON.stringify(value)} after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** Replaces the editor's text: pasted (typing would let completion and bracket closing join in). */
async function typeQuery(page: Page, text: string): Promise<void> {
  await page.locator('.cm-content').click()
  await page.keyboard.press('Control+A')
  await page.keyboard.press('Delete')
  if (text === '') return
  await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify(text)})`)
  await page.keyboard.press('Control+V')
  await page.locator('.cm-content', { hasText: text.split('\n').at(-1)! }).waitFor()
}

async function completions(page: Page): Promise<string[]> {
  await page.keyboard.press('Control+Space')
  const list = page.locator('.cm-tooltip-autocomplete li')
  await list.first().waitFor()
  const labels = await page.locator('.cm-tooltip-autocomplete .cm-completionLabel').allInnerTexts()
  await page.keyboard.press('Escape')
  return labels
}

/** Every cell of the rows the grid has rendered, as the grid shows them. */
async function gridRows(page: Page): Promise<string[][]> {
  return page
    .locator('#grid tbody tr:not(.pad)')
    .evaluateAll((rows) =>
      rows.map((row) =>
        Array.from((row as unknown as { cells: ArrayLike<{ textContent: string | null }> }).cells, (td) => td.textContent ?? ''),
      ),
    )
}

for (const [index, backend] of BACKENDS.entries()) {
  const shoot = index === 0 ? screenshot : async () => ''
  describe(`${backend}: the Explore page in headless Chromium (issue 18)`, { skip }, () => {
    let server: TestServer
    let browser: Browser
    let page: Page
    const violations: string[] = []

    before(async () => {
      server = await startTestServer(backend, {
        workspaceName: 'demo',
        config: { queryCapacity: { workers: 2, perCaller: 1, queueLimit: 8, perCallerQueue: 2, memoryMb: 256 } },
      })
      await applyAsAdmin(server, exploreConfig())
      const readings = syntheticReadings(Date.now())
      for (let i = 0; i < readings.length; i += 5000) await pushRows(server, 'plant-sensors', readings.slice(i, i + 5000))
      const start = Date.parse('2026-01-01T00:00:00Z')
      await pushRows(
        server,
        'energy-meters',
        Array.from({ length: 3000 }, (_, i) => ({ timestamp: new Date(start + i * 60_000).toISOString(), kwh: i / 10, k: 1 })),
      )
      browser = await openBrowser()
      await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl })
      page = await browser.newPage()
      // CSP violations and script errors both land here; the page must have none
      page.on('console', (message) => {
        if (/Content[- ]Security[- ]Policy/i.test(message.text())) violations.push(message.text())
      })
      page.on('pageerror', (error) => violations.push(`script error: ${error.message}`))
      await signIn(page, server, 'analyst', '/portal/explore')
      await page.locator('#schema-tree details').first().waitFor()
    })
    after(async () => {
      await browser?.close()
      await server?.stop()
    })

    it('keeps the strict Content-Security-Policy: no eval, no inline script, style elements only with the response nonce', async () => {
      const response = await page.request.get(`${server.baseUrl}/portal/explore`)
      const policy = response.headers()['content-security-policy'] ?? ''
      // the only difference from every other portal page: the editor's <style> element, by nonce
      const nonce = /style-src 'self' 'nonce-([A-Za-z0-9+/=]{24})';/.exec(policy)?.[1]
      assert.ok(nonce, policy)
      assert.equal(
        policy,
        `default-src 'none'; script-src 'self'; style-src 'self' 'nonce-${nonce}'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      )
      const again = (await page.request.get(`${server.baseUrl}/portal/explore`)).headers()['content-security-policy']
      assert.notEqual(again, policy, 'a new nonce for every response')
      const other = (await page.request.get(`${server.baseUrl}/portal/api-keys`)).headers()['content-security-policy']
      assert.match(other ?? '', /style-src 'self';/)
      // the page's own script and stylesheet come from /portal/assets, and there is no inline script
      const html = await page.content()
      assert.match(html, /<script src="\/portal\/assets\/explore\.[0-9a-f]{10}\.js" defer=""><\/script>/)
      assert.equal(await page.locator('script:not([src])').count(), 0)
      assert.ok(await page.locator('.cm-editor').isVisible(), 'the editor started')
      assert.deepEqual(violations, [])
    })

    it('offers the columns of the visible tables, and never a column outside the scopes the page is narrowed to', async () => {
      assert.deepEqual(await page.locator('#schema-tree summary .insert').allInnerTexts(), ['SensorReadings', 'EnergyMeters'])
      await typeQuery(page, 'SensorReadings | where ')
      const columns = await completions(page)
      assert.ok(columns.includes('temperature'), columns.join(' '))
      assert.ok(!columns.includes('kwh'), 'a table the query does not name offers no columns')
      await typeQuery(page, 'SensorReadings\n| ')
      const operators = await completions(page)
      assert.ok(operators.includes('summarize') && operators.includes('where'), operators.join(' '))
      assert.ok(!operators.includes('by') && !operators.includes('asc'), `only tabular operators follow a pipe: ${operators.join(' ')}`)
      await typeQuery(page, 'EnergyMeters | where ')
      assert.ok((await completions(page)).includes('kwh'))
      await typeQuery(page, 'Sens')
      await page.keyboard.press('Control+Space')
      await page.locator('.cm-tooltip-autocomplete').waitFor()
      await shoot(page, 'explore-completion')
      await page.keyboard.press('Escape')

      // As a token scoped to the plant sensors: the meters' table and its columns do not exist.
      await page.goto(`${server.baseUrl}/portal/explore?connections=plant-sensors`)
      await page.locator('#schema-tree details').first().waitFor()
      assert.deepEqual(await page.locator('#schema-tree summary .insert').allInnerTexts(), ['SensorReadings'])
      await typeQuery(page, 'EnergyMeters | where ')
      const scoped = await completions(page)
      assert.ok(scoped.includes('temperature'), scoped.join(' '))
      for (const hidden of ['kwh', 'EnergyMeters']) assert.ok(!scoped.includes(hidden), `${hidden} is outside the scopes`)
      await typeQuery(page, '')
      assert.deepEqual(await completions(page), ['SensorReadings'])
      // and running it says the table does not exist, underlined where the server reports it
      await typeQuery(page, 'print 1;\nEnergyMeters | take 1')
      await page.getByRole('button', { name: 'Run' }).click()
      await page.locator('#query-error').waitFor()
      assert.match(await page.locator('#query-error').innerText(), /line 2, column 1/)
      assert.equal(await page.locator('.cm-lintRange-error').count(), 1)
      await page.goto(`${server.baseUrl}/portal/explore`)
      await page.locator('#schema-tree details').first().waitFor()
    })

    it('runs a query with Ctrl+Enter: elapsed time, row count, a typed grid and a time chart; the text goes to the URL and the history', async () => {
      const text =
        'SensorReadings\n| where timestamp > ago(6h)\n| summarize avg_temperature = avg(temperature) by bin(timestamp, 15m), sensor\n| order by timestamp asc, sensor asc\n| render timechart'
      await typeQuery(page, text)
      await page.keyboard.press('Control+Enter')
      await page.locator('#run-status', { hasText: /rows? in \d+\.\d s/ }).waitFor()
      const expected = (
        await server.api('POST', '/oi-api/warm-queries', {
          token: await server.token('analyst'),
          body: { Query: text.replace(/\n/g, ' ') },
        })
      ).body
      assert.ok(expected.rowCount > 20)
      assert.equal(await page.locator('#result-summary').innerText(), `${expected.rowCount} rows, 3 columns.`)
      assert.deepEqual(await page.locator('#grid thead th').allInnerTexts(), [
        'timestamp\ndatetime',
        'sensor\nstring',
        'avg_temperature\nreal',
      ])
      const rows = await gridRows(page)
      assert.deepEqual(rows[0], [expected.results[0].timestamp, expected.results[0].sensor, String(expected.results[0].avg_temperature)])
      // the chart: one series per sensor over time
      assert.equal(await page.locator('#chart').getAttribute('data-kind'), 'timechart')
      assert.equal(await page.locator('#chart .uplot canvas').count(), 1)
      assert.deepEqual(
        (await page.locator('#chart .u-legend .u-series .u-label').allInnerTexts()).slice(1),
        [...new Set(expected.results.map((r: { sensor: string }) => r.sensor))].sort(),
      )
      assert.equal(new URL(page.url()).searchParams.get('q'), text)
      const history = JSON.parse((await page.evaluate<string | null>("localStorage.getItem('provenant.explore.history')")) ?? '[]')
      assert.equal(history[0].q, text)
      await shoot(page, 'explore-result')
      // The run is recorded like an API call.
      const log = await server.api('GET', '/oi-api/provenance/events/query?entityType=api-call&limit=200', {
        token: await server.token('admin'),
      })
      assert.ok(log.text.includes('/portal/explore/run'), 'the run is in the Platform-Config activity log')
    })

    it('shows a cut result as truncated with the cap, renders only the rows in view, and keeps long digits exact', async () => {
      await typeQuery(
        page,
        'range x from 1 to 20000 step 1 | extend big = x + 9007199254740000, note = strcat("value ", tostring(x), " ", strrep("abc", 40))',
      )
      const response = page.waitForResponse((r) => r.url().endsWith('/portal/explore/run'))
      await page.keyboard.press('Control+Enter')
      const raw = await (await response).text()
      await page.locator('#result-summary .truncated').waitFor()
      assert.match(
        await page.locator('#result-summary').innerText(),
        /^10,000 rows, 3 columns\. Truncated: the result was cut at the workspace's row cap of 10,000 rows/,
      )
      const rendered = await gridRows(page)
      assert.ok(rendered.length > 5 && rendered.length < 200, `${rendered.length} rows in the DOM for 10,000`)
      // the digits on screen are the digits the server sent, never rounded through a JS number
      const sent = /"big":(-?\d+)/.exec(raw)![1]!
      assert.equal(rendered[0]![1], sent)
      // long values are cut in the cell and open in full
      await page.locator('#grid button.cell-more').first().click()
      assert.match(await page.locator('#cell-detail-value').innerText(), /^value 1 (abc){40}$/)
      await page.locator('#grid').evaluate((grid) => {
        ;(grid as unknown as { scrollTop: number }).scrollTop = 9000 * 30
      })
      await page.locator('#grid tbody tr[data-row="9000"]').waitFor()
    })

    it('downloads CSV that equals the grid, and JSONL with the same rows', async () => {
      await typeQuery(
        page,
        'SensorReadings | order by timestamp asc, sensor asc | take 12 | project timestamp, sensor, temperature, status',
      )
      await page.keyboard.press('Control+Enter')
      await page.locator('#result-summary', { hasText: /^12 rows, 4 columns/ }).waitFor()
      const grid = await gridRows(page)
      const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
      assert.equal(csv.suggestedFilename(), 'query-result.csv')
      const [header, ...records] = parse(readFileSync((await csv.path())!, 'utf8'), { record_delimiter: '\r\n' }) as string[][]
      assert.deepEqual(header, ['timestamp', 'sensor', 'temperature', 'status'])
      assert.deepEqual(records, grid)
      const [jsonl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download JSONL' }).click()])
      const objects = readFileSync((await jsonl.path())!, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l))
      assert.equal(objects.length, 12)
      assert.deepEqual(Object.keys(objects[0]), ['timestamp', 'sensor', 'temperature', 'status'])
      assert.equal(objects[3].timestamp, grid[3]![0])
      // the curl command for programs, with a placeholder token
      await page.getByRole('button', { name: 'Copy curl' }).click()
      await page.locator('#copy-status', { hasText: 'Copied' }).waitFor()
      const command = await page.evaluate<string>('navigator.clipboard.readText()')
      assert.match(command, /^curl -X POST '.*\/oi-api\/warm-queries' -H "Authorization: Bearer \$TOKEN" /)
      assert.ok(command.includes('take 12'))
    })

    it('cancels a long query, which stops on the server', async () => {
      const activeStatements = async (): Promise<number> => {
        const client = new pg.Client({ connectionString: server.config.databaseUrl! })
        await client.connect()
        try {
          const result = await client.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'provenant-query' AND state = 'active'",
          )
          return result.rows[0].n as number
        } finally {
          await client.end()
        }
      }
      await typeQuery(page, LONG_QUERY[backend])
      await page.getByRole('button', { name: 'Run' }).click()
      await page.locator('#run-status', { hasText: /Running… [1-9]/ }).waitFor({ timeout: 30_000 })
      if (backend === 'postgres') await eventually(activeStatements, (n) => n > 0, 'the statement runs in PostgreSQL', 30_000)
      // the previous answer stays in view, marked as not this query's
      assert.match((await page.locator('#result').getAttribute('class')) ?? '', /\bstale\b/)
      await shoot(page, 'explore-running')
      await page.getByRole('button', { name: 'Cancel' }).click()
      await page.locator('#run-status', { hasText: /^Cancelled after \d+\.\d s; the server stopped the query\.$/ }).waitFor()
      assert.ok(await page.getByRole('button', { name: 'Run' }).isEnabled())
      await shoot(page, 'explore-cancelled')
      if (backend === 'postgres') await eventually(activeStatements, (n) => n === 0, 'the statement was cancelled', 45_000)
      // The analyst may run one query at a time: a query still running would hold that slot until
      // the one-minute cap, and this one would wait for it.
      const next = await server.api('POST', '/oi-api/warm-queries', { token: await server.token('analyst'), body: { Query: 'print 1' } })
      assert.equal(next.status, 200, next.text)
    })

    it('proposes the query as a warm query, which appears for review on the Proposals page', async () => {
      const text = 'SensorReadings\n| summarize readings = count() by sensor\n| render columnchart'
      await typeQuery(page, text)
      await page.keyboard.press('Control+Enter')
      await page.locator('#chart[data-kind="columnchart"] canvas').first().waitFor()
      await page.getByText('Propose as warm query').click()
      await page.getByLabel(/^Lookup/).fill('readings-per-sensor')
      await page.getByLabel(/^API path/).fill('plant/readings-per-sensor')
      await page.getByLabel(/^Description/).fill('Readings per sensor, for the maintenance dashboard.')
      await page.getByRole('button', { name: 'File the proposal' }).click()
      const link = page.locator('#propose-status a')
      await link.waitFor()
      const id = /^Proposal (prop_\S+)$/.exec(await link.innerText())![1]!
      // a short result takes only the room it needs (4 rows, no empty grid below them)
      const gridHeight = await page.locator('#grid').evaluate((grid) => (grid as unknown as { clientHeight: number }).clientHeight)
      assert.ok(gridHeight < 200, `the grid of 4 rows is ${gridHeight} px high`)
      // the whole page from its top (the side panel is sticky: scrolled down, it follows the view)
      await page.evaluate('window.scrollTo(0, 0)')
      await shoot(page, 'explore-proposed')
      const proposal = await server.services.proposals.get(server.workspace.id, id)
      assert.equal(proposal.status, 'open')
      assert.equal(proposal.via, 'portal')
      assert.deepEqual(proposal.changes, [
        {
          entity: 'warmQuery',
          action: 'create',
          lookup: 'readings-per-sensor',
          query: text,
          path: 'plant/readings-per-sensor',
          description: 'Readings per sensor, for the maintenance dashboard.',
        },
      ])
      // The answer's link opens this proposal on the Proposals page, through the sign-in page too.
      const href = (await link.getAttribute('href'))!
      const reviewer = await browser.newPage()
      await signIn(reviewer, server, 'approver', href)
      assert.equal(new URL(reviewer.url()).searchParams.get('proposal'), id)
      const article = reviewer.locator(`article#${id}`)
      assert.match((await article.getAttribute('class')) ?? '', /\bfocused\b/)
      assert.match(await article.innerText(), /readings-per-sensor/)
      assert.equal(await article.getByRole('button', { name: /Accept/ }).count(), 1)
      await reviewer.close()
      assert.deepEqual(violations, [])
    })
  })
}
