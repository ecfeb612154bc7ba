/**
 * Issue 18 item 2 in a real browser (headless Chromium) on every backend: the activity log's
 * default view, the Platform-Config container where every API call lands, stays readable with a
 * full page of 50 records at 1280 and 1920 px wide and on a phone (390 px). The layout facts are
 * measured in the browser: the page never scrolls sideways, the Action cell wraps inside a bounded
 * width, the Details column keeps a usable width and opens on demand, and 50 records fit on a few
 * screens. Screenshots: docs/screenshots/activity-log-{1280,1920,phone}.png.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'
import { type Browser, chromiumMissing, openBrowser, screenshot, signIn } from './browser.js'

const skip = chromiumMissing()

/** Real API calls with the long route templates that make the Action column wide. */
async function makeCalls(server: TestServer): Promise<void> {
  const analyst = await server.token('analyst')
  const admin = await server.token('admin')
  const calls: [string, string, string, unknown?][] = [
    ['GET', '/oi-api/warm-queries/plant/hall/avg', analyst],
    ['GET', '/oi-api/audit-logs/plant-1/events/export?format=json', analyst],
    ['GET', '/oi-api/provenance/events/export?format=csv&scopeKey=plant-1', analyst],
    ['POST', '/oi-api/warm-queries', analyst, { Query: 'Sensors | summarize avg(value) by sensor, bin(timestamp, 1h)' }],
    ['POST', '/oi-api/provenance/amendments/amd_nonexistent/approve?scopeKey=plant-1', admin, {}],
    ['GET', '/oi-api/openapi', admin],
    ['POST', '/oi-api/connections/sensors/rows', admin, { rows: sensorRows(3) }],
  ]
  for (let i = 0; i < 63; i++) {
    const [method, path, token, body] = calls[i % calls.length]!
    await server.api(method, path, { token, unchecked: true, ...(body !== undefined ? { body } : {}) })
  }
}

interface Layout {
  readonly viewportWidth: number
  readonly viewportHeight: number
  readonly pageScrollWidth: number
  readonly pageHeight: number
  readonly rows: number
  /** Widest Action cell, and whether any Action cell's text overflows its box. */
  readonly actionMaxWidth: number
  readonly actionOverflows: boolean
  /** Narrowest Details cell. */
  readonly detailsMinWidth: number
  /** The records table's own width against its scrolling wrapper (a hidden sideways scroll). */
  readonly tableScrollWidth: number
  readonly wrapClientWidth: number
}

async function measure(page: Page): Promise<Layout> {
  return page.evaluate(`(() => {
    const cells = (selector) => [...document.querySelectorAll(selector)]
    const actions = cells('table.activity-records td.action')
    const details = cells('table.activity-records td.details')
    const table = document.querySelector('table.activity-records')
    return {
      viewportWidth: document.documentElement.clientWidth,
      viewportHeight: window.innerHeight,
      pageScrollWidth: document.documentElement.scrollWidth,
      pageHeight: document.documentElement.scrollHeight,
      rows: cells('table.activity-records tbody tr').length,
      actionMaxWidth: Math.max(...actions.map((c) => c.getBoundingClientRect().width)),
      actionOverflows: actions.some((c) => c.scrollWidth > c.clientWidth + 1),
      detailsMinWidth: Math.min(...details.map((c) => c.getBoundingClientRect().width)),
      tableScrollWidth: table.scrollWidth,
      wrapClientWidth: table.parentElement.clientWidth,
    }
  })()`) as Promise<Layout>
}

const VIEWPORTS = [
  { name: '1280', width: 1280, height: 800, maxScreens: 7, minDetails: 320 },
  { name: '1920', width: 1920, height: 1080, maxScreens: 5, minDetails: 480 },
  { name: 'phone', width: 390, height: 844, maxScreens: 12, minDetails: 300 },
] as const

for (const [index, backend] of BACKENDS.entries()) {
  const shoot = index === 0 ? screenshot : async () => ''
  describe(`${backend}: the activity log's default view stays readable with 50 API calls (issue 18)`, { skip }, () => {
    let server: TestServer
    let browser: Browser
    let page: Page
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(12))
      await makeCalls(server)
      browser = await openBrowser()
      page = await browser.newPage()
      await signIn(page, server, 'analyst', '/portal/activity')
    })
    after(async () => {
      await browser?.close()
      await server?.stop()
    })

    for (const viewport of VIEWPORTS) {
      it(`at ${viewport.width} px: no sideways scroll, the Action cell wraps, Details keeps room, 50 records in ≤ ${viewport.maxScreens} screens`, async () => {
        await page.setViewportSize({ width: viewport.width, height: viewport.height })
        await page.goto(`${server.baseUrl}/portal/activity`)
        assert.equal(await page.getByRole('heading', { level: 2, name: /^Platform-Config \(workspace\)/ }).count(), 1)
        const layout = await measure(page)
        await shoot(page, `activity-log-${viewport.name}`)
        const facts = JSON.stringify(layout)
        assert.equal(layout.rows, 50, facts)
        assert.ok(layout.pageScrollWidth <= layout.viewportWidth, `the page scrolls sideways: ${facts}`)
        assert.ok(layout.tableScrollWidth <= layout.wrapClientWidth + 1, `the table scrolls sideways inside its frame: ${facts}`)
        assert.ok(!layout.actionOverflows, `an Action cell's text overflows its box: ${facts}`)
        if (viewport.name !== 'phone') assert.ok(layout.actionMaxWidth <= 320, `the Action column is not bounded: ${facts}`)
        assert.ok(layout.detailsMinWidth >= viewport.minDetails, `the Details column is too narrow: ${facts}`)
        const screens = layout.pageHeight / layout.viewportHeight
        assert.ok(screens <= viewport.maxScreens, `50 records take ${screens.toFixed(1)} screens: ${facts}`)
        // Details open on demand, in place, and the page still does not scroll sideways.
        const first = page.locator('table.activity-records tr', { hasText: 'api-call' }).first().locator('td.details details')
        assert.equal(await first.locator('pre').isVisible(), false)
        await first.locator('summary').click()
        assert.equal(await first.locator('pre').isVisible(), true)
        assert.match(await first.locator('pre').innerText(), /"route": "\/oi-api\//)
        const opened = await measure(page)
        assert.ok(opened.pageScrollWidth <= opened.viewportWidth, `opened details push the page sideways: ${JSON.stringify(opened)}`)
        await first.locator('summary').click()
        console.log(`# ${backend} ${viewport.width}px: ${screens.toFixed(1)} screens, ${facts}`)
      })
    }
  })
}
