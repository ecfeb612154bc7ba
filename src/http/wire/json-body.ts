/**
 * @module
 * The body parsers of every route. JSON bodies are parsed without loss (design §8): duplicate keys,
 * numbers JavaScript would round, lone surrogates and invalid UTF-8 are refused with a position,
 * because the activity log hashes what was sent. Text bodies (NDJSON, CSV) are decoded as strictly.
 * A route may take its body unparsed (`bodyBytes`, push ingest reads its rows in one pass); then
 * parseBodyOfKind is what the parser would have given, value or error.
 */
import { InvalidInputError } from '../../domain/errors.js'
import { parseStrictJson, StrictJsonError } from '../../shared/strict-json.js'
import { findNulCharacter } from '../../shared/text-rules.js'

/** An empty body parses to undefined: each route says whether it needs one. */
export function parseJsonBody(body: Uint8Array | string, options: { exactIntegers?: boolean } = {}): unknown {
  if (body.length === 0 || (typeof body === 'string' && body.trim() === '')) return undefined
  let value: unknown
  try {
    value = parseStrictJson(body, { exactIntegers: options.exactIntegers === true })
  } catch (error) {
    if (error instanceof StrictJsonError) throw new InvalidInputError(`the request body is not valid JSON: ${error.message}`)
    throw error
  }
  refuseNulCharacters(value)
  return value
}

/**
 * Text may not contain U+0000: PostgreSQL cannot store it, and no legitimate value needs it.
 * Refused for every body so both backends answer the same 400.
 */
export function refuseNulCharacters(value: unknown, path = 'body'): void {
  const place = findNulCharacter(value, path)
  if (place === undefined) return
  throw new InvalidInputError(
    place.inName
      ? `${place.path}: property names may not contain the NUL character (\\u0000)`
      : `${place.path}: text may not contain the NUL character (\\u0000)`,
  )
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** A text body (NDJSON, CSV, plain) as text: bytes that are not UTF-8 are a 400, never stored as U+FFFD. */
export function decodeTextBody(bytes: Uint8Array): string {
  try {
    return STRICT_UTF8.decode(bytes)
  } catch {
    throw new InvalidInputError(`the request body is not valid UTF-8 (at byte ${firstInvalidUtf8Byte(bytes)}); send UTF-8 text`)
  }
}

/** The offset of the first byte that makes `bytes` invalid UTF-8 (for the error message). */
function firstInvalidUtf8Byte(bytes: Uint8Array): number {
  let low = 0
  let high = bytes.length
  // The longest valid prefix, by bisection (decoding a prefix may fail only because it cuts a character
  // in two, so the answer is within 3 bytes of the point found; reported as that point).
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid), { stream: true })
      low = mid
    } catch {
      high = mid - 1
    }
  }
  return low
}

/** Which parser a body's Content-Type chose: JSON, or text (NDJSON, CSV, plain). */
export type BodyKind = 'json' | 'text'

/** The body of a route declared with `bodyBytes: true`, as the content-type parser left it. */
export interface UnparsedBody {
  readonly bytes: Uint8Array
  readonly kind: BodyKind
}

/** What the content-type parser makes of a body of that kind: a JSON value or text; throws its 400. */
export function parseBodyOfKind(bytes: Uint8Array, kind: BodyKind, options: { exactIntegers?: boolean } = {}): unknown {
  return kind === 'json' ? parseJsonBody(bytes, options) : decodeTextBody(bytes)
}
