/**
 * @module
 * KQL hash functions (see ./README.md): hash/hash_xxhash64 (XXH64, seed 0) and the hex digests
 * hash_md5/hash_sha1/hash_sha256. Also the CRC-32 the gzip encoder needs. hash_combine and
 * hash_many are refused (../unsupported.ts): Kusto does not document its mixing step.
 *
 * What gets hashed matches Kusto's documented results: XXH64 reads strings as UTF-8 and datetimes
 * as their .NET tick count (8 bytes, little-endian); the digests hash the value's text form
 * (`tostring`), e.g. `2020-01-01T00:00:00.0000000Z` for a datetime.
 */
import { createHash } from 'node:crypto'
import { canonLong, isLongValue, type Long, longToBigInt } from '../long.js'
import type { KqlType, KqlValue } from '../types.js'
import { MIN_DATETIME_TICKS } from '../values.js'
import { defineScalar } from './function-definitions.js'
import type { ArgInfo, ScalarFunction } from './function-types.js'
import { coercer } from './numeric-helpers.js'
import { guidToBytes, valueToString } from './value-conversions.js'

const MASK64 = (1n << 64n) - 1n
const P1 = 11400714785074694791n
const P2 = 14029467366897019727n
const P3 = 1609587929392839161n
const P4 = 9650029242287828579n
const P5 = 2870177450012600261n

function rotl64(x: bigint, r: bigint): bigint {
  return ((x << r) | (x >> (64n - r))) & MASK64
}

function xxRound(acc: bigint, input: bigint): bigint {
  return (rotl64((acc + input * P2) & MASK64, 31n) * P1) & MASK64
}

function xxMerge(acc: bigint, value: bigint): bigint {
  return ((acc ^ xxRound(0n, value)) * P1 + P4) & MASK64
}

/** XXH64 of a byte buffer (unsigned 64-bit result). */
export function xxhash64(data: Uint8Array, seed: bigint = 0n): bigint {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  const len = data.length
  let i = 0
  let h: bigint
  if (len >= 32) {
    let v1 = (seed + P1 + P2) & MASK64
    let v2 = (seed + P2) & MASK64
    let v3 = seed & MASK64
    let v4 = (seed - P1) & MASK64
    while (i <= len - 32) {
      v1 = xxRound(v1, view.getBigUint64(i, true))
      v2 = xxRound(v2, view.getBigUint64(i + 8, true))
      v3 = xxRound(v3, view.getBigUint64(i + 16, true))
      v4 = xxRound(v4, view.getBigUint64(i + 24, true))
      i += 32
    }
    h = (rotl64(v1, 1n) + rotl64(v2, 7n) + rotl64(v3, 12n) + rotl64(v4, 18n)) & MASK64
    h = xxMerge(h, v1)
    h = xxMerge(h, v2)
    h = xxMerge(h, v3)
    h = xxMerge(h, v4)
  } else {
    h = (seed + P5) & MASK64
  }
  h = (h + BigInt(len)) & MASK64
  while (i + 8 <= len) {
    h ^= xxRound(0n, view.getBigUint64(i, true))
    h = (rotl64(h, 27n) * P1 + P4) & MASK64
    i += 8
  }
  if (i + 4 <= len) {
    h ^= (BigInt(view.getUint32(i, true)) * P1) & MASK64
    h = (rotl64(h, 23n) * P2 + P3) & MASK64
    i += 4
  }
  while (i < len) {
    h ^= (BigInt(data[i]!) * P5) & MASK64
    h = (rotl64(h, 11n) * P1) & MASK64
    i++
  }
  h ^= h >> 33n
  h = (h * P2) & MASK64
  h ^= h >> 29n
  h = (h * P3) & MASK64
  h ^= h >> 32n
  return h
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/** CRC-32 (IEEE 802.3, as zlib and gzip use it). */
export function crc32(data: Uint8Array): number {
  let c = 0xffffffff
  for (const byte of data) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/** The bytes Kusto's XXH64 hashes for a value: UTF-8 text, little-endian numbers and ticks, .NET guid order. */
function hashBytes(type: KqlType, value: KqlValue): Uint8Array {
  const buf = Buffer.alloc(8)
  switch (type) {
    case 'string':
      return Buffer.from(value as string, 'utf8')
    case 'datetime':
      buf.writeBigInt64LE((value as bigint) - MIN_DATETIME_TICKS)
      return buf
    case 'timespan':
      buf.writeBigInt64LE(value as bigint)
      return buf
    case 'int': {
      const b = Buffer.alloc(4)
      b.writeInt32LE(value as number)
      return b
    }
    case 'long':
      buf.writeBigInt64LE(longToBigInt(value as Long))
      return buf
    case 'real':
    case 'decimal':
      buf.writeDoubleLE(value as number)
      return buf
    case 'bool':
      return Buffer.from([value ? 1 : 0])
    case 'guid':
      return guidToBytes(value as string)
    case 'dynamic':
      return Buffer.from(valueToString(type, value), 'utf8')
  }
}

/** A 64-bit hash as a signed long, exact (long.ts). */
function asLong(h: bigint): Long {
  return canonLong(BigInt.asIntN(64, h))
}

function hashValue(type: KqlType, value: KqlValue): bigint {
  return xxhash64(hashBytes(type, value))
}

function xxhashDef(name: string): ScalarFunction {
  return defineScalar({
    name,
    params: ['notDynamic', 'integer'],
    min: 1,
    result: 'long',
    bind: (args) => {
      const type = args[0]!.type
      // the modulo is read as an exact long: a double would round one beyond 2^53 (and the result with it)
      const mod = args.length > 1 ? coercer('long', args[1]!.type) : undefined
      return (values) => {
        const v = values[0]
        if (v === null || v === undefined) return null
        const h = hashValue(type, v)
        if (!mod) return asLong(h)
        const m = mod(values[1] ?? null)
        if (!isLongValue(m) || m <= 0) return null
        return canonLong(h % longToBigInt(m))
      }
    },
  })
}

function digestDef(name: string, algorithm: string): ScalarFunction {
  return defineScalar({
    name,
    params: ['scalar'],
    result: 'string',
    bind: (args: readonly ArgInfo[]) => {
      const type = args[0]!.type
      return (values) => {
        const v = values[0]
        if (v === null || v === undefined) return ''
        return createHash(algorithm).update(valueToString(type, v), 'utf8').digest('hex')
      }
    },
  })
}

export const hashFunctions: readonly ScalarFunction[] = [
  xxhashDef('hash'),
  xxhashDef('hash_xxhash64'),
  digestDef('hash_md5', 'md5'),
  digestDef('hash_sha1', 'sha1'),
  digestDef('hash_sha256', 'sha256'),
]
