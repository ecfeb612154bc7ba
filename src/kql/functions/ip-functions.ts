/**
 * @module
 * KQL IPv4/IPv6 functions (see ./README.md). Addresses may carry an IP-prefix (`/24`); every
 * comparison masks both sides with the smallest prefix involved. IPv6 functions accept IPv4
 * addresses as IPv4-mapped IPv6 (`::ffff:a.b.c.d`), and the prefix written on an IPv4 address
 * (also `::a.b.c.d/N`) counts IPv4 bits, i.e. N + 96 IPv6 bits.
 */
import type { DynamicValue, KqlValue } from '../types.js'
import { defineScalar, defineTextFunction, functionError, integerReader, textReader } from './function-definitions.js'
import type { ArgInfo, ScalarFunction } from './function-types.js'
import { dynamicToText, toNumber } from './value-conversions.js'

export interface Ipv4 {
  /** The address as an unsigned 32-bit number. */
  readonly address: number
  /** The IP-prefix, 0..32 (32 when none was written). */
  readonly prefix: number
}

export interface Ipv6 {
  readonly address: bigint
  /** The IP-prefix in IPv6 bits, 0..128. */
  readonly prefix: number
}

const IPV4_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

function parseDottedQuad(text: string): number | null {
  const m = IPV4_RE.exec(text)
  if (!m) return null
  let value = 0
  for (let k = 1; k <= 4; k++) {
    const octet = Number(m[k])
    if (octet > 255) return null
    value = value * 256 + octet
  }
  return value
}

function splitPrefix(text: string, max: number): { body: string; prefix: number | undefined } | null {
  const slash = text.indexOf('/')
  if (slash < 0) return { body: text, prefix: undefined }
  const p = text.slice(slash + 1)
  if (!/^\d{1,3}$/.test(p) || Number(p) > max) return null
  return { body: text.slice(0, slash), prefix: Number(p) }
}

/** Parses `a.b.c.d` or `a.b.c.d/N`; null when it is not an IPv4 address. */
export function parseIpv4(text: string): Ipv4 | null {
  const parts = splitPrefix(text.trim(), 32)
  if (!parts) return null
  const address = parseDottedQuad(parts.body)
  return address === null ? null : { address, prefix: parts.prefix ?? 32 }
}

function maskV4(address: number, prefix: number): number {
  if (prefix <= 0) return 0
  return Number(BigInt(address) & (((1n << BigInt(prefix)) - 1n) << BigInt(32 - prefix)))
}

function formatV4(address: number): string {
  return [address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255].join('.')
}

const V6_MASK = (1n << 128n) - 1n

function maskV6(address: bigint, prefix: number): bigint {
  if (prefix <= 0) return 0n
  return address & ((V6_MASK << BigInt(128 - prefix)) & V6_MASK)
}

/**
 * Parses an IPv6 or IPv4 address with an optional prefix into 128 bits. IPv4 (and IPv6 whose
 * leading groups are zero before a dotted quad) becomes IPv4-mapped; its prefix counts IPv4 bits.
 */
export function parseIpv6(text: string): Ipv6 | null {
  const s = text.trim()
  const v4 = parseIpv4(s)
  if (v4) return { address: 0xffff00000000n | BigInt(v4.address), prefix: v4.prefix + 96 }
  const slash = s.indexOf('/')
  const body = slash < 0 ? s : s.slice(0, slash)
  const prefixText = slash < 0 ? undefined : s.slice(slash + 1)
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null
  let groups: number[] = []
  let tail: number | null = null
  let head = body
  const dotted = /(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(body)
  if (dotted) {
    tail = parseDottedQuad(dotted[1]!)
    if (tail === null) return null
    head = body.slice(0, body.length - dotted[1]!.length)
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1)
  }
  const wanted = tail === null ? 8 : 6
  const halves = head.split('::')
  if (halves.length > 2) return null
  const parseGroups = (part: string): number[] | null => {
    if (part === '') return []
    const out: number[] = []
    for (const g of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null
      out.push(parseInt(g, 16))
    }
    return out
  }
  const left = parseGroups(halves[0]!)
  const right = halves.length === 2 ? parseGroups(halves[1]!) : []
  if (!left || !right) return null
  if (halves.length === 2) {
    const fill = wanted - left.length - right.length
    if (fill < 1) return null
    groups = [...left, ...new Array<number>(fill).fill(0), ...right]
  } else {
    groups = left
  }
  if (groups.length !== wanted) return null
  let address = 0n
  for (const g of groups) address = (address << 16n) | BigInt(g)
  let prefix = prefixText === undefined ? 128 : Number(prefixText)
  if (tail !== null) {
    const leadingZero = address === 0n || address === 0xffffn
    address = (address << 32n) | BigInt(tail)
    if (leadingZero) {
      // `::a.b.c.d` is read as IPv4-mapped, and its prefix counts IPv4 bits
      address = 0xffff00000000n | BigInt(tail)
      if (prefixText !== undefined) prefix = Number(prefixText) + 96
    }
  }
  if (prefix > 128) return null
  return { address, prefix }
}

