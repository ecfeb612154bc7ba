/**
 * Issue 18, item 3: a first run without rough edges. The server's own address leads to the portal,
 * and the demo's sign-ins stay findable after the first start: written once to a 0600 file in the
 * data directory, which every later `--demo` start names together with how to reset a password.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import pino from 'pino'
import { loadConfig } from '../../src/config/config.js'
import { DEMO_SIGN_INS_FILE, seedDemo } from '../../src/demo/seed-demo.js'
import { createRuntime } from '../../src/main.js'
import { startTestServer, TEST_SCRYPT, type TestServer } from '../support/test-server.js'

describe('the server address opens the portal', () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite')
  })
  after(() => server.stop())

  it('redirects GET / to /portal/ and leaves the API untouched', async () => {
    const response = await fetch(`${server.baseUrl}/`, { redirect: 'manual' })
    assert.equal(response.status, 302)
    assert.equal(response.headers.get('location'), '/portal/')
    const api = await fetch(`${server.baseUrl}/oi-api/warm-queries/x`)
    assert.equal(api.status, 401)
  })
})

describe('the demo sign-ins stay findable', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'provenant-demo-'))
  after(() => rmSync(dataDir, { recursive: true, force: true }))

  it('writes them once to a 0600 file the start message names, and names it again on every later start', async () => {
    const runtime = await createRuntime(loadConfig({ data: dataDir, port: 0 }, {}), {
      logger: pino({ level: 'silent' }),
      scryptCost: TEST_SCRYPT,
    })
    try {
      const options = { publicUrl: 'http://127.0.0.1:8080', cliArgs: ` --data ${dataDir}`, dataDir }
      const first = await seedDemo(runtime.services, options)
      const file = join(dataDir, DEMO_SIGN_INS_FILE)
      assert.equal(statSync(file).mode & 0o777, 0o600)
      const printed = first!.instructions.filter((line) => /^ {4}(admin|analyst|approver) /.test(line))
      assert.equal(printed.length, 3)
      const kept = readFileSync(file, 'utf8')
      for (const line of printed) assert.ok(kept.includes(line), `${line} is kept in the file`)
      assert.ok(first!.instructions.some((line) => line.includes(file)))

      const again = await seedDemo(runtime.services, options)
      const text = again!.instructions.join('\n')
      assert.ok(text.includes(file), text)
      assert.match(text, /account set-password NAME --data /)
      // The passwords themselves are printed only once.
      for (const line of printed) assert.ok(!text.includes(line.trim().split(/\s+/)[1]!))
    } finally {
      await runtime.close()
    }
  })
})

describe('npm install on the supported Node prints no engine warnings', () => {
  it('every locked package admits the Node version package.json supports (npm warns EBADENGINE otherwise)', () => {
    const require = createRequire(import.meta.url)
    const semver = require('semver') as { minVersion(range: string): { version: string }; satisfies(v: string, r: string): boolean }
    const root = new URL('../../', import.meta.url)
    const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } }
    const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
      packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>
    }
    const oldest = semver.minVersion(manifest.engines.node).version
    const refusing = Object.entries(lock.packages)
      .filter(([, p]) => p.engines && !Array.isArray(p.engines) && p.engines.node && !semver.satisfies(oldest, p.engines.node))
      .map(([path, p]) => `${path}@${p.version} wants node ${(p.engines as { node: string }).node}`)
    assert.deepEqual(refusing, [], `Node ${oldest} (package.json engines) is refused by: ${refusing.join('; ')}`)
  })
})
