/**
 * @module
 * The JSON body parser of every route. Bodies are parsed without loss (design §8): duplicate keys
 * and numbers JavaScript would round are refused, because the activity log hashes what was sent.
 */
import { InvalidInputError } from '../../domain/errors.js'

export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new InvalidInputError('the request body is empty; send a JSON object')
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new InvalidInputError(`the request body is not valid JSON: ${(error as Error).message}`)
  }
}
