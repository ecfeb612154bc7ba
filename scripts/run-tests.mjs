#!/usr/bin/env node
// Runs every test file with node's own runner. Node 20 does not expand `**` globs, so the file
// list is built here and passed explicitly (design §3). Optional arguments filter the files by
// substring: `node scripts/run-tests.mjs kql ledger`.
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'

const root = new URL('..', import.meta.url).pathname

function collect(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue
    const full = join(dir, name)
    if (statSync(full).isDirectory()) collect(full, out)
    else if (name.endsWith('.test.ts')) out.push(relative(root, full))
  }
  return out
}

// The longest suites start first (longest-first scheduling): with two runners, a long file picked
// up last leaves one core idle while it finishes. Taken from the reporter's "slowest files" list;
// a file not named here keeps its alphabetical place after them.
const LONGEST_FIRST = [
  'test/scale/',
  'test/portal/',
  'test/fuzz/',
  'test/docs/readme-examples',
  'test/http/mcp-conformance',
  'test/cli/',
  'test/kql/pushdown-differential',
  // about a minute each on a loaded machine: left in their alphabetical place, one of them could be
  // the last file of one runner while the other runner sits idle
  'test/kql/conformance-server',
  'test/adapters/connectors/postgres-connector',
  'test/http/activity-log-t',
  'test/security/',
]
const rank = (file) => {
  const i = LONGEST_FIRST.findIndex((prefix) => file.startsWith(prefix))
  return i === -1 ? LONGEST_FIRST.length : i
}

const filters = process.argv.slice(2)
const files = [...collect(join(root, 'src'), []), ...collect(join(root, 'test'), [])]
  .filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)))
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))

if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ') || '(all)'}`)
  process.exit(1)
}

// Two files at a time: most suites wait on databases, child servers and browsers rather than on
// the CPU, so two in parallel halve the wall time on a 2-core machine without starving either.
// PROVENANT_TEST_CONCURRENCY=1 runs them one by one (e.g. to read a failing file's output in order).
const concurrency = process.env['PROVENANT_TEST_CONCURRENCY'] ?? '2'
// Every temporary file the tests make goes under one directory of this run, so what a test forgets
// to clean up is found and named (tests clean up after themselves; the list below says who did not).
const runTmp = mkdtempSync(join(tmpdir(), 'provenant-test-run-'))
// others may pass through (not list): the MQTT suite's broker drops root for its own user and must
// reach the password file in its (private) directory below this one
chmodSync(runTmp, 0o711)
// tsx keeps its transform cache (and its IPC pipes) in the temporary directory: link the usual one
// in, so a run keeps the warm cache of the last and the leftovers below are only the tests' own.
const tsxCache = `tsx-${process.getuid?.() ?? 0}`
mkdirSync(join(tmpdir(), tsxCache), { recursive: true, mode: 0o700 })
symlinkSync(join(tmpdir(), tsxCache), join(runTmp, tsxCache))
const result = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'scripts/run-test-files.mjs'), ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: 'test', TMPDIR: runTmp, PROVENANT_TEST_CONCURRENCY: concurrency },
})
const leftovers = readdirSync(runTmp).filter((name) => name !== tsxCache)
if (leftovers.length > 0) {
  console.log(`# ${leftovers.length} temporary entries left behind by tests (removed now): ${leftovers.slice(0, 20).join(', ')}`)
}
rmSync(runTmp, { recursive: true, force: true })
process.exit(result.status ?? 1)
