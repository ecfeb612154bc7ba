import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { appendBatch, genesisTip } from './append-batch.js'
import { createRecordHasher } from './digest.js'
import { arrayNodes, createCompactRange, treeRoot } from './merkle.js'
import { MAX_RECORD_SEQ } from './record-id.js'

const hasher = createRecordHasher('wks_test', 'scope:k')
const entry = (n: number, userId = 'acc_a') => ({
  userId,
  body: { ScopeKey: 'k', entityType: 't', entityId: `e${n}`, actionType: 'a', details: { n } },
})
const T0 = Date.parse('2026-01-01T00:00:00Z')

describe('appendBatch', () => {
  it('builds contiguous, linked records, the new head, and the compact range', () => {
    const first = appendBatch(hasher, genesisTip(hasher), createCompactRange(), [entry(1), entry(2), entry(3)], T0)
    assert.deepEqual(
      first.records.map((r) => r.recordId),
      ['000000000001', '000000000002', '000000000003'],
    )
    assert.deepEqual(first.records[0]!.prevDigest, hasher.genesis)
    assert.deepEqual(first.records[1]!.prevDigest, first.records[0]!.digest)
    for (const r of first.records) {
      assert.deepEqual(r.digest, hasher.digest(r.recordId, r.prevDigest, r.timestamp, r.userId, r.canonical))
    }
    assert.deepEqual(first.head, { seq: 3, digest: first.records[2]!.digest })
    const second = appendBatch(hasher, first.tip, first.range, [entry(4)], T0 + 5)
    assert.equal(second.records[0]!.seq, 4)
    assert.deepEqual(second.records[0]!.prevDigest, first.records[2]!.digest)
    const leaves = [...first.records, ...second.records].map((r) => r.digest)
    assert.deepEqual(second.range.root(), treeRoot(arrayNodes(leaves), 4))
    // The batch's completed Merkle nodes: leaves 3 (index), plus (1,1) and (2,0) closing at size 4.
    assert.deepEqual(
      second.completedNodes.map((n) => `${n.level}/${n.index}`),
      ['0/3', '1/1', '2/0'],
    )
  })

  it('never lets timestamps go backwards, even when the clock does', () => {
    const a = appendBatch(hasher, genesisTip(hasher), createCompactRange(), [entry(1)], T0 + 10_000)
    const b = appendBatch(hasher, a.tip, a.range, [entry(2), entry(3)], T0) // clock behind the tip
    assert.deepEqual(
      b.records.map((r) => r.timestamp),
      ['2026-01-01T00:00:10.000Z', '2026-01-01T00:00:10.000Z'],
    )
  })

  it("a bad entry fails the whole batch and leaves the caller's tip and range untouched", () => {
    const range = createCompactRange()
    const tip = genesisTip(hasher)
    const bad = { userId: 'acc_a', body: { ScopeKey: 'k', details: { x: NaN } } }
    assert.throws(() => appendBatch(hasher, tip, range, [entry(1), bad, entry(3)], T0), /NaN is not a JSON number/)
    assert.throws(() => appendBatch(hasher, tip, range, [{ userId: '', body: {} }], T0), /userId/)
    assert.equal(range.size, 0)
    assert.equal(tip.seq, 0)
  })

  it('refuses a range that does not describe the tip, and a batch past the 12-digit capacity', () => {
    assert.throws(
      () => appendBatch(hasher, genesisTip(hasher), createCompactRange(1, [Buffer.alloc(32)]), [entry(1)], T0),
      /does not match the tip/,
    )
    const nearlyFull = { seq: MAX_RECORD_SEQ - 1, digest: Buffer.alloc(32), timestamp: null }
    const fake = { size: MAX_RECORD_SEQ - 1 } as unknown as ReturnType<typeof createCompactRange>
    assert.throws(() => appendBatch(hasher, nearlyFull, fake, [entry(1), entry(2)], T0), /container is full/)
  })
})
