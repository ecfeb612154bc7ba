/**
 * @module
 * The exact 64-bit `long` (README "The value of a long"): one canonical JavaScript form per value,
 * a `number` when it is a safe integer and a `bigint` otherwise, so equality, Map keys and the
 * common small values stay plain numbers. Arithmetic wraps around at 64 bits, as Kusto's
 * (.NET unchecked) `long` arithmetic does.
 */

/** A long value in canonical form. */
export type Long = number | bigint

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER)
const SAFE_MIN = -SAFE_MAX

/** The canonical form of a 64-bit integer given as a bigint (wrapped to 64 bits first). */
export function canonLong(v: bigint): Long {
  const w = v >= INT64_MIN && v <= INT64_MAX ? v : BigInt.asIntN(64, v)
  return w >= SAFE_MIN && w <= SAFE_MAX ? Number(w) : w
}

/** True when `v` is a long in either form (an integral number or a bigint). */
export function isLongValue(v: unknown): v is Long {
  return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))
}

/**
 * A long from what a database driver, a JSON parser or a caller hands over: bigint, integral
 * number (a double beyond 2^53 is taken at its exact binary value), or decimal integer text.
 * Anything else is null.
 */
export function longFrom(raw: unknown): Long | null {
  if (typeof raw === 'number') {
    if (Number.isSafeInteger(raw)) return raw === 0 ? 0 : raw
    return Number.isInteger(raw) ? canonLong(BigInt(raw)) : null
  }
  if (typeof raw === 'bigint') return canonLong(raw)
  if (typeof raw === 'string') return longFromText(raw)
  return null
}

/** Exact decimal (optionally signed) or `0x` hex integer text → long; null for other text or values outside int64. */
export function longFromText(text: string): Long | null {
  const s = text.trim()
  if (/^[+-]?\d{1,15}$/.test(s)) {
    const n = Number(s)
    return n === 0 ? 0 : n
  }
  if (/^[+-]?\d+$/.test(s) || /^[+-]?0x[0-9a-f]+$/i.test(s)) {
    const neg = s.startsWith('-')
    const big = BigInt(s.replace(/^[+-]/, ''))
    const v = neg ? -big : big
    if (v < INT64_MIN || v > INT64_MAX) return null
    return canonLong(v)
  }
  return null
}

/** A long as a bigint. */
export function longToBigInt(v: Long): bigint {
  return typeof v === 'bigint' ? v : BigInt(v)
}

/** A long (or int, or any numeric value) as a double: Kusto's long → real conversion. */
export function longToNumber(v: Long): number {
  return typeof v === 'number' ? v : Number(v)
}

/** Exact decimal text of a long. */
export function longToString(v: Long): string {
  return typeof v === 'bigint' ? v.toString() : String(v)
}

/** A double truncated toward zero to a long (tolong(real)); null for NaN/±Infinity, wrapped beyond int64. */
export function longFromDouble(n: number): Long | null {
  if (!Number.isFinite(n)) return null
  const t = Math.trunc(n)
  if (Number.isSafeInteger(t)) return t === 0 ? 0 : t
  return canonLong(BigInt(t))
}

export function longAdd(a: Long, b: Long): Long {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b
    if (Number.isSafeInteger(r)) return r
  }
  return canonLong(longToBigInt(a) + longToBigInt(b))
}

export function longSub(a: Long, b: Long): Long {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a - b
    if (Number.isSafeInteger(r)) return r
  }
  return canonLong(longToBigInt(a) - longToBigInt(b))
}

export function longMul(a: Long, b: Long): Long {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a * b
    // a product of integers below 2^53 in magnitude is exact
    if (Number.isSafeInteger(r)) return r === 0 ? 0 : r
  }
  return canonLong(longToBigInt(a) * longToBigInt(b))
}

/** Integer division truncating toward zero; null for a zero divisor. */
export function longDiv(a: Long, b: Long): Long | null {
  if (typeof a === 'number' && typeof b === 'number') {
    if (b === 0) return null
    const r = Math.trunc(a / b)
    return r === 0 ? 0 : r
  }
  const d = longToBigInt(b)
  if (d === 0n) return null
  return canonLong(longToBigInt(a) / d)
}

/** Kusto's modulo: never negative (`-14 % 12 == 10`); null for a zero divisor. */
export function longMod(a: Long, b: Long): Long | null {
  if (typeof a === 'number' && typeof b === 'number') {
    if (b === 0) return null
    const m = Math.abs(b)
    const r = a % m
    return r < 0 ? r + m : r === 0 ? 0 : r
  }
  const d = longToBigInt(b)
  if (d === 0n) return null
  const m = d < 0n ? -d : d
  const r = longToBigInt(a) % m
  return canonLong(r < 0n ? r + m : r)
}

export function longNeg(a: Long): Long {
  if (typeof a === 'number') return a === 0 ? 0 : -a
  return canonLong(-a)
}

export function longAbs(a: Long): Long {
  if (typeof a === 'number') return Math.abs(a)
  return canonLong(a < 0n ? -a : a)
}

/** Three-way comparison of two longs (exact across forms). */
export function longCompare(a: Long, b: Long): number {
  return a < b ? -1 : a > b ? 1 : 0
}
