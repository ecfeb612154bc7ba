/**
 * The ingest-compaction bench in short form (issue 16; bench/scenarios/ingest-compaction.ts): a
 * fresh server takes 20,000 rows over HTTP from three concurrent clients in batches of 5,000 with
 * the columnar tier on and the compactor running while they arrive (the tier-off baseline is the
 * bench's). Asserts behaviour only: every request is acknowledged (the run throws otherwise), and
 * once the tail is empty the segments hold every row exactly once and match the manifest. Rates
 * are the bench's (docs/benchmarks.md).
 * PostgreSQL when reachable (the scale-out backend), else SQLite.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { measureIngestCompaction } from '../../bench/scenarios/ingest-compaction.js'
import { BACKENDS } from '../support/backends.js'

const backend = BACKENDS.includes('postgres') ? 'postgres' : 'sqlite'
const ROWS = 20_000

describe(`${backend}: ingest over HTTP with the compactor running (smoke)`, () => {
  it('acknowledges every batch; the compactor then holds every row once in segments that match the manifest', async () => {
    const { on } = await measureIngestCompaction({ rows: ROWS, clients: 3, rounds: 1, backend, baseline: false, settleMs: 0 }, (line) =>
      console.log(`# ${line}`),
    )
    const run = on[0]!
    assert.equal(run.compactedRows, ROWS, 'the segments hold every row once')
    assert.equal(run.checkProblems, 0, 'no segment file missing or with another row count')
    assert.ok(run.segments! >= 1)
  })
})
