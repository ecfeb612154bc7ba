/**
 * @module
 * RecordID: a record's position in its container's chain, as the 12-digit zero-padded decimal the
 * spec defines (spec 2.6, 4.5 rule 4). The raw string is checked before anything else looks at it:
 * databases and JS happily read `"1"`, `" 000000000001"`, `"+00000000001"` or `"1e0"` as record 1
 * (ledger note §3.5), and a malformed RecordID must be a 400, never a whole-chain verify.
 *
 * This is the only place a RecordID is parsed: every edge (API, portal, CLI) hands the value as
 * sent to a ledger command, which calls recordSeqOf (issue 19 item 1).
 */
import { InvalidInputError } from '../errors.js'

/** Digits in a RecordID. */
export const RECORD_ID_DIGITS = 12

/** The last sequence a container can hold; appending past it must fail rather than widen or wrap. */
export const MAX_RECORD_SEQ = 999_999_999_999

/** `seq` is the 1-based position; `recordId` is the canonical text (the input, once accepted). */
export type RecordIdResult =
  | { readonly ok: true; readonly seq: number; readonly recordId: string }
  | { readonly ok: false; readonly reason: string }

const WELL_FORMED = /^[0-9]{12}$/

/**
 * Checks a caller-supplied RecordID. Accepts only a JS string of exactly 12 ASCII digits whose
 * value is at least 1. No trimming, no numeric parsing first, no Unicode digits. On failure the
 * reason is a complete sentence for the error envelope.
 */
export function parseRecordId(raw: unknown): RecordIdResult {
  if (typeof raw !== 'string') {
    const got =
      raw === null || raw === undefined
        ? String(raw)
        : Array.isArray(raw)
          ? 'an array'
          : typeof raw === 'object'
            ? 'an object'
            : `a ${typeof raw}`
    return fail(`RecordID must be a string of ${RECORD_ID_DIGITS} digits such as "000000000001", got ${got}`)
  }
  if (WELL_FORMED.test(raw)) {
    const seq = Number(raw)
    if (seq < 1) return fail(`RecordID ${raw} does not exist: records are numbered from 000000000001`)
    return { ok: true, seq, recordId: raw }
  }
  if (raw.length === 0) return fail(`RecordID is empty; expected ${RECORD_ID_DIGITS} digits such as "000000000001"`)
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if (c < 0x30 || c > 0x39) {
      return fail(`RecordID may contain only the digits 0-9; found ${describe(raw, i)} at position ${i}`)
    }
  }
  return fail(`RecordID must be exactly ${RECORD_ID_DIGITS} digits, zero-padded (e.g. "000000000042"); got ${raw.length}`)
}

/**
 * The sequence of a RecordID as sent, for a ledger command: null when none was given (null or
 * undefined, unless `required`); a malformed one is an InvalidInputError (400) with the reason.
 */
export function recordSeqOf(raw: unknown, options: { readonly required: true }): number
export function recordSeqOf(raw: unknown, options?: { readonly required?: boolean }): number | null
export function recordSeqOf(raw: unknown, options: { readonly required?: boolean } = {}): number | null {
  if ((raw === null || raw === undefined) && options.required !== true) return null
  const parsed = parseRecordId(raw)
  if (!parsed.ok) throw new InvalidInputError(parsed.reason)
  return parsed.seq
}

/** The RecordID of sequence `seq` (an integer from 1 to MAX_RECORD_SEQ). */
export function formatRecordId(seq: number): string {
  if (!Number.isInteger(seq) || seq < 1 || seq > MAX_RECORD_SEQ) {
    throw new RangeError(`sequence ${seq} has no RecordID: it must be an integer from 1 to ${MAX_RECORD_SEQ}`)
  }
  return String(seq).padStart(RECORD_ID_DIGITS, '0')
}

function fail(reason: string): RecordIdResult {
  return { ok: false, reason }
}

function describe(s: string, i: number): string {
  const cp = s.codePointAt(i)!
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`
  if (cp === 0x20) return 'a space'
  if (cp === 0x0a) return 'a line feed'
  if (cp < 0x20 || cp === 0x7f) return `control character ${hex}`
  if (/\s/u.test(String.fromCodePoint(cp))) return `white space ${hex}`
  if (/\p{Nd}/u.test(String.fromCodePoint(cp))) return `the non-ASCII digit "${String.fromCodePoint(cp)}" (${hex})`
  return `"${String.fromCodePoint(cp)}"`
}
