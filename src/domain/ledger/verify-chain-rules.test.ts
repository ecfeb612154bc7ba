/**
 * verify-chain.ts beyond the attack catalogue (verify-chain.test.ts): RecordID handling, further
 * rules, the catalogue with a checkpoint after every record, and writers that sign every batch.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { editBody } from '../../../test/support/attack-catalogue.js'
import { LedgerFixture } from '../../../test/support/ledger-fixture.js'
import { MALFORMED_RECORD_IDS } from '../../../test/support/record-ids.js'
import { checkpointOrigin, signCheckpoint } from './checkpoint.js'
import { createCompactRange } from './merkle.js'
import { formatRecordId, parseRecordId } from './record-id.js'
import { createChainVerifier, verifyChain } from './verify-chain.js'

const R = formatRecordId

describe('RecordID handling around verify', () => {
  it('every malformed RecordID of the catalogue is refused before any verification (400, no verdict)', () => {
    for (const raw of MALFORMED_RECORD_IDS) {
      const p = parseRecordId(raw)
      assert.equal(p.ok, false, JSON.stringify(raw))
    }
  })
  it('a well-formed RecordID past the tip is not found (404): 000000000004 in a 3-record container', () => {
    const fx = new LedgerFixture().append(3)
    const r = fx.verify({ recordId: '000000000004' })
    assert.deepEqual(r, {
      kind: 'record-not-found',
      recordId: '000000000004',
      message: 'RecordID 000000000004 does not exist: the chain ends at 000000000003',
    })
  })
  it('any RecordID in an Empty container is not found', () => {
    const r = new LedgerFixture().verify({ recordId: '000000000001' })
    assert.equal(r.kind, 'record-not-found')
    if (r.kind === 'record-not-found') assert.match(r.message, /the container is empty/)
  })
  it('missing but within the attested range: a verdict with Valid false and BrokenAt that id', () => {
    const fx = new LedgerFixture().append(3)
    fx.delete(2)
    const r = fx.verify({ recordId: '000000000002' })
    assert.ok(r.kind === 'verdict')
    assert.deepEqual([r.verdict.Valid, r.verdict.BrokenAt, r.verdict.ChainValid], [false, '000000000002', false])
  })
  it('a RecordID inside the range attested only by a checkpoint (records rolled back) is Valid false, not 404', () => {
    const fx = new LedgerFixture().append(10)
    const cp = fx.checkpoint()
    fx.storedCheckpoints = []
    fx.headsLog = []
    for (let s = 7; s <= 10; s++) fx.delete(s)
    fx.fixHead()
    const r = fx.verify({ recordId: '000000000009', trustedCheckpoint: cp })
    assert.ok(r.kind === 'verdict')
    assert.deepEqual([r.verdict.Valid, r.verdict.BrokenAt], [false, R(7)])
    assert.equal(fx.verify({ recordId: '000000000009' }).kind, 'record-not-found')
  })
})

describe('verify-chain: further rules', () => {
  it('Empty is only for a container nothing was ever written to; then ChainValid is true', () => {
    const v = new LedgerFixture().verdict()
    assert.deepEqual(v, {
      Valid: null,
      ChainValid: true,
      Empty: true,
      BrokenAt: null,
      ForkDetected: false,
      Reason: 'EMPTY: nothing to check: the container has no records and never had any',
      code: 'EMPTY',
    })
  })

  it('two validly signed checkpoints with one size and different roots are a fork, whatever the records say', () => {
    const fx = new LedgerFixture().append(5)
    fx.checkpoint()
    // The log (or someone with its key) signs a second, different root for the same size.
    fx.storedCheckpoints.push(
      signCheckpoint({ origin: fx.origin, size: 5, root: Buffer.alloc(32, 9) }, fx.signing.signer, fx.signing.key, 2),
    )
    const v = fx.verdict()
    assert.deepEqual([v.ChainValid, v.ForkDetected, v.BrokenAt, v.code], [false, true, R(1), 'SPLIT_VIEW'])
    assert.match(v.Reason, /a stored checkpoint \(size 5\) and a stored checkpoint \(size 5\) sign different roots/)
  })

  it('a split view is localised after the largest checkpoint that still matches', () => {
    const fx = new LedgerFixture().append(4)
    fx.checkpoint()
    fx.append(4)
    fx.checkpoint()
    editBody(fx, 6)
    fx.rewriteFrom(6)
    const v = fx.verdict()
    assert.deepEqual([v.ChainValid, v.BrokenAt, v.ForkDetected, v.code], [false, R(5), true, 'SPLIT_VIEW'])
    assert.match(v.Reason, /records 000000000005 to 000000000008 no longer hash to the root signed in a stored checkpoint \(size 8\)/)
  })

  it('a heads-log root that the rewritten records no longer reproduce is a split view too', () => {
    const fx = new LedgerFixture().append(6)
    fx.checkpoint()
    fx.storedCheckpoints = []
    editBody(fx, 2)
    fx.rewriteFrom(2)
    const v = fx.verdict()
    assert.deepEqual([v.BrokenAt, v.ForkDetected, v.code], [R(1), true, 'SPLIT_VIEW'])
    assert.match(v.Reason, /root recorded in the workspace heads log/)
  })

  it('a tip edited together with its own digest is caught by the head row', () => {
    const fx = new LedgerFixture().append(10)
    editBody(fx, 10)
    fx.rehash(10)
    const v = fx.verdict()
    assert.deepEqual([v.ChainValid, v.BrokenAt, v.code], [false, R(10), 'HEAD_MISMATCH'])
  })

  it('records past the stored head are reported', () => {
    const fx = new LedgerFixture().append(10)
    fx.insert(fx.forge(11, fx.row(10).digest))
    const v = fx.verdict()
    assert.deepEqual([v.BrokenAt, v.code], [R(11), 'HEAD_MISMATCH'])
  })

  it('coverage is reported for the tail beyond the newest checkpoint', () => {
    const fx = new LedgerFixture().append(10)
    fx.checkpoint()
    fx.append(3)
    assert.match(
      fx.verdict().Reason,
      /^OK: 13 records verified \(000000000001 to 000000000013\); 3 records after 000000000010 not yet covered by a signed checkpoint$/,
    )
  })

  it('a record with a sequence no RecordID can name is a break at 000000000001', () => {
    const fx = new LedgerFixture().append(3)
    fx.insert({ ...fx.forge(1, fx.hasher.genesis), seq: 0, recordId: '000000000000' })
    const v = fx.verdict()
    assert.deepEqual([v.BrokenAt, v.code], [R(1), 'INVALID_SEQUENCE'])
  })

  it('the duplicate-predecessor window is bounded; a fork beyond it still breaks the chain', () => {
    const fx = new LedgerFixture().append(30)
    fx.row(25).prevDigest = Buffer.from(fx.row(3).digest)
    const wide = fx.verdict()
    assert.deepEqual([wide.BrokenAt, wide.ForkDetected], [R(25), true])
    const narrow = fx.verdict({ forkWindow: 8 })
    assert.deepEqual([narrow.BrokenAt, narrow.ForkDetected, narrow.ChainValid], [R(25), false, false])
  })

  it('a forged predecessor that a later, honest record also names is a fork found at the later record', () => {
    const fx = new LedgerFixture().append(10)
    fx.row(3).prevDigest = Buffer.from(fx.row(6).digest) // #3 now claims #6, which #7 honestly claims
    const v = fx.verdict()
    assert.deepEqual([v.BrokenAt, v.ForkDetected, v.code], [R(3), true, 'DIGEST_MISMATCH'])
    assert.match(v.Reason, /FORK_DUP_PREV at 000000000007/)
  })

  it('a record out of order is a break where it sits, not an exception', () => {
    const fx = new LedgerFixture().append(4)
    const v = createChainVerifier({ container: fx.container, origin: fx.origin, head: fx.head, trustedKeys: [] })
    const [a, b, c, d] = fx.scan()
    for (const r of [a!, b!, a!, c!, d!]) v.add(r)
    const r = v.finish()
    assert.ok(r.kind === 'verdict')
    assert.deepEqual([r.verdict.BrokenAt, r.facts.code], [R(3), 'INVALID_SEQUENCE'])
    assert.match(r.verdict.Reason, /^INVALID_SEQUENCE: a record claiming RecordID 000000000001 appears after 000000000002/)
  })

  it('accepts an async iterable and gives the same verdict', async () => {
    const fx = new LedgerFixture().append(7)
    fx.delete(4)
    async function* rows() {
      for (const r of fx.scan()) yield r
    }
    const r = await verifyChain({
      container: fx.container,
      origin: fx.origin,
      head: fx.head,
      records: rows(),
      trustedKeys: [fx.signing.verifier],
    })
    const sync = fx.verify()
    assert.ok(r.kind === 'verdict' && sync.kind === 'verdict')
    assert.deepEqual(r.verdict, sync.verdict)
    assert.equal(r.verdict.BrokenAt, R(4))
  })

  it('does not scan at all when the trusted checkpoint is refused', async () => {
    const fx = new LedgerFixture().append(3)
    let pulled = 0
    async function* rows() {
      for (const r of fx.scan()) {
        pulled++
        yield r
      }
    }
    const r = await verifyChain({
      container: fx.container,
      origin: fx.origin,
      head: fx.head,
      records: rows(),
      trustedKeys: [fx.signing.verifier],
      trustedCheckpoint: 'garbage',
    })
    assert.equal(r.kind, 'invalid-trusted-checkpoint')
    assert.equal(pulled, 0)
  })

  it('the stored checkpoints and the compact range agree with an independently computed root', () => {
    const fx = new LedgerFixture().append(9)
    const cr = createCompactRange()
    for (const r of fx.scan()) cr.append(r.digest)
    const note = signCheckpoint(
      { origin: checkpointOrigin('provenant.test', fx.container), size: 9, root: cr.root() },
      fx.signing.signer,
      fx.signing.key,
      5,
    )
    const v = fx.verdict({ trustedCheckpoint: note })
    assert.match(v.Reason, /covered by a signed checkpoint \(size 9\)/)
  })
})

/**
 * The service signs a checkpoint after every committed batch and records it in the heads log, so in
 * a live store an anchor exists at (nearly) every size. The verdicts must stay those of the
 * catalogue: an anchor mismatch that the next record's broken link explains is the edit, not a
 * split view; a consistent rewrite is localised to the first size whose root changed.
 */
