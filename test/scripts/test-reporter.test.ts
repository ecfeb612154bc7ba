/**
 * The test summary is honest (issue 18 item 4): node's counts and exit code unchanged, a skipped
 * prerequisite counted as skipped with its reason once, a known todo listed as a todo and never in
 * the failure block. Runs node's real runner with the project's reporter on small fixture files.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'

const reporter = new URL('../../scripts/test-reporter.mjs', import.meta.url).pathname

function runReporter(files: Record<string, string>): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'reporter-'))
  after(() => rmSync(dir, { recursive: true, force: true }))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  const run = spawnSync(process.execPath, ['--test', '--test-concurrency=2', `--test-reporter=${reporter}`, ...Object.keys(files)], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', NODE_TEST_CONTEXT: undefined },
  })
  return { status: run.status, out: run.stdout + run.stderr }
}

describe('the test reporter', () => {
  it('counts a missing prerequisite as skipped, with its reason once, and a todo as a todo', () => {
    const { status, out } = runReporter({
      'a.test.mjs': `import { test } from 'node:test'
test('works', () => {})
test('needs pg 1', { skip: 'PostgreSQL not reachable' }, () => {})
test('needs pg 2', { skip: 'PostgreSQL not reachable' }, () => {})
test('known gap', { todo: 'hash_combine is not documented' }, () => { throw new Error('still wrong') })
`,
    })
    assert.equal(status, 0, out)
    assert.match(out, /tests 4 · suites 0 · pass 1 · fail 0 · cancelled 0 · skipped 2 · todo 1/)
    assert.match(out, /2 × PostgreSQL not reachable/)
    assert.equal(out.split('2 × PostgreSQL not reachable').length, 2, 'the reason is printed once')
    assert.match(out, /known todo \(1; counted as todo, not as failures\)/)
    assert.match(out, /known gap: hash_combine is not documented \(still fails\)/)
    assert.doesNotMatch(out, /failures \(/)
    assert.doesNotMatch(out, /still wrong/, 'a todo’s error is not printed as a failure')
  })

  it('keeps node’s exit code and prints each real failure with its error', () => {
    const { status, out } = runReporter({
      'b.test.mjs': `import { test } from 'node:test'
import assert from 'node:assert/strict'
test('adds', () => { assert.equal(1 + 1, 3) })
test('fine', () => {})
`,
    })
    assert.equal(status, 1)
    assert.match(out, /failures \(1\)\n✖ .*b\.test\.mjs › adds/)
    assert.match(out, /Expected values to be strictly equal/)
    assert.match(out, /tests 2 · suites 0 · pass 1 · fail 1/)
  })

  it('prints every file’s results under that file’s name when files run side by side', () => {
    const slowFirst = `import { test } from 'node:test'
test('slow one', async () => { await new Promise((r) => setTimeout(r, 400)) })
`
    const fastSecond = `import { test } from 'node:test'
test('fast one', () => {})
`
    const { status, out } = runReporter({ 'slow.test.mjs': slowFirst, 'fast.test.mjs': fastSecond })
    assert.equal(status, 0, out)
    assert.match(out, /slow\.test\.mjs\n\s+✔ slow one/)
    assert.match(out, /fast\.test\.mjs\n\s+✔ fast one/)
  })
})
