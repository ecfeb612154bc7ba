/**
 * @module
 * The research note's attack catalogue (ledger.md §4), as rows both verify-chain suites run
 * (src/domain/ledger/verify-chain.test.ts, verify-chain-rules.test.ts): one container, records
 * #1–#10, optionally a signed checkpoint at size 10 held OUTSIDE the database ("cp@10": the
 * attacker deleted the stored copies and the heads-log entries, so only the caller's
 * TrustedCheckpoint remains). Each case asserts the whole-chain verdict `ChainValid, BrokenAt,
 * ForkDetected` (and `Empty`), the reason code, and `Valid` for RecordID 000000000005.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LedgerFixture } from './ledger-fixture.js'

export interface Expect {
  readonly chainValid: boolean
  readonly brokenAt: string | null
  readonly fork: boolean
  /** Valid for RecordID 000000000005; 'not-found' when that must be a 404. */
  readonly valid5?: boolean | 'not-found'
  readonly empty?: boolean
  readonly code?: string
  readonly reason?: RegExp
}

export function setup(withCheckpoint: boolean): { fx: LedgerFixture; cp: string | null } {
  const fx = new LedgerFixture().append(4).append(3).append(3)
  if (!withCheckpoint) return { fx, cp: null }
  const cp = fx.checkpoint()
  // Held outside: the attacker removed every copy the database had.
  fx.storedCheckpoints = []
  fx.headsLog = []
  return { fx, cp }
}

export function check(fx: LedgerFixture, cp: string | null, want: Expect): void {
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
export function row(name: string, tamper: (fx: LedgerFixture) => void, noCheckpoint: Expect, withCp: Expect | 'same'): void {
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

/** Changes record #seq's body (its `n`), leaving its digest as stored. */
export const editBody = (fx: LedgerFixture, seq: number): void => {
  const r = fx.row(seq)
  r.canonical = r.canonical.replace(`"n":${seq}`, `"n":${seq * 100}`)
}