describe('attack catalogue with a checkpoint and heads-log entry after every record (per-batch checkpoints)', () => {
  function dense(): LedgerFixture {
    const fx = new LedgerFixture()
    for (let i = 0; i < 10; i++) {
      fx.append(1)
      fx.checkpoint()
    }
    return fx
  }
  const verdict = (fx: LedgerFixture) => {
    const v = fx.verdict()
    return [v.ChainValid, v.BrokenAt, v.ForkDetected, v.code]
  }

  it('0: no tampering', () => assert.deepEqual(verdict(dense()), [true, null, false, 'OK']))

  it('1: edit a body field of #5 → DIGEST_MISMATCH at 005', () => {
    const fx = dense()
    fx.row(5).canonical = fx.row(5).canonical.replace('"n":5', '"n":500')
    assert.deepEqual(verdict(fx), [false, R(5), false, 'DIGEST_MISMATCH'])
  })

  it('4: edit #5 and recompute its digest → LINK_MISMATCH at 006, Valid(5) true (not a split view at 005)', () => {
    const fx = dense()
    fx.row(5).canonical = fx.row(5).canonical.replace('"n":5', '"n":500')
    fx.rehash(5)
    assert.deepEqual(verdict(fx), [false, R(6), false, 'LINK_MISMATCH'])
    const r = fx.verify({ recordId: R(5) })
    assert.ok(r.kind === 'verdict' && r.verdict.Valid === true && r.verdict.ChainValid === false)
  })

  it('4b: edit #5 and rewrite the suffix and head → SPLIT_VIEW localised at 005 by the anchor at size 4', () => {
    const fx = dense()
    fx.row(5).canonical = fx.row(5).canonical.replace('"n":5', '"n":500')
    fx.rewriteFrom(5)
    assert.deepEqual(verdict(fx), [false, R(5), true, 'SPLIT_VIEW'])
  })

  it('7: insert a forged record after #5 and renumber → FORK_DUP_PREV at 007', () => {
    const fx = dense()
    for (const r of fx.rows)
      if (r.seq >= 6) {
        r.seq += 1
        r.recordId = R(r.seq)
      }
    fx.insert(fx.forge(6, fx.row(5).digest))
    fx.fixHead()
    assert.deepEqual(verdict(fx), [false, R(7), true, 'FORK_DUP_PREV'])
  })

  it('8: swap the seq values of #4 and #5 → RECORD_ID_MISMATCH at 004', () => {
    const fx = dense()
    const a = fx.row(4)
    const b = fx.row(5)
    ;[a.seq, b.seq] = [b.seq, a.seq]
    assert.deepEqual(verdict(fx), [false, R(4), false, 'RECORD_ID_MISMATCH'])
  })

  it('10: roll back to #6 and fix the head → TRUNCATED at 007 against the stored anchors', () => {
    const fx = dense()
    for (let s = 7; s <= 10; s++) fx.delete(s)
    fx.fixHead()
    assert.deepEqual(verdict(fx), [false, R(7), false, 'TRUNCATED'])
  })

  it('11: rewrite the whole chain consistently → SPLIT_VIEW at 001', () => {
    const fx = dense()
    fx.row(1).canonical = fx.row(1).canonical.replace('"n":1', '"n":100')
    fx.rewriteFrom(1)
    assert.deepEqual(verdict(fx), [false, R(1), true, 'SPLIT_VIEW'])
  })
})

