/**
 * @module
 * The cold-data export request (spec 2.4, 8) and its arithmetic: the limits, the strict ISO 8601
 * times of the `[from, to)` window, and which slice of the 25,000-row capped set a page is
 * (design §5).
 */
import { dateTimeOfMatch, TICKS_PER_MINUTE } from '../../kql/index.js'

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

/** Spec 8: an export holds at most this many rows of its window; beyond it `truncated` is set. */
export const EXPORT_ROW_CAP = 25_000
export const PAGE_SIZE_DEFAULT = 1000
export const PAGE_SIZE_MAX = 5000
/** Spec 2.5, 8: a download URL expires 15 minutes after issue. */
export const DOWNLOAD_URL_LIFETIME_MS = 15 * 60_000

export interface ExportRequest {
  readonly format: ExportFormat
  /** Inclusive start of the window, datetime ticks (100 ns since the Unix epoch). */
  readonly from: bigint
  /** Exclusive end of the window, datetime ticks. */
  readonly to: bigint
  /** 1-based page of the capped set. */
  readonly page: number
  readonly pageSize: number
}

// Date, optionally a time (minutes required, seconds and up to 7 fraction digits optional) and a
// zone. A date-time without a zone is UTC, as every time in Kusto is.
const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/

/**
 * Parses an ISO 8601 time (`2026-01-01`, `2026-01-01T08:00:00Z`, `2026-01-01T10:00:00.5+02:00`) to
 * datetime ticks. Returns a reason (a string) when the text is not one.
 */
export function parseIsoTime(text: string): bigint | string {
  const m = ISO_RE.exec(text)
  if (!m) return 'is not an ISO 8601 time; write e.g. 2026-01-01T00:00:00Z or 2026-01-01T02:00:00+02:00'
  if ((m[7] ?? '').length > 7) return 'has more than 7 fraction digits (the precision is 100 ns)'
  const ticks = dateTimeOfMatch(m)
  if (ticks === null) return 'is not a valid calendar date and time (check month, day, hours, minutes and seconds)'
  const zone = m[8]
  if (!zone || zone === 'Z' || zone === 'z') return ticks
  const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!
  const hours = Number(z[2])
  const minutes = Number(z[3] ?? 0)
  if (hours > 23 || minutes > 59) return `has an impossible timezone offset "${zone}"`
  const offset = BigInt(hours * 60 + minutes) * TICKS_PER_MINUTE
  return z[1] === '+' ? ticks - offset : ticks + offset
}

export interface PageSlice {
  /** Rows of the capped set before this page. */
  readonly offset: number
  /** Rows in this page's file (0 for a page past the end). */
  readonly rowCount: number
  /** ceil(totalRows / pageSize); 0 when the window is empty. */
  readonly pageCount: number
}

/** Which rows of a capped set of `totalRows` rows page `page` holds. */
export function pageSlice(totalRows: number, page: number, pageSize: number): PageSlice {
  const offset = (page - 1) * pageSize
  return {
    offset,
    rowCount: Math.max(0, Math.min(pageSize, totalRows - offset)),
    pageCount: Math.ceil(totalRows / pageSize),
  }
}
