/**
 * @module
 * Punycode (RFC 3492) and the punycode_* string functions (split out of string-functions.ts,
 * issue 19 item 6). Domains are encoded label by label, as the documentation's examples show
 * (no IDNA mapping).
 */
import { defineTextFunction } from './function-definitions.js'
import { codePoints } from './value-conversions.js'

// ---------------------------------------------------------------------------------------------
// punycode (RFC 3492)

const PUNY = { base: 36, tmin: 1, tmax: 26, skew: 38, damp: 700, bias: 72, n: 128 } as const

function punyAdapt(delta: number, numPoints: number, first: boolean): number {
  let d = first ? Math.floor(delta / PUNY.damp) : delta >> 1
  d += Math.floor(d / numPoints)
  let k = 0
  while (d > ((PUNY.base - PUNY.tmin) * PUNY.tmax) >> 1) {
    d = Math.floor(d / (PUNY.base - PUNY.tmin))
    k += PUNY.base
  }
  return k + Math.floor(((PUNY.base - PUNY.tmin + 1) * d) / (d + PUNY.skew))
}

function punyDigit(d: number): string {
  return String.fromCharCode(d < 26 ? d + 97 : d + 22)
}

/** Punycode-encodes a string (no `xn--` prefix); null when it cannot be encoded. */
export function punycodeEncode(input: string): string | null {
  const points = codePoints(input).map((c) => c.codePointAt(0)!)
  let out = points
    .filter((p) => p < 0x80)
    .map((p) => String.fromCharCode(p))
    .join('')
  const basic = out.length
  let handled = basic
  if (basic > 0) out += '-'
  let n: number = PUNY.n,
    delta = 0,
    bias: number = PUNY.bias
  while (handled < points.length) {
    const m = Math.min(...points.filter((p) => p >= n))
    delta += (m - n) * (handled + 1)
    if (!Number.isSafeInteger(delta)) return null
    n = m
    for (const p of points) {
      if (p < n) delta++
      if (p === n) {
        let q = delta
        for (let k = PUNY.base; ; k += PUNY.base) {
          const t = k <= bias ? PUNY.tmin : k >= bias + PUNY.tmax ? PUNY.tmax : k - bias
          if (q < t) break
          out += punyDigit(t + ((q - t) % (PUNY.base - t)))
          q = Math.floor((q - t) / (PUNY.base - t))
        }
        out += punyDigit(q)
        bias = punyAdapt(delta, handled + 1, handled === basic)
        delta = 0
        handled++
      }
    }
    delta++
    n++
  }
  return out
}

/** Decodes a punycode string (no `xn--` prefix); null when it is not valid punycode. */
export function punycodeDecode(input: string): string | null {
  const lastDash = input.lastIndexOf('-')
  const output: number[] = []
  for (let j = 0; j < Math.max(lastDash, 0); j++) {
    const c = input.charCodeAt(j)
    if (c >= 0x80) return null
    output.push(c)
  }
  let n: number = PUNY.n,
    i = 0,
    bias: number = PUNY.bias
  for (let pos = lastDash > 0 ? lastDash + 1 : 0; pos < input.length; ) {
    const oldi = i
    let w = 1
    for (let k = PUNY.base; ; k += PUNY.base) {
      if (pos >= input.length) return null
      const c = input.charCodeAt(pos++)
      const digit = c - 48 < 10 ? c - 22 : c - 65 < 26 ? c - 65 : c - 97 < 26 ? c - 97 : PUNY.base
      if (digit >= PUNY.base) return null
      i += digit * w
      const t = k <= bias ? PUNY.tmin : k >= bias + PUNY.tmax ? PUNY.tmax : k - bias
      if (digit < t) break
      w *= PUNY.base - t
      if (!Number.isSafeInteger(i) || !Number.isSafeInteger(w)) return null
    }
    bias = punyAdapt(i - oldi, output.length + 1, oldi === 0)
    n += Math.floor(i / (output.length + 1))
    i %= output.length + 1
    if (n > 0x10ffff) return null
    output.splice(i++, 0, n)
  }
  try {
    return String.fromCodePoint(...output)
  } catch {
    return null
  }
}

export const punycodeFromString = defineTextFunction({
  name: 'punycode_from_string',
  result: 'string',
  text: (text) => punycodeEncode(text) ?? '',
})

export const punycodeToString = defineTextFunction({
  name: 'punycode_to_string',
  result: 'string',
  text: (text) => punycodeDecode(text) ?? '',
})

// IDNA's label separators: '.', and the ideographic, fullwidth and halfwidth full stops
const DOMAIN_DOTS = /[.\u3002\uff0e\uff61]/

/**
 * punycode_domain_to_string: each label with a non-ASCII character becomes `xn--` + its
 * punycode, labels are joined by '.'; as the documentation's examples show, no IDNA mapping
 * (case and spaces are kept), which is why Node's url.domainToASCII() is not used. "" on failure.
 */
export function punycodeDomainEncode(domain: string): string {
  const labels: string[] = []
  for (const label of domain.split(DOMAIN_DOTS)) {
    if (!/[^\x00-\x7f]/.test(label)) {
      labels.push(label)
      continue
    }
    const encoded = punycodeEncode(label)
    if (encoded === null) return ''
    labels.push(`xn--${encoded}`)
  }
  return labels.join('.')
}

/** punycode_domain_from_string: each `xn--` label decoded; "" when one is not valid punycode. */
export function punycodeDomainDecode(encoded: string): string {
  const labels: string[] = []
  for (const label of encoded.split('.')) {
    if (!/^xn--/i.test(label)) {
      labels.push(label)
      continue
    }
    const decoded = punycodeDecode(label.slice(4))
    if (decoded === null) return ''
    labels.push(decoded)
  }
  return labels.join('.')
}

export const punycodeDomainToString = defineTextFunction({
  name: 'punycode_domain_to_string',
  result: 'string',
  text: (text) => punycodeDomainEncode(text),
})

export const punycodeDomainFromString = defineTextFunction({
  name: 'punycode_domain_from_string',
  result: 'string',
  text: (text) => punycodeDomainDecode(text),
})
