/**
 * Whole-chain verify against the research note's attack catalogue (ledger.md §4; the rows and
 * their two columns are in test/support/attack-catalogue.ts). The other rules of verify-chain.ts
 * are in verify-chain-rules.test.ts.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { check, editBody, row, setup } from '../../../test/support/attack-catalogue.js'
import { LedgerFixture, testKey } from '../../../test/support/ledger-fixture.js'
import { signCheckpoint } from './checkpoint.js'
import { formatRecordId } from './record-id.js'
import { createChainVerifier } from './verify-chain.js'

const R = formatRecordId

describe('attack catalogue (ledger note §4)', () => {
  row(
    '0: no tampering',
    () => {},
    {
      chainValid: true,
      brokenAt: null,
      fork: false,
      valid5: true,
      code: 'OK',
      reason: /^OK: 10 records verified \(000000000001 to 000000000010\); no signed checkpoint covers any of the 10 records yet$/,
    },
    {
      chainValid: true,
      brokenAt: null,
      fork: false,
      valid5: true,
      code: 'OK',
      reason: /all records are covered by a signed checkpoint \(size 10\)$/,
    },
  )

  row(
    '1: edit a body field of #5, digest untouched',
    (fx) => editBody(fx, 5),
    {
      chainValid: false,
      brokenAt: R(5),
      fork: false,
      valid5: false,
      code: 'DIGEST_MISMATCH',
      reason: /^DIGEST_MISMATCH: record 000000000005 does not hash to its stored digest/,
    },
    'same',
  )

  row(
    '2: edit the actor of #5',
    (fx) => {
      fx.row(5).userId = 'acc_mallory'
    },
    { chainValid: false, brokenAt: R(5), fork: false, valid5: false, code: 'DIGEST_MISMATCH' },
    'same',
  )

  row(
    '3: edit the timestamp of #5',
    (fx) => {
      fx.row(5).timestamp = '2026-01-01T00:00:02.001Z'
    },
    { chainValid: false, brokenAt: R(5), fork: false, valid5: false, code: 'DIGEST_MISMATCH' },
    'same',
  )

  row(
    '4: edit #5 and recompute its own digest',
    (fx) => {
      editBody(fx, 5)
      fx.rehash(5)
    },
    {
      chainValid: false,
      brokenAt: R(6),
      fork: false,
      valid5: true,
      code: 'LINK_MISMATCH',
      reason: /^LINK_MISMATCH: record 000000000006 does not link to record 000000000005/,
    },
    'same',
  )

  row(
    '4b: edit #5 and recompute the whole suffix and the head',
    (fx) => {
      editBody(fx, 5)
      fx.rewriteFrom(5)
    },
    { chainValid: true, brokenAt: null, fork: false, valid5: true, code: 'OK' },
    {
      chainValid: false,
      brokenAt: R(1),
      fork: true,
      valid5: true,
      code: 'SPLIT_VIEW',
      reason: /^SPLIT_VIEW: records 000000000001 to 000000000010 no longer hash to the root signed in the trusted checkpoint \(size 10\)/,
    },
  )

  row(
    '5: delete the tip #10, head row left',
    (fx) => fx.delete(10),
    {
      chainValid: false,
      brokenAt: R(10),
      fork: false,
      valid5: true,
      code: 'TRUNCATED',
      reason: /^TRUNCATED: the store ends at 000000000009 but 000000000010 was attested by the head row/,
    },
    'same',
  )

  row(
    '5b: delete the tip and fix the head row',
    (fx) => {
      fx.delete(10)
      fx.fixHead()
    },
    { chainValid: true, brokenAt: null, fork: false, valid5: true, code: 'OK' },
    {
      chainValid: false,
      brokenAt: R(10),
      fork: false,
      valid5: true,
      code: 'TRUNCATED',
      reason: /attested by the trusted checkpoint \(size 10\)/,
    },
  )

  row(
    '6: delete a middle record #5',
    (fx) => fx.delete(5),
    { chainValid: false, brokenAt: R(5), fork: false, valid5: false, code: 'MISSING', reason: /^MISSING: record 000000000005 is missing/ },
    'same',
  )

  row(
    '7: insert a forged record after #5 (constraints dropped, suffix renumbered)',
    (fx) => {
      for (const r of fx.rows)
        if (r.seq >= 6) {
          r.seq += 1
          r.recordId = R(r.seq)
        }
      fx.insert(fx.forge(6, fx.row(5).digest))
      fx.fixHead()
    },
    {
      chainValid: false,
      brokenAt: R(7),
      fork: true,
      valid5: true,
      code: 'FORK_DUP_PREV',
      reason:
        /^FORK_DUP_PREV: records 000000000006 and 000000000007 both claim the same predecessor; also DIGEST_MISMATCH at 000000000007, LINK_MISMATCH at 000000000007/,
    },
    'same',
  )

  row(
    '7b: append a forged #11 at the tip with a valid link',
    (fx) => {
      fx.insert(fx.forge(11, fx.row(10).digest))
      fx.fixHead()
    },
    { chainValid: true, brokenAt: null, fork: false, valid5: true, code: 'OK' },
    {
      chainValid: true,
      brokenAt: null,
      fork: false,
      valid5: true,
      code: 'OK',
      reason: /; 1 record after 000000000010 not yet covered by a signed checkpoint$/,
    },
  )

  describe('8: swap two records', () => {
    row(
      'bodies of #4 and #5',
      (fx) => {
        const a = fx.row(4)
        const b = fx.row(5)
        ;[a.canonical, b.canonical] = [b.canonical, a.canonical]
      },
      { chainValid: false, brokenAt: R(4), fork: false, valid5: false, code: 'DIGEST_MISMATCH' },
      'same',
    )
    row(
      'their seq values, digests left in place',
      (fx) => {
        const a = fx.row(4)
        const b = fx.row(5)
        ;[a.seq, b.seq] = [b.seq, a.seq]
      },
      { chainValid: false, brokenAt: R(4), fork: false, valid5: false, code: 'RECORD_ID_MISMATCH' },
      'same',
    )
  })

  row(
    '8b: swap only the physical row order, seq intact',
    (fx) => {
      const i = fx.rows.findIndex((r) => r.seq === 4)
      const j = fx.rows.findIndex((r) => r.seq === 5)
      const [a, b] = [fx.rows[i]!, fx.rows[j]!]
      ;[a.rowid, b.rowid] = [b.rowid, a.rowid]
      fx.rows[i] = b
      fx.rows[j] = a
    },
    { chainValid: true, brokenAt: null, fork: false, valid5: true, code: 'OK' },
    { chainValid: true, brokenAt: null, fork: false, valid5: true, code: 'OK' },
  )

  row(
    '9: duplicate seq #7 (a second branch with a valid prev = #6)',
    (fx) => {
      fx.insert(fx.forge(7, fx.row(6).digest))
    },
    {
      chainValid: false,
      brokenAt: R(7),
      fork: true,
      valid5: true,
      code: 'FORK_DUP_SEQ',
      reason: /^FORK_DUP_SEQ: two records claim RecordID 000000000007/,
    },
    'same',
  )

  row(
    '10: roll back to #6 and fix the head',
    (fx) => {
      for (let s = 7; s <= 10; s++) fx.delete(s)
      fx.fixHead()
    },
    { chainValid: true, brokenAt: null, fork: false, valid5: true, code: 'OK' },
    {
      chainValid: false,
      brokenAt: R(7),
      fork: false,
      valid5: true,
      code: 'TRUNCATED',
      reason: /^TRUNCATED: the store ends at 000000000006 but 000000000010 was attested by the trusted checkpoint \(size 10\)/,
    },
  )

  row(
    '11: rewrite the whole chain consistently after cp@10 was issued',
    (fx) => {
      editBody(fx, 1)
      fx.rewriteFrom(1)
    },
    { chainValid: true, brokenAt: null, fork: false, valid5: true, code: 'OK' },
    { chainValid: false, brokenAt: R(1), fork: true, valid5: true, code: 'SPLIT_VIEW' },
  )

  row(
    '11b: as 11, then extend to #12',
    (fx) => {
      editBody(fx, 1)
      fx.rewriteFrom(1)
      fx.insert(fx.forge(11, fx.row(10).digest))
      fx.insert(fx.forge(12, fx.row(11).digest))
      fx.fixHead()
    },
    { chainValid: true, brokenAt: null, fork: false, valid5: true, code: 'OK' },
    { chainValid: false, brokenAt: R(1), fork: true, valid5: true, code: 'SPLIT_VIEW' },
  )

  row(
    '12: delete every record, head row left',
    (fx) => {
      fx.rows = []
    },
    {
      chainValid: false,
      brokenAt: R(1),
      fork: false,
      empty: false,
      valid5: false,
      code: 'TRUNCATED',
      reason: /^TRUNCATED: no records are stored but 000000000010 was attested by the head row$/,
    },
    'same',
  )

  row(
    '12b: delete every record and the head row',
    (fx) => {
      fx.rows = []
      fx.head = null
    },
    { chainValid: true, brokenAt: null, fork: false, empty: true, valid5: 'not-found', code: 'EMPTY', reason: /^EMPTY: nothing to check/ },
    {
      chainValid: false,
      brokenAt: R(1),
      fork: false,
      empty: false,
      valid5: false,
      code: 'TRUNCATED',
      reason: /attested by the trusted checkpoint/,
    },
  )

  it('12b: the workspace heads log alone also keeps Empty from masking the deletion', () => {
    const fx = new LedgerFixture().append(10)
    fx.checkpoint()
    fx.rows = []
    fx.head = null
    fx.storedCheckpoints = []
    const v = fx.verdict()
    assert.deepEqual([v.Empty, v.ChainValid, v.BrokenAt, v.code], [false, false, R(1), 'TRUNCATED'])
    assert.match(v.Reason, /attested by the workspace heads log \(size 10\)/)
  })

  describe('13: move #5 to another container (same seq)', () => {
    it('the source container reports it missing; the target reports its missing #1-#4 and the foreign digest', () => {
      const { fx } = setup(false)
      const moved = { ...fx.row(5) }
      fx.delete(5)
      check(fx, null, { chainValid: false, brokenAt: R(5), fork: false, valid5: false, code: 'MISSING' })
      const target = new LedgerFixture('plant-9/line-2')
      target.insert(moved)
      const v = target.verdict()
      assert.deepEqual([v.ChainValid, v.BrokenAt, v.ForkDetected, v.Empty, v.code], [false, R(1), false, false, 'MISSING'])
      assert.match(v.Reason, /^MISSING: records 000000000001 to 000000000004 are missing; also DIGEST_MISMATCH at 000000000005/)
    })
  })

  row(
    '14: edit only prev of #6',
    (fx) => {
      fx.row(6).prevDigest = Buffer.alloc(32, 0xab)
    },
    { chainValid: false, brokenAt: R(6), fork: false, valid5: true, code: 'DIGEST_MISMATCH', reason: /also LINK_MISMATCH at 000000000006/ },
    'same',
  )

  // Pointing #6 at #4 makes #5 and #6 two children of #4: rule (b) of the note's §3.4 calls that a fork.
  row(
    '14 (variant): prev of #6 set to the digest of #4',
    (fx) => {
      fx.row(6).prevDigest = Buffer.from(fx.row(4).digest)
    },
    { chainValid: false, brokenAt: R(6), fork: true, valid5: true, code: 'FORK_DUP_PREV' },
    'same',
  )

  row(
    '15: edit the record_id text of #5 to 000000000009',
    (fx) => {
      fx.row(5).recordId = '000000000009'
    },
    {
      chainValid: false,
      brokenAt: R(5),
      fork: false,
      valid5: false,
      code: 'RECORD_ID_MISMATCH',
      reason: /^RECORD_ID_MISMATCH: the record stored at sequence 5 carries RecordID "000000000009", not 000000000005/,
    },
    'same',
  )

  describe('16: checkpoint copies deleted, or a checkpoint signed by an unknown key', () => {
    it("deleting the stored copies changes nothing; the caller's copy still catches a rollback", () => {
      const fx = new LedgerFixture().append(10)
      const cp = fx.checkpoint()
      fx.storedCheckpoints = []
      fx.headsLog = []
      assert.deepEqual([fx.verdict().ChainValid, fx.verdict().BrokenAt], [true, null])
      for (let s = 7; s <= 10; s++) fx.delete(s)
      fx.fixHead()
      const v = fx.verdict({ trustedCheckpoint: cp })
      assert.deepEqual([v.ChainValid, v.BrokenAt, v.ForkDetected], [false, R(7), false])
    })
    it('a caller-supplied checkpoint with no valid trusted signature is refused (400), never used as evidence', () => {
      const fx = new LedgerFixture().append(10)
      const stranger = testKey('another server')
      const note = signCheckpoint({ origin: fx.origin, size: 12, root: Buffer.alloc(32, 1) }, stranger.signer, stranger.key, 1)
      const r = fx.verify({ trustedCheckpoint: note })
      assert.equal(r.kind, 'invalid-trusted-checkpoint')
      if (r.kind === 'invalid-trusted-checkpoint')
        assert.match(r.message, /^TrustedCheckpoint is not usable: note has no verifiable signatures/)
      const tampered = fx.checkpoint().replace('\n10\n', '\n12\n')
      const r2 = fx.verify({ trustedCheckpoint: tampered })
      assert.equal(r2.kind, 'invalid-trusted-checkpoint')
      if (r2.kind === 'invalid-trusted-checkpoint') assert.match(r2.message, /invalid signature/)
    })
    it('a stored checkpoint by an unknown key is ignored, said so, and attests nothing', () => {
      const fx = new LedgerFixture().append(10)
      const stranger = testKey('another server')
      fx.storedCheckpoints.push(
        signCheckpoint({ origin: fx.origin, size: 12, root: Buffer.alloc(32, 1) }, stranger.signer, stranger.key, 1),
      )
      const v = fx.verdict()
      assert.deepEqual([v.ChainValid, v.BrokenAt], [true, null])
      assert.match(v.Reason, /; 1 checkpoint ignored \(note has no verifiable signatures/)
    })
  })

  describe('17: replay a checkpoint signed for another container or workspace', () => {
    const foreign = (): string => {
      const other = new LedgerFixture('plant-9/line-2').append(10)
      return other.checkpoint()
    }
    it('stored: ignored for its origin, so a rollback to #6 still verifies', () => {
      const fx = new LedgerFixture().append(10)
      for (let s = 7; s <= 10; s++) fx.delete(s)
      fx.fixHead()
      fx.storedCheckpoints.push(foreign())
      const v = fx.verdict()
      assert.deepEqual([v.ChainValid, v.BrokenAt, v.ForkDetected], [true, null, false])
      assert.match(v.Reason, /1 checkpoint ignored \(checkpoint is for ".*plant-9%2Fline-2", not ".*plant-7%2Fline-1"\)/)
    })
    it("caller-supplied: refused as another container's", () => {
      const fx = new LedgerFixture().append(6)
      const r = fx.verify({ trustedCheckpoint: foreign() })
      assert.equal(r.kind, 'invalid-trusted-checkpoint')
    })
    it('another workspace with the same ScopeKey has another origin too', () => {
      const mine = new LedgerFixture('plant-7/line-1', 'wks_a').append(3)
      const theirs = new LedgerFixture('plant-7/line-1', 'wks_b').append(3)
      assert.notEqual(mine.origin, theirs.origin)
      assert.equal(mine.verify({ trustedCheckpoint: theirs.checkpoint() }).kind, 'invalid-trusted-checkpoint')
    })
  })

  describe('18: a stored body rewritten to an equal-valued, non-canonical form', () => {
    const reorder = (fx: LedgerFixture): void => {
      const r = fx.row(5)
      const v = JSON.parse(r.canonical) as Record<string, unknown>
      r.canonical = JSON.stringify({
        entityType: v.entityType,
        ScopeKey: v.ScopeKey,
        actionType: v.actionType,
        details: v.details,
        entityId: v.entityId,
      })
    }
    row(
      'key order changed, digest not fixed',
      reorder,
      {
        chainValid: false,
        brokenAt: R(5),
        fork: false,
        valid5: false,
        code: 'DIGEST_MISMATCH',
        reason: /does not hash to its stored digest; its body is not in canonical JCS form/,
      },
      'same',
    )
    row(
      'whitespace added and the digest recomputed',
      (fx) => {
        fx.row(5).canonical = fx.row(5).canonical.replace(':', ': ')
        fx.rehash(5)
      },
      {
        chainValid: false,
        brokenAt: R(5),
        fork: false,
        valid5: true,
        code: 'NON_CANONICAL',
        reason: /^NON_CANONICAL: record 000000000005's body is not in canonical JCS form/,
      },
      'same',
    )
  })

  describe('19: two writers race on one hot container (no tampering)', () => {
    it('interleaved batches from two writers give a contiguous, valid chain', () => {
      const fx = new LedgerFixture()
      for (let i = 0; i < 40; i++) fx.append(1 + (i % 5), i % 2 === 0 ? 'acc_writer_a' : 'acc_writer_b')
      const seqs = fx.scan().map((r) => r.seq)
      assert.deepEqual(
        seqs,
        Array.from({ length: seqs.length }, (_, i) => i + 1),
      )
      const v = fx.verdict()
      assert.deepEqual([v.ChainValid, v.BrokenAt, v.ForkDetected], [true, null, false])
    })
    it('verify on one snapshot (head and records read together) has no false MISSING under concurrent appends', () => {
      const fx = new LedgerFixture().append(10)
      const snapshotHead = fx.head
      const snapshotRows = fx.scan()
      fx.append(5) // appends that commit while the verify runs
      const r = createChainVerifier({ container: fx.container, origin: fx.origin, head: snapshotHead, trustedKeys: [fx.signing.verifier] })
      for (const rec of snapshotRows) r.add(rec)
      const result = r.finish()
      assert.equal(result.kind, 'verdict')
      if (result.kind === 'verdict') assert.deepEqual([result.verdict.ChainValid, result.verdict.BrokenAt], [true, null])
      // Reading the head before and the rows after the appends (no snapshot) would be a false alarm:
      // this is why the storage port must read both in one snapshot.
      const torn = createChainVerifier({ container: fx.container, origin: fx.origin, head: snapshotHead, trustedKeys: [] })
      for (const rec of fx.scan()) torn.add(rec)
      const t = torn.finish()
      assert.ok(t.kind === 'verdict' && t.verdict.BrokenAt === R(11) && t.facts.code === 'HEAD_MISMATCH')
    })
  })
})