/** Canonical IPv6 text: eight groups of four lower-case hex digits. */
export function formatIpv6(address: bigint): string {
  const groups: string[] = []
  for (let k = 7; k >= 0; k--) groups.push(((address >> BigInt(k * 16)) & 0xffffn).toString(16).padStart(4, '0'))
  return groups.join(':')
}

function optionalPrefix(args: readonly ArgInfo[], i: number, max: number): (values: readonly KqlValue[]) => number | null | undefined {
  if (args.length <= i) return () => undefined
  const read = integerReader(args, i)
  return (values) => {
    const p = read(values)
    return p === null || p < 0 || p > max ? null : p
  }
}

// ---------------------------------------------------------------------------------------------
// IPv4

const parseIpv4Fn = defineTextFunction({
  name: 'parse_ipv4',
  result: 'long',
  text: (text) => {
    const ip = parseIpv4(text)
    return ip === null ? null : maskV4(ip.address, ip.prefix)
  },
})

const parseIpv4Mask = defineScalar({
  name: 'parse_ipv4_mask',
  params: ['string', 'integer'],
  result: 'long',
  bind: (args) => {
    const read = textReader(args, 0)
    const prefix = optionalPrefix(args, 1, 32)
    return (values) => {
      const ip = parseIpv4(read(values))
      const p = prefix(values)
      if (ip === null || p === null || p === undefined) return null
      return maskV4(ip.address, Math.min(ip.prefix, p))
    }
  },
})

/** format_ipv4()'s first argument: IPv4 text or a big-endian number. */
function ipv4Arg(args: readonly ArgInfo[], i: number): (values: readonly KqlValue[]) => Ipv4 | null {
  const type = args[i]!.type
  if (type === 'string' || type === 'dynamic') {
    const read = textReader(args, i)
    return (values) => {
      const v = values[i]
      if (type === 'dynamic' && typeof v === 'number')
        return v >= 0 && v <= 0xffffffff && Number.isInteger(v) ? { address: v, prefix: 32 } : null
      return parseIpv4(read(values))
    }
  }
  return (values) => {
    const n = toNumber(type, values[i] ?? null)
    return n === null || !Number.isInteger(n) || n < 0 || n > 0xffffffff ? null : { address: n, prefix: 32 }
  }
}

function formatIpv4Def(name: string, withMask: boolean): ScalarFunction {
  return defineScalar({
    name,
    params: ['scalar', 'integer'],
    min: 1,
    result: 'string',
    bind: (args) => {
      const ip = ipv4Arg(args, 0)
      const prefix = optionalPrefix(args, 1, 32)
      return (values) => {
        const a = ip(values)
        const p = prefix(values)
        if (a === null || p === null) return ''
        const effective = Math.min(a.prefix, p ?? 32)
        const text = formatV4(maskV4(a.address, effective))
        return withMask ? `${text}/${effective}` : text
      }
    },
  })
}

/** The range list of *_is_in_any_range() and has_any_ipv4*(): string arguments or one dynamic array. */
function rangeList(name: string, args: readonly ArgInfo[]): (values: readonly KqlValue[]) => string[] {
  const rest = args.slice(1)
  if (rest.length === 1 && rest[0]!.type === 'dynamic') {
    return (values) => {
      const v = values[1] as DynamicValue
      if (Array.isArray(v)) return v.map((x) => dynamicToText(x))
      return v === null || v === undefined ? [] : [dynamicToText(v)]
    }
  }
  for (let i = 1; i < args.length; i++) {
    if (args[i]!.type !== 'string')
      throw functionError(name, `argument #${i + 1} (${args[i]!.text}) must be a string or a single dynamic array, got ${args[i]!.type}`)
  }
  const readers = rest.map((_, k) => textReader(args, k + 1))
  return (values) => readers.map((r) => r(values))
}

const PRIVATE_V4: readonly Ipv4[] = [
  { address: 0x0a000000, prefix: 8 },
  { address: 0xac100000, prefix: 12 },
  { address: 0xc0a80000, prefix: 16 },
]

