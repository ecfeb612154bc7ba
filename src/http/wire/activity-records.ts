/**
 * @module
 * The activity log on the wire (spec 2.6, 2.7, 4.5, 4.7): records in the current shape (`userId`,
 * `actionType`) and the earlier per-log shape (`actor`, `action`), the verify verdict, and the
 * request fields both shapes share: RecordID (passed on as sent: the ledger command parses it),
 * dates and paging. Which container a scope key names, and whether the caller may use it, is the
 * domain's (src/domain/ledger/ledger-commands.ts).
 */
import { z } from 'zod'
import { InvalidInputError } from '../../domain/errors.js'
import type { LedgerRecordView } from '../../domain/ledger/index.js'

export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex')

/** A query-string whole number of at least `min`, refused with a message naming `name`. */
export function wholeNumber(name: string, min: number) {
  return z.coerce
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(min, min === 0 ? `${name} must not be negative` : `${name} must be at least ${min}`)
}

/** Query defaults and bounds (docs/decisions.md, "Activity log"). */
export const QUERY_LIMIT_DEFAULT = 100
export const QUERY_LIMIT_MAX = 1000
export const QUERY_OFFSET_MAX = 1_000_000_000

/** Text of a filter or field: PostgreSQL cannot hold U+0000, so it is a 400 on both backends. */
export const filterText = (name: string, max = 1000) =>
  z
    .string()
    .max(max, `${name} is at most ${max} characters`)
    .refine((v) => !v.includes('\u0000'), `${name} may not contain the NUL character (\\u0000)`)

/** A ScopeKey: 1–200 characters, no control characters (it also names a log in the per-log paths). */
export const scopeKeySchema = z
  .string()
  .min(1, 'ScopeKey must not be empty')
  .max(200, 'ScopeKey is at most 200 characters')
  .regex(/^[^\u0000-\u001f\u007f]+$/u, 'ScopeKey must not contain control characters')

/**
 * RecordID on input, documented as the spec's 12-digit string but passed on as sent: the ledger
 * command parses it (src/domain/ledger/record-id.ts), so a malformed one is refused with the same
 * sentence here, in the portal and in the CLI (spec 4.5 rule 4).
 */
export const recordIdSchema = z
  .unknown()
  .meta({ type: 'string', pattern: '^[0-9]{12}$' })
  .describe('The record\'s 12-digit zero-padded sequence, e.g. "000000000042" (a JSON string; anything else is a 400).')

export const recordSchema = z.object({
  RecordID: z.string().describe('12-digit zero-padded sequence within the container, from 000000000001, gap-free.'),
  ScopeKey: z.string().nullable().describe('The scope (container); null for Platform-Config records.'),
  entityType: z.string().nullable(),
  entityId: z.string().nullable(),
  actionType: z.string().nullable(),
  userId: z.string().describe('Set by the server from the token (the account id), never by the caller.'),
  timestamp: z.string().describe('Set by the server, ISO 8601 UTC with milliseconds; never decreases along a chain.'),
  details: z.unknown().describe('The JSON object given on append.'),
  previousDigest: z.string().describe("Hex SHA-256 digest of the previous record (for 000000000001: the container's genesis value)."),
  digest: z.string().describe('Hex SHA-256 digest of this record (docs/design/ledger.md §3.4).'),
})

export const legacyRecordSchema = z.object({
  RecordID: z.string(),
  lookup: z.string().nullable().describe('The log (scope key) the event belongs to.'),
  entityType: z.string().nullable(),
  entityId: z.string().nullable(),
  action: z.string().nullable().describe('= actionType of the current shape.'),
  actor: z.string().describe('= userId of the current shape: set by the server from the token.'),
  timestamp: z.string(),
  details: z.unknown(),
  previousDigest: z.string(),
  digest: z.string(),
})

export function currentRecord(v: LedgerRecordView): z.infer<typeof recordSchema> {
  return {
    RecordID: v.record.recordId,
    ScopeKey: v.ScopeKey,
    entityType: v.entityType,
    entityId: v.entityId,
    actionType: v.actionType,
    userId: v.record.userId,
    timestamp: v.record.timestamp,
    details: v.details,
    previousDigest: hex(v.record.prevDigest),
    digest: hex(v.record.digest),
  }
}

