/**
 * Conformance through the server (issue 3 item 7): per backend, a real server, a token with
 * queries:run, and the shared runner (/work/shared/kql/runner.mjs) as a child process against
 * POST /oi-api/warm-queries — the shared cases, our own cases (test/kql/cases), and our cases over
 * real workspace tables (test/kql/table-cases: rows ingested through the ingest service, queried
 * with pushdown in SQL where it applies).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, describe, it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { stringifyExact } from '../../src/shared/exact-json.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'
import { loadCases, loadKnownFailures, loadOwnCases, locateSharedCases } from './conformance-harness.js'
import { READINGS_ROWS, SITES_ROWS, TABLE_CASES_CONFIG } from './table-cases/fixture.js'

const run = promisify(execFile)
const here = dirname(fileURLToPath(import.meta.url))

interface RunnerReport {
  readonly passed: number
  readonly failed: number
  readonly results: readonly { readonly id: string; readonly ok: boolean; readonly diff?: string }[]
}

/** Runs the shared runner on a case file; returns its last line and its JSON report. */
async function runRunner(
  runner: string,
  server: TestServer,
  token: string,
  cases: string,
  work: string,
): Promise<{ last: string; report: RunnerReport }> {
  const json = join(work, `report-${Date.now()}.json`)
  let stdout: string
  try {
    ;({ stdout } = await run(
      process.execPath,
      [runner, '--base-url', server.baseUrl, '--token', token, '--cases', cases, '--json', json, '--concurrency', '4'],
      { maxBuffer: 16 << 20 },
    ))
  } catch (error) {
    // the runner exits 1 when a case fails: its output is still the answer
    stdout = (error as { stdout?: string }).stdout ?? ''
  }
  const lines = stdout.trim().split('\n')
  return { last: lines[lines.length - 1] ?? '', report: JSON.parse(readFileSync(json, 'utf8')) as RunnerReport }
}

function unexpectedFailures(report: RunnerReport, known: Record<string, string>): string[] {
  return report.results.filter((r) => !r.ok && known[r.id] === undefined).map((r) => `${r.id}: ${r.diff ?? ''}`)
}

const sharedCases = locateSharedCases()
const runnerPath = sharedCases ? join(dirname(sharedCases), 'runner.mjs') : undefined

/** Runs the table cases (test/kql/table-cases/readings.json) through the shared runner against `server`: every case passes. */
async function runTableCases(t: TestContext, server: TestServer, token: string, work: string): Promise<void> {
  if (!runnerPath || !existsSync(runnerPath)) {
    if (process.env.CI === 'true') assert.fail('the shared runner was not found (set PROVENANT_KQL_CASES)')
    t.skip('the shared runner was not found')
    return
  }
  const file = join(here, 'table-cases', 'readings.json')
  const cases = loadCases(file)
  const { last, report } = await runRunner(runnerPath, server, token, file, work)
  assert.deepEqual(
    report.results.filter((r) => !r.ok).map((r) => `${r.id}: ${r.diff ?? ''}`),
    [],
  )
  assert.equal(last, `${cases.length} passed, 0 failed`)
}

for (const backend of BACKENDS) {
  describe(`${backend}: KQL conformance through the server (shared runner)`, () => {
    let server: TestServer
    let token: string
    let work: string
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, TABLE_CASES_CONFIG)
      await pushRows(server, 'readings', [...READINGS_ROWS])
      await pushRows(server, 'sites', [...SITES_ROWS])
      token = await server.token('analyst', { rights: ['queries:run'] })
      work = mkdtempSync(join(tmpdir(), 'provenant-conformance-'))
    })
    after(async () => {
      await server.stop()
      rmSync(work, { recursive: true, force: true })
    })

    it('the shared cases: every one passes (or is a listed known failure)', async (t) => {
      if (!sharedCases || !runnerPath || !existsSync(runnerPath)) {
        if (process.env.CI === 'true') assert.fail('shared conformance cases or runner not found (set PROVENANT_KQL_CASES)')
        t.skip('shared conformance cases not found: set PROVENANT_KQL_CASES or provide ../shared/kql/')
        return
      }
      const total = loadCases(sharedCases).length
      const known = loadKnownFailures()
      const { last, report } = await runRunner(runnerPath, server, token, sharedCases, work)
      assert.deepEqual(unexpectedFailures(report, known), [])
      const knownFailing = report.results.filter((r) => !r.ok).length
      assert.equal(last, `${total - knownFailing} passed, ${knownFailing} failed`)
      assert.equal(knownFailing, 0, 'known-failures.json lists none of the shared cases today')
    })

    it('our own cases (test/kql/cases) pass through HTTP too', async (t) => {
      if (!runnerPath || !existsSync(runnerPath)) {
        if (process.env.CI === 'true') assert.fail('the shared runner was not found (set PROVENANT_KQL_CASES)')
        t.skip('the shared runner was not found')
        return
      }
      const cases = loadOwnCases()
      const file = join(work, 'own-cases.json')
      writeFileSync(file, stringifyExact(cases))
      const { last, report } = await runRunner(runnerPath, server, token, file, work)
      assert.deepEqual(unexpectedFailures(report, loadKnownFailures()), [])
      assert.equal(last, `${cases.length} passed, 0 failed`)
    })

    it('cases over real workspace tables, with pushdown into SQL where it applies', async (t) => {
      await runTableCases(t, server, token, work)
    })
  })
}

for (const backend of BACKENDS) {
  describe(`${backend}: table cases on the columnar tier (DuckDB over Parquet segments + row-store tail)`, () => {
    let server: TestServer
    let token: string
    let work: string
    before(async () => {
      work = mkdtempSync(join(tmpdir(), 'provenant-conformance-columnar-'))
      server = await startTestServer(backend, {
        dataDir: work,
        config: { columnar: { dir: join(work, 'segments'), threads: 1, memoryLimit: '256MB', segmentRows: 1000, intervalMs: 3_600_000 } },
      })
      // a generous time cap: these cases check answers, and the runner sends four at a time to one account
      await applyAsAdmin(server, { ...TABLE_CASES_CONFIG, settings: { queries: { rowCap: 10_000, timeoutSeconds: 300 } } })
      // readings in segments, sites left in the row store (the tail): both paths answer
      await pushRows(server, 'readings', [...READINGS_ROWS])
      await server.runtime.columnar!.compactAll()
      await pushRows(server, 'sites', [...SITES_ROWS])
      token = await server.token('analyst', { rights: ['queries:run'] })
      // the query workers start in the background: the runner's own 60 s timeout starts after they are up
      const warm = await server.api('POST', '/oi-api/warm-queries', { token, body: { Query: 'Sites | count' } })
      assert.equal(warm.status, 200, warm.text)
    })
    after(async () => {
      await server.stop()
      rmSync(work, { recursive: true, force: true })
    })

    it('every table case answers as on the row store', async (t) => {
      await runTableCases(t, server, token, work)
    })
  })
}
