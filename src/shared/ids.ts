/**
 * @module
 * Identifier generation. Ids are random, URL-safe and carry a short prefix naming what they are
 * (`tok_`, `acc_`, `wks_`), so a log line or support ticket says what an id refers to.
 */
import { randomBytes } from 'node:crypto'

/** A random id: `prefix_` + 20 base32 characters (100 bits). */
export function newId(prefix: string): string {
  return `${prefix}_${base32(randomBytes(13)).slice(0, 20)}`
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567'

function base32(bytes: Uint8Array): string {
  let out = ''
  let bits = 0
  let value = 0
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31]
  return out
}
