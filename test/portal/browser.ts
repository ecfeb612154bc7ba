/**
 * @module
 * Headless Chromium for the portal's browser tests: playwright-core driving Debian's `chromium`
 * (installed by .ci/run when missing), sandbox and background networking off. One Chromium process
 * per test file; each `openBrowser()` is a fresh browser context in it (its own cookies, storage and
 * permissions, as a fresh profile would be), so a file's backends and second persons no longer pay
 * a Chromium start each (seconds on a loaded machine). Screenshots go to docs/screenshots/ when
 * PROVENANT_SCREENSHOTS=1 (so ordinary runs leave the tree clean), else to a temporary directory.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { fileURLToPath } from 'node:url'
import { type BrowserContext, type Browser as Chromium, chromium, type Page } from 'playwright-core'
import { PASSWORD } from './portal-client.js'

export const CHROMIUM_PATH = process.env['PROVENANT_CHROMIUM'] ?? '/usr/bin/chromium'

/** Undefined when Chromium can run here; otherwise why not (a failure in CI, a skip elsewhere). */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined
  const reason = `Chromium not found at ${CHROMIUM_PATH} (apt-get install chromium, or set PROVENANT_CHROMIUM)`
  if (process.env['CI'] === 'true') throw new Error(reason)
  return reason
}

export interface Browser {
  readonly context: BrowserContext
  newPage(): Promise<Page>
  close(): Promise<void>
}

let shared: Promise<Chromium> | undefined

/** The file's Chromium, started on first use and closed when the file's tests are done. */
function sharedChromium(): Promise<Chromium> {
  if (!shared) {
    shared = chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-dev-shm-usage',
      ],
    })
  }
  return shared
}

// Registered as this module loads, at the top level of the importing test file: runs once all its
// tests have finished (a hook registered while a suite runs would belong to that suite instead).
after(async () => {
  await shared?.then(
    (chromium) => chromium.close(),
    () => {}, // the launch failure already failed the tests that needed it
  )
})

/** A fresh browser context (a person with an empty profile) in the file's Chromium. */
export async function openBrowser(): Promise<Browser> {
  const context = await (await sharedChromium()).newContext({
    viewport: { width: 1366, height: 860 },
    locale: 'en-GB',
    timezoneId: 'UTC',
  })
  context.setDefaultTimeout(15_000)
  return {
    context,
    newPage: () => context.newPage(),
    close: () => context.close(),
  }
}

const DOCS_SCREENSHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url))
const keepScreenshots = process.env['PROVENANT_SCREENSHOTS'] === '1'
const screenshotDir = keepScreenshots ? DOCS_SCREENSHOTS : mkdtempSync(join(tmpdir(), 'provenant-screens-'))
// a test run's screenshots are only for that run (PROVENANT_SCREENSHOTS=1 writes docs/screenshots/)
if (!keepScreenshots) process.once('exit', () => rmSync(screenshotDir, { recursive: true, force: true }))

/** Saves a full-page screenshot named `<name>.png`; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true })
  const path = join(screenshotDir, `${name}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

/** Signs in as the role's test account through the sign-in form (ending whatever session the browser had). */
export async function signIn(
  page: Page,
  server: { baseUrl: string; workspace: { name: string } },
  role: string,
  path = '/portal/',
): Promise<void> {
  await page.context().clearCookies()
  await page.goto(`${server.baseUrl}${path}`)
  await page.getByLabel('Account name').fill(`${role}@${server.workspace.name}`)
  await page.getByLabel('Password').fill(PASSWORD(role))
  await page.getByLabel('Password').press('Enter')
  await page.waitForURL((url) => !url.pathname.endsWith('/sign-in'))
}
