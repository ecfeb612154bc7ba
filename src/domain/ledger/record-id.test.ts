import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { InvalidInputError } from '../errors.js'
import { formatRecordId, MAX_RECORD_SEQ, parseRecordId, recordSeqOf } from './record-id.js'

function reason(raw: unknown): string {
  const r = parseRecordId(raw)
  assert.equal(r.ok, false, `${JSON.stringify(raw)} was accepted`)
  return r.ok ? '' : r.reason
}

describe('parseRecordId', () => {
  it('accepts 12 ASCII digits with value >= 1', () => {
    assert.deepEqual(parseRecordId('000000000001'), { ok: true, seq: 1, recordId: '000000000001' })
    assert.deepEqual(parseRecordId('000000000042'), { ok: true, seq: 42, recordId: '000000000042' })
    assert.deepEqual(parseRecordId('999999999999'), { ok: true, seq: MAX_RECORD_SEQ, recordId: '999999999999' })
  })

  // The malformed list of the research note (ledger.md §4), each with the reason a caller reads.
  const malformed: [raw: unknown, why: RegExp][] = [
    ['1', /exactly 12 digits.*got 1$/],
    ['00000000001', /exactly 12 digits.*got 11$/],
    ['0000000000001', /exactly 12 digits.*got 13$/],
    ['abc', /only the digits 0-9; found "a" at position 0/],
    ['-00000000001', /found "-" at position 0/],
    ['+00000000001', /found "\+" at position 0/],
    [' 000000000001', /found a space at position 0/],
    ['000000000001 ', /found a space at position 12/],
    ['000000000001\n', /found a line feed at position 12/],
    ['٠٠٠٠٠٠٠٠٠٠٠١', /found the non-ASCII digit "٠" \(U\+0660\) at position 0/],
    ['０００００００００００１', /found the non-ASCII digit "０" \(U\+FF10\) at position 0/],
    ['000000000000', /^RecordID 000000000000 does not exist: records are numbered from 000000000001$/],
    ['1e0000000000', /found "e" at position 1/],
    ['0x0000000001', /found "x" at position 1/],
    ['', /^RecordID is empty/],
    ['00000000000\u0661', /non-ASCII digit/],
    ['0000000000\t01', /control character U\+0009 at position 10/],
    ['00000000000\u00a01', /white space U\+00A0/],
    [1, /must be a string of 12 digits.*got a number/],
    [null, /got null/],
    [undefined, /got undefined$/],
    [['000000000001'], /got an array/],
    [{ RecordID: '000000000001' }, /got an object$/],
  ]
  for (const [raw, why] of malformed) {
    it(`rejects ${JSON.stringify(raw) ?? String(raw)}`, () => {
      assert.match(reason(raw), why)
    })
  }

  it('property: accepts exactly the strings matching ^[0-9]{12}$ other than all zeros', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ minLength: 10, maxLength: 14 }), fc.stringMatching(/^[0-9]{12}$/)), (s) => {
        const r = parseRecordId(s)
        assert.equal(r.ok, /^[0-9]{12}$/.test(s) && s !== '000000000000', s)
        if (r.ok) assert.equal(formatRecordId(r.seq), s)
      }),
      { numRuns: 500 },
    )
  })
})

describe('formatRecordId', () => {
  it('zero-pads to 12 digits', () => {
    assert.equal(formatRecordId(1), '000000000001')
    assert.equal(formatRecordId(123456789012), '123456789012')
  })
  it('refuses sequences that have no RecordID (0, negative, fractional, past the 12-digit capacity)', () => {
    for (const bad of [0, -1, 1.5, NaN, MAX_RECORD_SEQ + 1, Number.MAX_SAFE_INTEGER]) {
      assert.throws(() => formatRecordId(bad), RangeError)
    }
  })
})

describe('recordSeqOf (what every ledger command applies to a RecordID as sent)', () => {
  it('is null for none given, the sequence for a good one, and a 400 with the parser reason otherwise', () => {
    assert.equal(recordSeqOf(null), null)
    assert.equal(recordSeqOf(undefined), null)
    assert.equal(recordSeqOf('000000000042'), 42)
    for (const bad of [' 000000000001 ', '1', 1, '', '000000000000']) {
      assert.throws(
        () => recordSeqOf(bad),
        (e: unknown) => e instanceof InvalidInputError && e.message === reason(bad),
      )
    }
    assert.throws(() => recordSeqOf(undefined, { required: true }), InvalidInputError)
  })
})