export function legacyRecord(v: LedgerRecordView): z.infer<typeof legacyRecordSchema> {
  return {
    RecordID: v.record.recordId,
    lookup: v.ScopeKey,
    entityType: v.entityType,
    entityId: v.entityId,
    action: v.actionType,
    actor: v.record.userId,
    timestamp: v.record.timestamp,
    details: v.details,
    previousDigest: hex(v.record.prevDigest),
    digest: hex(v.record.digest),
  }
}

export const verdictSchema = z.object({
  Valid: z
    .boolean()
    .nullable()
    .describe("That record's own digest recomputed and compared; null when no RecordID was given (never true then)."),
  ChainValid: z.boolean().describe("Whether the whole container's chain is valid (and agrees with every signed checkpoint)."),
  Empty: z.boolean().describe('True when there was nothing to check: the container was never written (then ChainValid is true).'),
  BrokenAt: z.string().nullable().describe('RecordID of the first bad link of the chain, or null.'),
  ForkDetected: z
    .boolean()
    .describe(
      'Two records with one RecordID or one predecessor, records that no longer hash to a signed root, or contradicting checkpoints.',
    ),
  Reason: z
    .string()
    .describe(
      'The verdict in words: a code (OK, EMPTY, DIGEST_MISMATCH, LINK_MISMATCH, MISSING, TRUNCATED, FORK_DUP_SEQ, FORK_DUP_PREV, SPLIT_VIEW, …), then a sentence; says how many tail records no checkpoint covers yet.',
    ),
})

export const legacyVerdictSchema = z.object({
  isValid: z.boolean().describe('True when the whole chain (and the record, when a RecordID was given) verifies.'),
  recordCount: z.number().int().describe('Records read from the log.'),
  brokenAt: z.string().nullable().describe('RecordID of the first bad link, or null.'),
  reason: z.string().describe('The verdict in words, as Reason of the current shape.'),
})

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/

/**
 * An ISO 8601 date or date-time (with Z or an offset) as the stored timestamp form, rounded up to
 * the millisecond. A date alone is midnight UTC; as an end bound (`endOfDay`) it means the end of
 * that day, so `endDate=2026-01-31` includes the 31st.
 */
export function parseDateBound(name: string, value: string, endOfDay = false): string {
  const m = DATE_RE.exec(value)
  const ms = m ? Date.parse(m[4] === undefined ? `${value}T00:00:00Z` : value.replace(' ', 'T')) : Number.NaN
  if (!m || Number.isNaN(ms) || new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))).getUTCDate() !== Number(m[3])) {
    throw new InvalidInputError(
      `${name} must be an ISO 8601 date (2026-01-31) or date-time with a zone (2026-01-31T08:00:00Z), got ${JSON.stringify(value)}`,
    )
  }
  const fraction = m[7] ?? ''
  const subMs = fraction.length > 4 && /[1-9]/.test(fraction.slice(4)) ? 1 : 0
  const bound = m[4] === undefined && endOfDay ? ms + 86_400_000 : ms + subMs
  return new Date(bound).toISOString()
}

/** startDate / endDate as a half-open range [from, to) of stored timestamps; 400 when reversed. */
export function dateRange(startDate: string | undefined, endDate: string | undefined): { from?: string; to?: string } {
  const from = startDate === undefined ? undefined : parseDateBound('startDate', startDate)
  const to = endDate === undefined ? undefined : parseDateBound('endDate', endDate, true)
  if (from !== undefined && to !== undefined && from > to)
    throw new InvalidInputError(`startDate (${startDate}) is after endDate (${endDate})`)
  return { ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) }
}

export const pagingQuery = {
  limit: wholeNumber('limit', 1)
    .max(QUERY_LIMIT_MAX, `limit is at most ${QUERY_LIMIT_MAX}`)
    .default(QUERY_LIMIT_DEFAULT)
    .describe(`Records per page: default ${QUERY_LIMIT_DEFAULT}, at most ${QUERY_LIMIT_MAX}.`),
  offset: wholeNumber('offset', 0).max(QUERY_OFFSET_MAX).default(0).describe('Matching records to skip (default 0).'),
  startDate: filterText('startDate').optional().describe('Records at or after this time (ISO 8601 date or date-time with zone).'),
  endDate: filterText('endDate').optional().describe('Records before this time; a date alone includes that whole day.'),
}

/** Export file names: the scope key reduced to safe characters. */
export function exportFileName(scopeKey: string | null, format: 'json' | 'csv', at: number): string {
  const base = scopeKey === null ? 'platform-config' : scopeKey.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'scope'
  return `activity-log-${base}-${new Date(at).toISOString().slice(0, 10)}.${format}`
}
