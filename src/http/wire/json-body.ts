/**
 * @module
 * The JSON body parser of every route. Bodies are parsed without loss (design §8): duplicate keys,
 * numbers JavaScript would round, lone surrogates and invalid UTF-8 are refused with a position,
 * because the activity log hashes what was sent.
 */
import { InvalidInputError } from '../../domain/errors.js'
import { parseStrictJson, StrictJsonError } from '../../shared/strict-json.js'

/** An empty body parses to undefined: each route says whether it needs one. */
export function parseJsonBody(body: Uint8Array | string): unknown {
  if (body.length === 0 || (typeof body === 'string' && body.trim() === '')) return undefined
  try {
    return parseStrictJson(body)
  } catch (error) {
    if (error instanceof StrictJsonError) throw new InvalidInputError(`the request body is not valid JSON: ${error.message}`)
    throw error
  }
}
