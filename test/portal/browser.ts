/**
 * @module
 * Headless Chromium for the portal's browser tests: playwright-core driving Debian's `chromium`
 * (installed by .ci/run when missing) with a fresh profile directory per browser, sandbox and
 * background networking off. Screenshots go to docs/screenshots/ when PROVENANT_SCREENSHOTS=1
 * (so ordinary runs leave the tree clean), else to a temporary directory.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
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

export async function openBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'provenant-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
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
    viewport: { width: 1366, height: 860 },
    locale: 'en-GB',
    timezoneId: 'UTC',
  })
  context.setDefaultTimeout(15_000)
  return {
    context,
    newPage: () => context.newPage(),
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
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