const ipv4IsPrivate = defineScalar({
  name: 'ipv4_is_private',
  params: ['string'],
  result: 'bool',
  bind: (args) => {
    const a = textReader(args, 0)
    return (values) => {
      const ip = parseIpv4(a(values))
      if (ip === null) return null
      const masked = { address: maskV4(ip.address, ip.prefix), prefix: ip.prefix }
      return PRIVATE_V4.some((r) => inRange(V4, masked, r))
    }
  },
})

const ipv4NetmaskSuffix = defineScalar({
  name: 'ipv4_netmask_suffix',
  params: ['string'],
  result: 'long',
  bind: (args) => {
    const a = textReader(args, 0)
    return (values) => parseIpv4(a(values))?.prefix ?? null
  },
})

/** The fewest CIDR blocks covering [start, end] (both inclusive). */
export function rangeToCidrs(start: number, end: number): string[] {
  const out: string[] = []
  let cur = start
  while (cur <= end) {
    let size = 32
    // grow the block while it stays aligned and inside the range
    while (size > 0) {
      const next = size - 1
      const blockSize = 2 ** (32 - next)
      if (cur % blockSize !== 0 || cur + blockSize - 1 > end) break
      size = next
    }
    out.push(`${formatV4(cur)}/${size}`)
    cur += 2 ** (32 - size)
  }
  return out
}

const ipv4RangeToCidrList = defineScalar({
  name: 'ipv4_range_to_cidr_list',
  params: ['string', 'string'],
  result: 'dynamic',
  bind: (args) => {
    const a = textReader(args, 0),
      b = textReader(args, 1)
    return (values) => {
      const start = parseIpv4(a(values)),
        end = parseIpv4(b(values))
      if (start === null || end === null || start.address > end.address) return null
      return rangeToCidrs(start.address, end.address)
    }
  },
})

// ---------------------------------------------------------------------------------------------
// IPv6

const parseIpv6Fn = defineTextFunction({
  name: 'parse_ipv6',
  result: 'string',
  text: (text) => {
    const ip = parseIpv6(text)
    return ip === null ? '' : formatIpv6(maskV6(ip.address, ip.prefix))
  },
})

const parseIpv6Mask = defineScalar({
  name: 'parse_ipv6_mask',
  params: ['string', 'integer'],
  result: 'string',
  bind: (args) => {
    const read = textReader(args, 0)
    const prefix = optionalPrefix(args, 1, 128)
    return (values) => {
      const ip = parseIpv6(read(values))
      const p = prefix(values)
      if (ip === null || p === null || p === undefined) return ''
      return formatIpv6(maskV6(ip.address, Math.min(ip.prefix, p)))
    }
  },
})

/** What the comparison functions need of an address family (IPv4 in a number, IPv6 in a bigint). */
interface IpFamily<A extends number | bigint> {
  readonly name: 'ipv4' | 'ipv6'
  readonly bits: number
  readonly parse: (text: string) => { readonly address: A; readonly prefix: number } | null
  readonly mask: (address: A, prefix: number) => A
}

const V4: IpFamily<number> = { name: 'ipv4', bits: 32, parse: parseIpv4, mask: maskV4 }
const V6: IpFamily<bigint> = { name: 'ipv6', bits: 128, parse: parseIpv6, mask: maskV6 }

/** Both addresses masked with the smallest prefix (theirs and the optional argument), or null. */
function maskedPair<A extends number | bigint>(family: IpFamily<A>, a: string, b: string, p: number | null | undefined): [A, A] | null {
  const x = family.parse(a)
  const y = family.parse(b)
  if (x === null || y === null || p === null) return null
  const prefix = Math.min(x.prefix, y.prefix, p ?? family.bits)
  return [family.mask(x.address, prefix), family.mask(y.address, prefix)]
}

function inRange<A extends number | bigint>(family: IpFamily<A>, ip: { address: A }, range: { address: A; prefix: number }): boolean {
  return family.mask(ip.address, range.prefix) === family.mask(range.address, range.prefix)
}

/** ipv4_compare / ipv6_compare (-1, 0, 1) and ipv4_is_match / ipv6_is_match over the masked pair. */
function pairFunction<A extends number | bigint>(family: IpFamily<A>, suffix: 'compare' | 'is_match'): ScalarFunction {
  return defineScalar({
    name: `${family.name}_${suffix}`,
    params: ['string', 'string', 'integer'],
    min: 2,
    result: suffix === 'compare' ? 'long' : 'bool',
    bind: (args) => {
      const a = textReader(args, 0),
        b = textReader(args, 1)
      const prefix = optionalPrefix(args, 2, family.bits)
      return (values) => {
        const pair = maskedPair(family, a(values), b(values), prefix(values))
        if (pair === null) return null
        if (suffix === 'is_match') return pair[0] === pair[1]
        return pair[0] < pair[1] ? -1 : pair[0] > pair[1] ? 1 : 0
      }
    },
  })
}