describe('a writer that signs every batch (requireCoverage, issue 14 items 1 and 4)', () => {
  it('a forged #11 past the stored checkpoint is UNCOVERED at 000000000011, not "not yet covered"', () => {
    const fx = new LedgerFixture().append(10)
    fx.checkpoint()
    fx.insert(fx.forge(11, fx.row(10).digest))
    fx.fixHead()
    const v = fx.verdict({ requireCoverage: true })
    assert.deepEqual([v.ChainValid, v.BrokenAt, v.ForkDetected, v.code], [false, R(11), false, 'UNCOVERED'], v.Reason)
    assert.match(v.Reason, /^UNCOVERED: record 000000000011 is not covered by any checkpoint this server signed/)
    assert.doesNotMatch(v.Reason, /covered by a signed checkpoint \(size/)
    // Without the rule (a writer that does not sign every batch) it stays informational.
    assert.match(fx.verdict().Reason, /^OK: .*1 record after 000000000010 not yet covered/)
  })

  it('a chain without any checkpoint (all deleted) is UNCOVERED from 000000000001', () => {
    const fx = new LedgerFixture().append(4)
    const v = fx.verdict({ requireCoverage: true })
    assert.deepEqual([v.ChainValid, v.BrokenAt, v.code], [false, R(1), 'UNCOVERED'], v.Reason)
    assert.match(v.Reason, /^UNCOVERED: records 000000000001 to 000000000004 are not covered/)
  })

  it('an edit under a checkpoint is reported as itself: the checkpoint reaches the tip, so nothing is called uncovered', () => {
    const fx = new LedgerFixture().append(10)
    fx.checkpoint()
    editBody(fx, 5)
    const v = fx.verdict({ requireCoverage: true })
    assert.deepEqual([v.ChainValid, v.BrokenAt, v.code], [false, R(5), 'DIGEST_MISMATCH'], v.Reason)
    assert.doesNotMatch(v.Reason, /UNCOVERED|covered by a signed checkpoint/)
  })

  it('a failing verdict never says "all records are covered"; it names the first failure first', () => {
    const fx = new LedgerFixture().append(10)
    const cp = fx.checkpoint()
    for (const seq of [10, 9, 8, 7]) fx.delete(seq)
    fx.fixHead()
    fx.storedCheckpoints = []
    fx.headsLog = []
    fx.checkpoint() // the server's own checkpoint at 6 is still there and matches
    const v = fx.verdict({ requireCoverage: true, trustedCheckpoint: cp })
    assert.deepEqual([v.ChainValid, v.BrokenAt, v.code], [false, R(7), 'TRUNCATED'], v.Reason)
    assert.match(v.Reason, /^TRUNCATED: the store ends at 000000000006 but 000000000010 was attested by the trusted checkpoint/)
    assert.doesNotMatch(v.Reason, /all records are covered/)
  })
})
