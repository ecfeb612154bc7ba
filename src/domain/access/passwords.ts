/**
 * @module
 * Password hashing with scrypt (node:crypto), a per-password random salt and a self-describing
 * string `scrypt$<log2N>$<r>$<p>$<salt b64>$<hash b64>`, so the cost can be raised later without
 * invalidating stored hashes. Verification is constant-time.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'

const KEY_LENGTH = 32

export interface ScryptCost {
  readonly log2N: number
  readonly r: number
  readonly p: number
}

/** OWASP's recommended minimum for scrypt (N = 2^17, r = 8, p = 1). */
export const DEFAULT_SCRYPT_COST: ScryptCost = { log2N: 17, r: 8, p: 1 }

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const N = 2 ** cost.log2N
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    )
  })
}

export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_SCRYPT_COST): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, cost)
  return ['scrypt', cost.log2N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$')
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false
  const cost = { log2N: Number(parts[1]), r: Number(parts[2]), p: Number(parts[3]) }
  if (![cost.log2N, cost.r, cost.p].every((n) => Number.isInteger(n) && n > 0) || cost.log2N > 22) return false
  const expected = Buffer.from(parts[5]!, 'base64')
  const actual = await derive(password, Buffer.from(parts[4]!, 'base64'), cost)
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}
