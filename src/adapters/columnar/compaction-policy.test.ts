/**
 * The columnar compactor's policy (compaction-policy.ts): when a tail is compacted (full, aged with
 * enough rows, forced) and which segments merge, with the rewrite bound that makes merges cheap
 * checked over random arrival sequences.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { AGED_TAIL_DIVISOR, chooseMerge, compactionDue, MERGE_FAN_IN } from './compaction-policy.js'

const SEGMENT = 1_000_000
const settings = { segmentRows: SEGMENT, tailAgeMs: 60_000 }
const NOW = 1_800_000_000_000

describe('compactionDue', () => {
  it('a full tail is due whatever its age; an empty one never', () => {
    assert.equal(compactionDue({ rows: SEGMENT, oldestIngestedAt: NOW }, settings, NOW), 'full')
    assert.equal(compactionDue({ rows: 0, oldestIngestedAt: undefined }, settings, NOW, true), undefined)
  })

  it('a tail not full waits until its oldest row is tailAgeMs old', () => {
    const tail = { rows: SEGMENT / 2, oldestIngestedAt: NOW - 59_999 }
    assert.equal(compactionDue(tail, settings, NOW), undefined)
    assert.equal(compactionDue(tail, settings, NOW + 1), 'age')
  })

  it('an old tail of fewer than segmentRows / 1,000 rows stays in the row store (a query reads it in a millisecond)', () => {
    const few = SEGMENT / AGED_TAIL_DIVISOR
    assert.equal(compactionDue({ rows: few - 1, oldestIngestedAt: 0 }, settings, NOW), undefined)
    assert.equal(compactionDue({ rows: few, oldestIngestedAt: 0 }, settings, NOW), 'age')
    assert.equal(compactionDue({ rows: 1, oldestIngestedAt: NOW }, settings, NOW, true), 'forced', 'forced: any rows')
  })
})

const sized = (...rows: number[]) => rows.map((rowCount) => ({ rowCount }))

describe('chooseMerge', () => {
  it('merges MERGE_FAN_IN similar small segments, not fewer', () => {
    const seven = sized(...Array.from({ length: MERGE_FAN_IN - 1 }, () => 30_000))
    assert.equal(chooseMerge(seven, SEGMENT), undefined)
    assert.deepEqual(chooseMerge([...seven, { rowCount: 30_000 }], SEGMENT), [0, MERGE_FAN_IN])
  })

  it('merges fewer when they make half a segment, and never past a full one', () => {
    assert.deepEqual(chooseMerge(sized(240_000, 240_000, 30_000), SEGMENT), [0, 3])
    assert.deepEqual(chooseMerge(sized(400_000, 400_000, 300_000), SEGMENT), [0, 2], 'the third would pass segmentRows')
  })

  it('never rewrites a full segment, or a large one with a few small ones', () => {
    assert.equal(chooseMerge(sized(SEGMENT, SEGMENT / 2, SEGMENT), SEGMENT), undefined)
    assert.equal(chooseMerge(sized(400_000, 1_000, 1_000, 1_000), SEGMENT), undefined, 'the 400,000 rows would be rewritten for 3,000')
    assert.deepEqual(chooseMerge(sized(SEGMENT, 400_000, ...Array(MERGE_FAN_IN).fill(1_000)), SEGMENT), [2, 2 + MERGE_FAN_IN])
  })

  it('over any arrival sequence: merged segments stay within segmentRows, a row is rewritten fewer than log2(segmentRows / s) times, few small segments wait', () => {
    // each segment carries, per original segment in it, that segment's size and its rows' rewrites
    type Tracked = { rowCount: number; origins: { size: number; rewrites: number }[] }
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 1, max: SEGMENT })), { minLength: 1, maxLength: 300 }),
        (arrivals) => {
          const list: Tracked[] = []
          for (const size of arrivals) {
            list.push({ rowCount: size, origins: [{ size, rewrites: 0 }] })
            for (let picked = chooseMerge(list, SEGMENT); picked; picked = chooseMerge(list, SEGMENT)) {
              const run = list.slice(...picked)
              const merged = {
                rowCount: run.reduce((n, s) => n + s.rowCount, 0),
                origins: run.flatMap((s) => s.origins.map((o) => ({ size: o.size, rewrites: o.rewrites + 1 }))),
              }
              assert.ok(merged.rowCount <= SEGMENT)
              list.splice(picked[0], picked[1] - picked[0], merged)
            }
          }
          for (const s of list)
            for (const o of s.origins)
              assert.ok(o.rewrites < Math.max(1, Math.log2(SEGMENT / o.size)), `${o.rewrites} rewrites of a ${o.size}-row segment`)
          // a run of small segments left unmerged: fewer than MERGE_FAN_IN plus one per halving
          let run = 0
          for (const s of list) {
            run = s.rowCount * 2 < SEGMENT ? run + 1 : 0
            assert.ok(run < MERGE_FAN_IN + Math.log2(SEGMENT), `${run} small segments in a row`)
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})
