import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LedgerFixture, testKey } from '../../../test/support/ledger-fixture.js'
import { MALFORMED_RECORD_IDS } from '../../../test/support/record-ids.js'
import { checkpointOrigin, signCheckpoint } from './checkpoint.js'
import { createCompactRange } from './merkle.js'
import { formatRecordId, parseRecordId } from './record-id.js'
import { createChainVerifier, verifyChain } from './verify-chain.js'

/**
 * The research note's attack catalogue (ledger.md §4): one container, records #1–#10, optionally a
 * signed checkpoint at size 10 held OUTSIDE the database ("cp@10": the attacker deleted the stored
 * copies and the heads-log entries, so only the caller's TrustedCheckpoint remains). Each case
 * asserts the whole-chain verdict `ChainValid, BrokenAt, ForkDetected` (and `Empty`), the reason
 * code, and `Valid` for RecordID 000000000005.
 */
interface Expect {
  readonly chainValid: boolean
  readonly brokenAt: string | null
  readonly fork: boolean
  /** Valid for RecordID 000000000005; 'not-found' when that must be a 404. */
  readonly valid5?: boolean | 'not-found'
  readonly empty?: boolean
  readonly code?: string
  readonly reason?: RegExp
}

const R = formatRecordId

function setup(withCheckpoint: boolean): { fx: LedgerFixture; cp: string | null } {
  const fx = new LedgerFixture().append(4).append(3).append(3)
  if (!withCheckpoint) return { fx, cp: null }
  const cp = fx.checkpoint()
  // Held outside: the attacker removed every copy the database had.
  fx.storedCheckpoints = []
  fx.headsLog = []
  return { fx, cp }
}

function check(fx: LedgerFixture, cp: string | null, want: Expect): void {
  const v = fx.verdict({ trustedCheckpoint: cp })
  const got = { chainValid: v.ChainValid, brokenAt: v.BrokenAt, fork: v.ForkDetected, empty: v.Empty }
  assert.deepEqual(got, { chainValid: want.chainValid, brokenAt: want.brokenAt, fork: want.fork, empty: want.empty ?? false }, v.Reason)
  assert.equal(v.Valid, null, 'Valid is null without a RecordID')
  if (want.code) assert.equal(v.code, want.code, v.Reason)
  if (want.reason) assert.match(v.Reason, want.reason)
  if (want.valid5 !== undefined) {
    const r = fx.verify({ recordId: '000000000005', trustedCheckpoint: cp })
    if (want.valid5 === 'not-found') {
      assert.equal(r.kind, 'record-not-found')
    } else {
      assert.equal(r.kind, 'verdict')
      if (r.kind === 'verdict') {
        assert.equal(r.verdict.Valid, want.valid5, r.verdict.Reason)
        // The whole-chain part of the answer does not change when a RecordID is given.
        assert.equal(r.verdict.ChainValid, want.chainValid)
        assert.equal(r.verdict.BrokenAt, want.brokenAt)
      }
    }
  }
}

/** Runs one catalogue row in both columns: no checkpoint, and cp@10 held outside. */
function row(name: string, tamper: (fx: LedgerFixture) => void, noCheckpoint: Expect, withCp: Expect | 'same'): void {
  describe(name, () => {
    it('no checkpoint', () => {
      const { fx } = setup(false)
      tamper(fx)
      check(fx, null, noCheckpoint)
    })
    it('with cp@10 held', () => {
      const { fx, cp } = setup(true)
      tamper(fx)
      check(fx, cp, withCp === 'same' ? noCheckpoint : withCp)
    })
  })
}

const editBody = (fx: LedgerFixture, seq: number): void => {
  const r = fx.row(seq)
  r.canonical = r.canonical.replace(`"n":${seq}`, `"n":${seq * 100}`)
}

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
