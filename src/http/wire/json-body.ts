/**
 * @module
 * The JSON body parser of every route. Bodies are parsed without loss (design §8): duplicate keys,
 * numbers JavaScript would round, lone surrogates and invalid UTF-8 are refused with a position,
 * because the activity log hashes what was sent.
 */
import { InvalidInputError } from '../../domain/errors.js'
import { parseStrictJson, StrictJsonError } from '../../shared/strict-json.js'

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
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw new InvalidInputError(`${path}: text may not contain the NUL character (\\u0000)`)
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      refuseNulCharacters(item, `${path}[${i}]`)
    })
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) throw new InvalidInputError(`${path}: property names may not contain the NUL character (\\u0000)`)
      refuseNulCharacters(item, `${path}.${key}`)
    }
  }
}