function isInRangeFunction<A extends number | bigint>(family: IpFamily<A>): ScalarFunction {
  return defineScalar({
    name: `${family.name}_is_in_range`,
    params: ['string', 'string'],
    result: 'bool',
    bind: (args) => {
      const a = textReader(args, 0),
        b = textReader(args, 1)
      return (values) => {
        const ip = family.parse(a(values)),
          range = family.parse(b(values))
        return ip === null || range === null ? null : inRange(family, ip, range)
      }
    },
  })
}

function isInAnyRangeFunction<A extends number | bigint>(family: IpFamily<A>): ScalarFunction {
  const name = `${family.name}_is_in_any_range`
  return defineScalar({
    name,
    params: ['string', 'scalar'],
    min: 2,
    max: 64,
    result: 'bool',
    bind: (args) => {
      const a = textReader(args, 0)
      const ranges = rangeList(name, args)
      return (values) => {
        const ip = family.parse(a(values))
        if (ip === null) return null
        for (const r of ranges(values)) {
          const range = family.parse(r)
          if (range === null) return null
          if (inRange(family, ip, range)) return true
        }
        return false
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// IPv4 text search

/** The valid IPv4 addresses in a text, delimited by non-alphanumeric characters. */
export function ipv4sInText(text: string): number[] {
  const out: number[] = []
  const re = /[0-9.]+/g
  for (const m of text.matchAll(re)) {
    const before = text[m.index - 1]
    const after = text[m.index + m[0].length]
    if ((before && /[A-Za-z0-9_]/.test(before)) || (after && /[A-Za-z0-9_]/.test(after))) continue
    const candidate = m[0].replace(/^\.+|\.+$/g, '')
    const ip = parseDottedQuad(candidate)
    if (ip !== null) out.push(ip)
  }
  return out
}

/** A lookup prefix: a full address, or one to three octets each followed by a dot. */
function parseIpv4Prefix(text: string): { octets: number[] } | null {
  const s = text.trim()
  const full = parseDottedQuad(s)
  if (full !== null) return { octets: [full >>> 24, (full >>> 16) & 255, (full >>> 8) & 255, full & 255] }
  if (!/^(\d{1,3}\.){1,3}$/.test(s)) return null
  const octets = s.slice(0, -1).split('.').map(Number)
  return octets.every((o) => o <= 255) ? { octets } : null
}

function ipMatchesPrefix(ip: number, prefix: { octets: number[] }): boolean {
  const octets = [ip >>> 24, (ip >>> 16) & 255, (ip >>> 8) & 255, ip & 255]
  return prefix.octets.every((o, k) => octets[k] === o)
}

function hasIpv4Def(name: string, prefixMode: boolean, any: boolean): ScalarFunction {
  return defineScalar({
    name,
    params: ['string', 'scalar'],
    min: 2,
    max: any ? 64 : 2,
    result: 'bool',
    bind: (args) => {
      const text = textReader(args, 0)
      if (!any && args[1]!.type !== 'string')
        throw functionError(name, `argument #2 (${args[1]!.text}) must be a string, got ${args[1]!.type}`)
      const lookups = any ? rangeList(name, args) : ((r) => (values: readonly KqlValue[]) => [r(values)])(textReader(args, 1))
      return (values) => {
        const wanted = lookups(values)
          .map((l) => parseIpv4Prefix(l))
          .filter((p): p is { octets: number[] } => p !== null && (prefixMode || p.octets.length === 4))
        if (wanted.length === 0) return false
        const found = ipv4sInText(text(values))
        return found.some((ip) => wanted.some((w) => ipMatchesPrefix(ip, w)))
      }
    },
  })
}

export const ipFunctions: readonly ScalarFunction[] = [
  parseIpv4Fn,
  parseIpv4Mask,
  formatIpv4Def('format_ipv4', false),
  formatIpv4Def('format_ipv4_mask', true),
  pairFunction(V4, 'compare'),
  pairFunction(V4, 'is_match'),
  isInRangeFunction(V4),
  isInAnyRangeFunction(V4),
  ipv4IsPrivate,
  ipv4NetmaskSuffix,
  ipv4RangeToCidrList,
  parseIpv6Fn,
  parseIpv6Mask,
  pairFunction(V6, 'compare'),
  pairFunction(V6, 'is_match'),
  isInRangeFunction(V6),
  isInAnyRangeFunction(V6),
  hasIpv4Def('has_ipv4', false, false),
  hasIpv4Def('has_ipv4_prefix', true, false),
  hasIpv4Def('has_any_ipv4', false, true),
  hasIpv4Def('has_any_ipv4_prefix', true, true),
]
