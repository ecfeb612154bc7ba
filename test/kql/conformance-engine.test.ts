/**
 * @module
 * The shared KQL conformance cases and our own cases (test/kql/cases/*.json), run in-process.
 * Only failures not listed in known-failures.json fail the test; the summary lists every case.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadCases, loadKnownFailures, loadOwnCases, locateSharedCases, runCases, type Summary } from './conformance-harness.js'

function report(title: string, total: number, s: Summary): void {
  console.log(`\n${title}: ${s.passed} passed, ${s.failed} failed of ${total}`)
  for (const line of s.lines) if (!line.startsWith('pass')) console.log(`  ${line}`)
  if (s.fixed.length > 0) console.log(`  now passing, remove from known-failures.json: ${s.fixed.join(', ')}`)
}

test('shared conformance cases (cases.json)', async (t) => {
  const path = locateSharedCases()
  if (!path) {
    if (process.env.CI === 'true') assert.fail('shared conformance cases not found (set PROVENANT_KQL_CASES)')
    t.skip('shared conformance cases not found: set PROVENANT_KQL_CASES or provide ../shared/kql/cases.json')
    return
  }
  const cases = loadCases(path)
  const summary = await runCases(cases, loadKnownFailures())
  report(`shared cases (${path})`, cases.length, summary)
  assert.deepEqual(
    summary.unexpected.map((u) => `${u.id}: ${u.diff}`),
    [],
  )
})

test('own conformance cases (test/kql/cases)', async () => {
  const cases = loadOwnCases()
  const ids = new Set<string>()
  for (const c of cases) {
    assert.ok(!ids.has(c.id), `duplicate case id ${c.id}`)
    ids.add(c.id)
  }
  const summary = await runCases(cases, loadKnownFailures(), true)
  report('own cases (column types checked too)', cases.length, summary)
  assert.deepEqual(
    summary.unexpected.map((u) => `${u.id}: ${u.diff}`),
    [],
  )
})
