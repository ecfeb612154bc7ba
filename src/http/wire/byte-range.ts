/**
 * @module
 * HTTP Range requests for downloads (RFC 9110 §14): one byte range (`bytes=a-b`, `bytes=a-`,
 * `bytes=-n`), honoured only while `If-Range` (when sent) names the file's current ETag. A
 * malformed Range, another unit or several ranges are ignored (the whole file is sent), as the RFC
 * allows; a well-formed range that starts past the end is unsatisfiable (416).
 */

export type RangeDecision =
  | { readonly kind: 'full' }
  | { readonly kind: 'partial'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' }

const FULL: RangeDecision = { kind: 'full' }
const SPEC_RE = /^bytes=(\d*)-(\d*)$/

export function byteRange(range: string | undefined, ifRange: string | undefined, etag: string, size: number): RangeDecision {
  if (range === undefined) return FULL
  // An If-Range that is not our (strong) ETag, including a date, means "the file changed: send it all".
  if (ifRange !== undefined && ifRange.trim() !== etag) return FULL
  const m = SPEC_RE.exec(range.replace(/\s+/g, ''))
  if (!m) return FULL
  const [, first, last] = m
  if (first === '' && last === '') return FULL
  if (first === '') {
    const suffix = Number(last)
    if (!Number.isSafeInteger(suffix)) return FULL
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' }
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  const end = last === '' ? Number.MAX_SAFE_INTEGER : Number(last)
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return FULL
  if (start >= size) return { kind: 'unsatisfiable' }
  return { kind: 'partial', start, end: Math.min(end, size - 1) }
}
